"""A tiny random Llama-architecture backbone config for tests (no download)."""

from dfil.config.cell import BackboneConfig, LoraConfig, ModelConfig

TINY_LLAMA = {
    "model_type": "llama",
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 96,
    "max_position_embeddings": 128,
    "pad_token_id": 0,
}


def tiny_config(method: str = "dfil", **overrides) -> ModelConfig:
    backbone = BackboneConfig(name="tiny-llama", arch=dict(TINY_LLAMA), init_seed=0,
                              tokenizer="char")
    fields = {"backbone": backbone, "lora": LoraConfig(r=4, alpha=8), **overrides}
    return ModelConfig(method=method, **fields)
