"""Parameter counts and FLOPs per token, worked by hand on the tests' tiny Llama and checked
against the published totals of the paper's backbones."""

import pytest

from dfil.cost.archs import ARCHS, arch
from dfil.cost.flops import (
    attention_flops,
    decoder_params,
    forward_flops,
    linear_params,
    lora_params,
    shape,
    total_params,
    train_flops,
)
from tinymodel import TINY_LLAMA

TINY = shape(TINY_LLAMA)  # d 32, ff 64, 2 layers, 4 heads of 8, 2 kv heads, vocab 96


def test_tiny_counts_by_hand():
    # Per layer: q 32x32 + k, v 32x16 each + o 32x32 = 3,072; MLP 3 x 32 x 64 = 6,144.
    assert linear_params(TINY) == 2 * (3072 + 6144) == 18_432
    # + embeddings and the untied LM head 2 x 96 x 32 + five norms of 32.
    assert total_params(TINY) == 18_432 + 6_144 + 160 == 24_736
    assert decoder_params(TINY) == 24_736 - 3_072
    # LoRA r4: q 4 x (32 + 32) + v 4 x (32 + 16) = 448 per layer.
    assert lora_params(TINY, ("q", "v"), 4) == 896
    assert lora_params(TINY, ("q", "k", "v", "o"), 4) == 2 * (256 + 192 + 192 + 256)


def test_tiny_flops_by_hand():
    # n = 3: mean causal context 2; QK^T and AV: 2 x 2 x layers 2 x d_attn 32 x 2 = 512.
    assert attention_flops(TINY, 3) == 512
    # forward 2N + 2 N_lora + A = 36,864 + 1,792 + 512.
    assert forward_flops(TINY, 3, 896) == 39_168
    # backward: frozen 2N + LoRA 4 N_lora + 2.5 A = 36,864 + 3,584 + 1,280.
    assert train_flops(TINY, 3, 896) == 39_168 + 41_728 == 80_896
    assert train_flops(TINY, 3, 896, checkpointing=True) == 80_896 + 39_168


@pytest.mark.slow
def test_tiny_counts_match_the_model_transformers_builds():
    torch = pytest.importorskip("torch")
    from transformers import AutoConfig, AutoModelForCausalLM

    from dfil.config.cell import LoraConfig
    from dfil.model import apply_lora, count_trainable

    spec = dict(TINY_LLAMA)
    config = AutoConfig.for_model(spec.pop("model_type"), **spec)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
        assert sum(p.numel() for p in model.parameters()) == total_params(TINY)
        lora = apply_lora(model, LoraConfig(r=4, alpha=8, targets=("q", "v")))
    assert count_trainable(lora) == 896


#: The parameter counts the backbones' model cards publish (safetensors totals).
PUBLISHED = {"qwen2.5-1.5b": 1_543_714_304, "qwen2.5-7b": 7_615_616_512,
             "qwen2.5-14b": 14_770_033_664, "qwen2.5-32b": 32_763_876_352,
             "qwen2.5-72b": 72_706_203_648, "mistral-7b": 7_248_023_552,
             "llama-3.1-8b": 8_030_261_248, "phi-3.5-mini": 3_821_079_552,
             "smollm2-135m": 134_515_008}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_configs_give_the_published_parameter_counts(name):
    assert total_params(shape(ARCHS[name])) == PUBLISHED[name]


def test_phi3_adapts_its_fused_qkv_once():
    phi = shape(arch("microsoft/Phi-3.5-mini-instruct"))
    # 32 layers x 16 x (3072 in + 3 x 3072 out) for q,k,v; o adds 16 x (3072 + 3072).
    assert lora_params(phi, ("q", "v"), 16) == 32 * 16 * (3072 + 9216)
    assert lora_params(phi, ("q", "k", "v", "o"), 16) == 32 * 16 * (3072 + 9216 + 6144)


def test_unknown_architecture_and_missing_fields_are_named():
    with pytest.raises(ValueError, match="unknown architecture 'gpt-5'"):
        arch("gpt-5")
    with pytest.raises(ValueError, match="architecture lacks 'intermediate_size'"):
        shape({"hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2,
               "vocab_size": 4})
