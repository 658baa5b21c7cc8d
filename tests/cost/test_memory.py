"""Training memory computed from the architecture: the tiny Llama by hand, and the
measured peaks on Qwen2.5-7B."""

import pytest

from dfil.cost.archs import ARCHS
from dfil.cost.flops import shape
from dfil.cost.memory import (
    GIB,
    activation_bytes_per_token,
    seeds_that_fit,
    training_memory,
    weight_bytes,
)
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


@pytest.mark.parametrize("batch, longest, measured_gib", [(8, 1.4236, 34.7), (32, 2.0697, 59.1)])
def test_computed_memory_is_within_3_percent_of_the_measured_peaks(batch, longest, measured_gib):
    # benchmarks/train_throughput.py --paths dfil,plain on an NVIDIA H100 80GB HBM3,
    # 2026-11-26: Qwen2.5-7B shapes, LoRA q,v r16, prompts ~N(120, 30) padded to a batch's
    # longest (expected: 120 + 30 x the mean largest of `batch` standard normals), both
    # paths' models resident: a second decoder's weights beside one step.
    s = shape(ARCHS["qwen2.5-7b"])
    m = training_memory(s, round(batch * (120 + 30 * longest)), ("q", "v"), 16)
    assert (m.total + weight_bytes(s)) / GIB == pytest.approx(measured_gib, rel=0.03)


def test_a_pack_holds_the_weights_once_and_each_seeds_state_and_batch():
    one = training_memory(TINY, tokens=10, targets=("q", "v"), r=4)
    three = one.packed(3)
    assert three.weights == one.weights and three.lora == 3 * one.lora
    assert three.activations == 3 * one.activations
    # 43,328 B of weights + 14,336 B of LoRA state + 32,640 B of activations a seed.
    assert three.activations == training_memory(TINY, 30, ("q", "v"), 4).activations
    assert seeds_that_fit(one, usable_gib=200_000 / GIB) == 2
    assert seeds_that_fit(one, usable_gib=1e-9, most=4) == 1
