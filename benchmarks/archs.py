"""Published architecture configs of the paper's backbones (shapes only, no weights).

Used to build a backbone with random weights (tests, parameter counts on the meta device,
benchmarks) without downloading anything. Values are the public ``config.json`` fields that
set parameter shapes and speed.
"""

from __future__ import annotations

ARCHS: dict[str, dict] = {
    "qwen2.5-1.5b": dict(
        model_type="qwen2", hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
        num_attention_heads=12, num_key_value_heads=2, vocab_size=151936,
        max_position_embeddings=131072, tie_word_embeddings=True, rms_norm_eps=1e-6,
        rope_theta=1000000.0),
    "qwen2.5-7b": dict(
        model_type="qwen2", hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
        num_attention_heads=28, num_key_value_heads=4, vocab_size=152064,
        max_position_embeddings=131072, tie_word_embeddings=False, rms_norm_eps=1e-6,
        rope_theta=1000000.0),
    "qwen2.5-72b": dict(
        model_type="qwen2", hidden_size=8192, intermediate_size=29568, num_hidden_layers=80,
        num_attention_heads=64, num_key_value_heads=8, vocab_size=152064,
        max_position_embeddings=131072, tie_word_embeddings=False, rms_norm_eps=1e-6,
        rope_theta=1000000.0),
    "smollm2-135m": dict(
        model_type="llama", hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
        num_attention_heads=9, num_key_value_heads=3, vocab_size=49152,
        max_position_embeddings=8192, tie_word_embeddings=True, rms_norm_eps=1e-5,
        rope_theta=100000.0),
    "tiny-llama": dict(
        model_type="llama", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, vocab_size=128,
        max_position_embeddings=1024),
}


def arch(name: str) -> dict:
    """A copy of architecture ``name``; ``ValueError`` naming the known ones otherwise."""
    if name not in ARCHS:
        raise ValueError(f"unknown architecture {name!r}; expected one of {sorted(ARCHS)}")
    return dict(ARCHS[name])
