"""Training memory computed from the architecture: the tiny Llama by hand, and the
measured peaks on Qwen2.5-7B."""

import pytest

from dfil.cost.archs import ARCHS
from dfil.cost.flops import shape
from dfil.cost.memory import GIB, activation_bytes_per_token, training_memory, weight_bytes
from tinymodel import TINY_LLAMA

TINY = shape(TINY_LLAMA)


def test_tiny_activations_by_hand():
    # bf16 x (norm and projection inputs 4 x 32 + LoRA dropout copies of q's and v's input
    # 2 x 32 + q, k, v, attention output 32 + 16 + 16 + 32 + MLP 4 x 64) = 2 x 544.
    assert activation_bytes_per_token(TINY, ("q", "v")) == 1088
    m = training_memory(TINY, tokens=10, targets=("q", "v"), r=4)
    assert m.weights == 2 * 21_664  # the bare decoder, no LM head
    assert m.lora == 16 * 896  # fp32 weight, gradient and two AdamW moments
    assert m.activations == 2 * 10_880 + 10_880  # two layers kept + one rebuilt in backward
    ckpt = training_memory(TINY, tokens=10, targets=("q", "v"), r=4, checkpointing=True)
    assert ckpt.activations == 2 * (2 * 32 * 10) + 2 * 10_880


def test_nf4_weights_by_hand():
    # 18,432 projection weights at 4.127 bits, embeddings and norms (3,232) in bf16.
    assert weight_bytes(TINY, quantized=True) == pytest.approx(18_432 * 4.127 / 8 + 6_464)


@pytest.mark.parametrize("batch, measured_gib", [(8, 19.3), (32, 35.8)])
def test_computed_memory_is_within_5_percent_of_issue_25s_measured_peaks(batch, measured_gib):
    # H100, Qwen2.5-7B architecture, LoRA q,v r16, bf16, ~120-token prompts.
    m = training_memory(shape(ARCHS["qwen2.5-7b"]), batch * 120, ("q", "v"), 16)
    assert m.total / GIB == pytest.approx(measured_gib, rel=0.05)
