"""Table ablation_detail's trainable counts on Qwen2.5-1.5B, built on the meta device."""

import pytest
import torch
from archs import arch
from transformers import AutoConfig, AutoModel

from dfil.config.cell import LoraConfig, ModelConfig
from dfil.model import apply_lora, build_heads, count_trainable

PAPER_COUNTS = {  # Table ablation_detail
    "dfil": 2_974_489,
    "finetune": 2_577_672,
    "dfil_only": 2_575_889,
    "no_mf": 2_575_889,
    "unordered_mf": 2_575_889,
}


@pytest.fixture(scope="module")
def lora_qwen():
    spec = arch("qwen2.5-1.5b")
    config = AutoConfig.for_model(spec.pop("model_type"), **spec)
    with torch.device("meta"):
        model = AutoModel.from_config(config)
        model = apply_lora(model, LoraConfig(r=16, alpha=32, targets=("q", "v")))
    return model


def test_lora_qv_r16_count(lora_qwen):
    # 28 layers x 16 x ((1536 + 1536) + (1536 + 256)) = 2,179,072.
    assert count_trainable(lora_qwen) == 2_179_072


@pytest.mark.parametrize("method", sorted(PAPER_COUNTS))
def test_trainable_counts_match_table_ablation_detail(lora_qwen, method):
    with torch.device("meta"):
        heads = build_heads(ModelConfig(method=method), d=1536)
    assert count_trainable(lora_qwen) + count_trainable(heads) == PAPER_COUNTS[method]


def test_numhead_and_attention_pool_sizes_at_7b():
    # Sec. 4.3: NumHead is 925,185 at d=3584; App. E.2: attention pooling adds d params.
    with torch.device("meta"):
        dfil = build_heads(ModelConfig(method="dfil"), d=3584)
        attn = build_heads(ModelConfig(method="attn_pool"), d=3584)
    assert count_trainable(dfil.numeric) == 925_185
    assert count_trainable(attn) - count_trainable(dfil) == 3584


def test_ft_compose_freezes_the_mf():
    heads = build_heads(ModelConfig(method="ft_compose"), d=16)
    assert all(not p.requires_grad for p in heads.mf.parameters())
    assert heads.numeric is not None and heads.main is not None
