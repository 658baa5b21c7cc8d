"""The projection: MFU from a measured throughput, a tiny cell's GPU-seconds by hand, and
the per-class totals."""

import pytest

from dfil.cost.archs import ARCHS
from dfil.cost.flops import linear_params, lora_params, shape, train_flops
from dfil.cost.project import CellWork, by_class, mfu, mfu_at, project
from dfil.cost.rates import MEASURED, PEAK_BF16
from tinymodel import TINY_LLAMA

QWEN7B = shape(ARCHS["qwen2.5-7b"])
#: F_ref: this package's training FLOPs per token of the measured setup.
F_REF = train_flops(QWEN7B, 120, lora_params(QWEN7B, ("q", "v"), 16))


@pytest.mark.parametrize("key, stated", [(("dfil", 8), 22.5), (("dfil", 32), 44.5),
                                         (("plain", 8), 22.1), (("plain", 32), 42.5)])
def test_the_measured_figures_are_transcribed_with_their_6n_mfu(key, stated):
    # The measured MFU: tokens/s x 6N / H100's 989.4 TFLOP/s, N = 7.07e9 (Qwen2.5-7B less
    # its input embedding: the projections, norms, biases and the LM head).
    th = MEASURED[key]
    assert (th.where, th.when, th.gpu) == ("an NVIDIA H100 80GB HBM3", "2026-11-26", "h100")
    n = 7_615_616_512 - 152_064 * 3584
    assert th.tokens_per_s * 6 * n / PEAK_BF16["h100"] * 100 == pytest.approx(stated, abs=0.1)
    # Under this package's ~4N rule the same throughput is a lower MFU.
    assert mfu(th) == pytest.approx(th.tokens_per_s * F_REF / 989.4e12)
    assert mfu(th) < stated / 100


def test_mfu_is_linear_between_measured_batches_and_capped_outside():
    at = {b: mfu_at("dfil", b) / F_REF * 989.4e12 for b in (4, 8, 16, 24, 32, 64)}
    # As tokens/s of the measured setup: 5,239 at 8, 10,365 at 32, linear between.
    assert at[4] == pytest.approx(5239) and at[8] == pytest.approx(5239)
    assert at[16] == pytest.approx(5239 + 5126 / 3)
    assert at[24] == pytest.approx(8656.333333)
    assert at[32] == pytest.approx(10365) and at[64] == pytest.approx(10365)
    with pytest.raises(ValueError, match="unknown trainer 'fast'"):
        mfu_at("fast", 8)
    with pytest.raises(ValueError, match="trainer 'plain' has no measurement"):
        mfu_at("plain", 8, {})


def tiny_work(**fields) -> CellWork:
    base = dict(key="tiny", size="small", arch=TINY_LLAMA,
                examples={"train": 10, "val": 4, "test": 6},
                prompt_tokens={"train": 3, "val": 3, "test": 3}, longest=3, epochs=2,
                batch_size=8, lora_targets=("q", "v"), lora_r=4)
    return CellWork(**{**base, **fields})


def test_tiny_cell_projection_by_hand():
    c = project(tiny_work(), "h100", "plain")
    # Training 2 epochs x 10 examples x 3 tokens x 80,896; validation 2 x 4 x 3 x 39,168;
    # evaluation of val and test (4 + 6) x 3 x 39,168 (see test_flops).
    assert c.train_flops == 2 * 10 * 3 * 80_896 + 2 * 4 * 3 * 39_168
    assert c.eval_flops == 10 * 3 * 39_168
    # Seconds: FLOPs / (tokens/s x F_ref), training at the plain loop's measured batch-8
    # rate (5,164 tokens/s), forward passes at batch 32's (9,911); each job also reads the
    # 21,664 bf16 weights at 1 GB/s.
    load = 2 * 21_664 / 1e9
    assert c.train_s == pytest.approx(2 * 10 * 3 * 80_896 / (5164 * F_REF)
                                      + 2 * 4 * 3 * 39_168 / (9911 * F_REF) + load)
    assert c.eval_s == pytest.approx(10 * 3 * 39_168 / (9911 * F_REF) + load)


def test_a_pack_of_three_against_three_solo_runs_by_hand():
    solo = project(tiny_work(), "h100")
    pack = project(tiny_work(), "h100", seeds=3)
    # The same FLOPs as three solo runs; the training steps hold 3 x 8 = 24 sequences, at
    # the dfil trainer's tokens/s there: 5,239 + (10,365 - 5,239) x 16/24 = 8,656.33.
    assert pack.train_flops == pytest.approx(3 * solo.train_flops)
    load = 2 * 21_664 / 1e9
    train, val = 2 * 10 * 3 * 80_896, 2 * 4 * 3 * 39_168
    assert solo.train_s == pytest.approx(train / (5239 * F_REF) + val / (10365 * F_REF)
                                         + load)
    assert pack.train_s == pytest.approx(3 * train / (8656.333333 * F_REF)
                                         + 3 * val / (10365 * F_REF) + load)
    # One weights' load for the pack; three evaluation jobs, each with its own.
    assert pack.eval_s == pytest.approx(3 * solo.eval_s)
    assert (pack.seeds, pack.memory.lora) == (3, 3 * solo.memory.lora)
    assert pack.memory.weights == solo.memory.weights
    with pytest.raises(ValueError, match="at least one seed, not 0"):
        project(tiny_work(), "h100", seeds=0)


def test_zero_shot_trains_nothing_and_scores_every_option():
    s = shape(TINY_LLAMA)
    c = project(tiny_work(epochs=0, options=8, lora_targets=()), "h100")
    head = 2 * 32 * 96
    per_prompt = 3 * 2 * linear_params(s) + 3 * 512 + head + 8 * 2 * (
        2 * linear_params(s) + 512 + head)
    assert c.train_s == 0 and c.train_flops == 0
    assert c.eval_flops == pytest.approx(10 * per_prompt)


def test_a_frozen_backbone_runs_the_training_set_forward_once():
    c = project(tiny_work(lora_targets=(), epochs=20), "h100")
    assert c.train_flops == 10 * 3 * (2 * 18_432 + 512) + 4 * 3 * (2 * 18_432 + 512)


def test_class_totals_add_up():
    costs = [project(tiny_work(key=f"c{i}", size=s), "h100") for i, s in
             enumerate(["small", "small", "7b"])]
    classes = by_class(costs, {"small": "h100", "7b": "h200"})
    assert classes["small"].cells == 2 and classes["7b"].gpu == "h200"
    assert classes["small"].train_h == pytest.approx(2 * costs[0].train_s / 3600)
    assert classes["small"].longest_train_h == pytest.approx(costs[0].train_s / 3600)
    # A pack counts its seeds as cells; its longest evaluation is one seed's.
    pack = project(tiny_work(key="p", size="small"), "h100", seeds=3)
    packed = by_class([pack], {"small": "h100"})["small"]
    assert (packed.cells, packed.trained) == (3, 3)
    assert packed.longest_train_h == pytest.approx(pack.train_s / 3600)
    assert packed.longest_eval_h == pytest.approx(costs[0].eval_s / 3600)


def test_unknown_gpu_is_named():
    with pytest.raises(ValueError, match="unknown GPU 'v100'"):
        project(tiny_work(), "v100")
