"""Published architecture configs of the paper's backbones (shapes only, no weights).

The public ``config.json`` fields that set parameter shapes and speed, one entry per
backbone of ``config/paper.yaml`` (instruct variants share their base model's shapes),
plus the embedded SmolLM2-135M and the tests' tiny Llama: the offline source for tests
and benchmarks (a backbone with random weights, parameter counts on the meta device),
and for the cost model only when asked (``--catalogue``); otherwise it reads a backbone's
fetched config.json or the grid's ``arch:``.
"""

from __future__ import annotations

from collections.abc import Mapping

_QWEN = dict(model_type="qwen2", max_position_embeddings=131072, rope_theta=1000000.0)
_MISTRAL = dict(
    model_type="mistral", hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
    num_attention_heads=32, num_key_value_heads=8, vocab_size=32768,
    max_position_embeddings=32768, tie_word_embeddings=False, rms_norm_eps=1e-5,
    rope_theta=1000000.0)
_LLAMA31_8B = dict(
    model_type="llama", hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
    num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
    max_position_embeddings=131072, tie_word_embeddings=False, rms_norm_eps=1e-5,
    rope_theta=500000.0)
_QWEN7B = dict(
    _QWEN, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
    num_attention_heads=28, num_key_value_heads=4, vocab_size=152064,
    tie_word_embeddings=False, rms_norm_eps=1e-6)

ARCHS: dict[str, dict] = {
    "qwen2.5-1.5b": dict(
        _QWEN, hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
        num_attention_heads=12, num_key_value_heads=2, vocab_size=151936,
        tie_word_embeddings=True, rms_norm_eps=1e-6),
    "qwen2.5-7b": _QWEN7B,
    "qwen2.5-7b-instruct": _QWEN7B,
    "qwen2.5-14b": dict(
        _QWEN, hidden_size=5120, intermediate_size=13824, num_hidden_layers=48,
        num_attention_heads=40, num_key_value_heads=8, vocab_size=152064,
        tie_word_embeddings=False, rms_norm_eps=1e-5),
    "qwen2.5-32b": dict(
        _QWEN, hidden_size=5120, intermediate_size=27648, num_hidden_layers=64,
        num_attention_heads=40, num_key_value_heads=8, vocab_size=152064,
        tie_word_embeddings=False, rms_norm_eps=1e-5),
    "qwen2.5-72b": dict(
        _QWEN, hidden_size=8192, intermediate_size=29568, num_hidden_layers=80,
        num_attention_heads=64, num_key_value_heads=8, vocab_size=152064,
        tie_word_embeddings=False, rms_norm_eps=1e-6),
    "mistral-7b": _MISTRAL,
    "mistral-7b-instruct": _MISTRAL,
    "llama-3.1-8b": _LLAMA31_8B,
    "llama-3.1-8b-instruct": _LLAMA31_8B,
    "phi-3.5-mini": dict(
        model_type="phi3", hidden_size=3072, intermediate_size=8192, num_hidden_layers=32,
        num_attention_heads=32, num_key_value_heads=32, vocab_size=32064,
        max_position_embeddings=131072, tie_word_embeddings=False, rms_norm_eps=1e-5,
        rope_theta=10000.0),
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

#: Hub ids of the paper's backbones -> their entry above.
MODEL_IDS = {
    "Qwen/Qwen2.5-1.5B": "qwen2.5-1.5b", "Qwen/Qwen2.5-7B": "qwen2.5-7b",
    "Qwen/Qwen2.5-7B-Instruct": "qwen2.5-7b-instruct", "Qwen/Qwen2.5-14B": "qwen2.5-14b",
    "Qwen/Qwen2.5-32B": "qwen2.5-32b", "Qwen/Qwen2.5-72B": "qwen2.5-72b",
    "mistralai/Mistral-7B-v0.3": "mistral-7b",
    "mistralai/Mistral-7B-Instruct-v0.3": "mistral-7b-instruct",
    "meta-llama/Llama-3.1-8B": "llama-3.1-8b",
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b-instruct",
    "microsoft/Phi-3.5-mini-instruct": "phi-3.5-mini",
    "embedded:smollm2-135m": "smollm2-135m",
}


def arch(name: str) -> dict:
    """A copy of architecture ``name`` (an entry name or a hub id); ``ValueError`` naming
    the known ones otherwise."""
    key = MODEL_IDS.get(name, name)
    if key not in ARCHS:
        raise ValueError(f"unknown architecture {name!r}; expected one of {sorted(ARCHS)} "
                         f"or a hub id of {sorted(MODEL_IDS)}")
    return dict(ARCHS[key])


def catalogue_arch(backbone: Mapping) -> dict | None:
    """The offline catalogue's shape of a grid's backbone entry, by its name or its hub
    id (:data:`MODEL_IDS`); None where the catalogue has neither."""
    names = (backbone.get("name", ""), MODEL_IDS.get(backbone.get("model_id", ""), ""))
    return next((dict(ARCHS[n]) for n in names if n in ARCHS), None)
