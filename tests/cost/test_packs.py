"""Packs: a configuration's seeds split by what the GPU holds, the paper's 7B cell one
seed per job at the measured rate, and the 72B 4-bit class in packs, by hand."""

from pathlib import Path

import pytest

from dfil.config.grid import load_grid_files
from dfil.cost.archs import ARCHS
from dfil.cost.cells import cell_work
from dfil.cost.flops import decoder_params, forward_flops, lora_params, shape, train_flops
from dfil.cost.memory import GIB, seeds_that_fit, training_memory
from dfil.cost.packs import configuration, pack_size, parts, project_packs, split
from dfil.cost.project import project
from dfil.cost.rates import MEASURED as MEASURED_TABLE

PAPER = Path(__file__).resolve().parents[2] / "config" / "paper.yaml"
QWEN7B = shape(ARCHS["qwen2.5-7b"])
#: This package's training FLOPs per token of the measured setup (120 tokens, LoRA q,v r16).
F_REF = train_flops(QWEN7B, 120, lora_params(QWEN7B, ("q", "v"), 16))


@pytest.fixture(scope="module")
def paper():
    return load_grid_files([PAPER])


def works(grid, prefix):
    return [cell_work(c.key, c.size, c.config, ARCHS[c.config["model"]["backbone"]["name"]])
            for k, c in grid.cells.items() if k.startswith(prefix)]


def test_seeds_split_evenly_into_the_fewest_packs():
    assert split(20, 6) == [5, 5, 5, 5]
    assert split(21, 6) == [6, 5, 5, 5]
    assert split(3, 10) == [3] and split(3, 1) == [1, 1, 1]
    assert configuration("frog/qwen2.5-7b/dfil/lam0.1/nfull/qure/seed42") == \
        "frog/qwen2.5-7b/dfil/lam0.1/nfull/qure"
    with pytest.raises(ValueError, match="not 0 and 6"):
        split(0, 6)


def test_a_configuration_split_in_parts_names_each_pack():
    """One pack: the configuration's name; several: /pack<i>of<n>, seeds in order."""
    assert parts("c", ["s1", "s2"], 6) == [("c", ["s1", "s2"])]
    assert parts("c", ["s1", "s2", "s3", "s4", "s5"], 2) == [
        ("c/pack1of3", ["s1", "s2"]), ("c/pack2of3", ["s3", "s4"]), ("c/pack3of3", ["s5"])]


def test_a_paper_7b_cell_one_seed_per_job_at_the_measured_rate(paper):
    w, = works(paper, "frog/qwen2.5-7b/dfil/lam0.1/nfull/qure/seed42")
    c = project(w, "h100", "dfil")
    n_lora = lora_params(QWEN7B, ("q", "v"), 16)
    # 20 epochs x 1,636 examples x 142.5 tokens at 5,239 tokens/s of the 120-token setup,
    # the FLOPs ratio of a 142.5-token prompt to a 120-token one (attention: +0.06%); 20
    # validation passes over 408 at batch 32's 10,365; the 15.2 GB decoder read at 1 GB/s.
    train = 20 * 1636 * 142.5 * train_flops(QWEN7B, 142.5, n_lora) / (5239 * F_REF)
    val = 20 * 408 * 142.5 * forward_flops(QWEN7B, 142.5, n_lora) / (10365 * F_REF)
    assert train == pytest.approx(20 * 1636 * 142.5 / 5239 * 1.0006, rel=1e-4)  # 890.5 s
    assert c.train_s == pytest.approx(train + val + 2 * decoder_params(QWEN7B) / 1e9)
    assert c.train_s / 60 == pytest.approx(16.0, abs=0.05)


def test_the_72b_4bit_class_in_packs_by_hand(paper):
    group = works(paper, "frog/qwen2.5-72b/")
    assert len(group) == 12 and all(w.quantized and w.checkpointing for w in group)
    s = shape(group[0].arch)
    # Per seed at batch 8 x 171 tokens, checkpointed: LoRA state 16 B x 32.8M = 0.49 GiB,
    # kept layer inputs 80 x 2 x 8,192 x 1,368 B = 1.67 GiB, one layer's activations twice
    # (rebuilt and the backward's working set) 2 x 371,712 x 1,368 B = 0.95 GiB: 3.11 GiB
    # on 36.06 GiB of NF4 weights; 85% of an H100's 79.1 GiB holds (67.24 - 36.06) / 3.11
    # = 10 seeds, so each configuration's 6 seeds are one pack.
    one = training_memory(s, 8 * 171, ("q", "v"), 16, quantized=True, checkpointing=True)
    assert seeds_that_fit(one, 79.1) == 10
    assert pack_size(group[0], "h100", 6) == 6
    packs = project_packs(group, {"72b-4bit": "h100"})
    assert [p.seeds for p in packs] == [6, 6]
    assert packs[0].memory.total / GIB == pytest.approx(36.06 + 6 * 3.105, abs=0.05)
    # A pack of 6 at batch 8 steps 48 sequences: capped at the batch-32 rate, 10,365.
    n_lora = lora_params(s, ("q", "v"), 16)
    train = 6 * 20 * 1636 * 142.5 * train_flops(s, 142.5, n_lora, True) / (10365 * F_REF)
    val = 6 * 20 * 408 * 142.5 * forward_flops(s, 142.5, n_lora) / (10365 * F_REF)
    assert packs[0].train_s == pytest.approx(train + val + 2 * decoder_params(s) / 1e9)
    solo = project(group[0], "h100")
    # Against six solo jobs: training at 5,239 / 10,365 = 0.51 of the time, validation the
    # same, one load in place of six.
    assert packs[0].train_s / (6 * solo.train_s) == pytest.approx(0.52, abs=0.005)
    # One seed per job: twelve jobs at the batch-8 rate.
    assert [c.seeds for c in project_packs(group, {"72b-4bit": "h100"}, pack=False)] == [1] * 12


def test_zero_shot_cells_are_never_packed(paper):
    zero = works(paper, "frog/qwen2.5-7b/zero_shot/")
    assert [c.train_s for c in project_packs(zero, {"7b": "h100"})] == [0.0]


def test_a_grid_packs_its_configurations_seeds_only_when_it_says_so(paper):
    """grid_packs: nothing without ``pack``; with it, each trained configuration of two or
    more seeds, split by what its class's GPU holds, named after its configuration."""
    from dfil.config.grid import Grid
    from dfil.cost.packs import grid_packs

    assert grid_packs(Grid({**paper.config, "pack": False})) == {}
    packed = Grid({**paper.config, "pack": True})
    packs = grid_packs(packed)
    keys = [k for ks in packs.values() for k in ks]
    assert len(keys) == len(set(keys))  # each seed in one pack
    for name, ks in packs.items():
        assert len(ks) >= 2 and {configuration(k) for k in ks} == {name.split("/pack")[0]}
    # a configuration in several packs: sizes differing by at most one (a part of one seed
    # trains alone)
    for config in {n.split("/pack")[0] for n in packs if "/pack" in n}:
        sizes = [len(ks) for n, ks in packs.items() if n.startswith(f"{config}/pack")]
        seeds = len([k for k in packed.cells if configuration(k) == config])
        assert max(sizes) - min(sizes) <= 1 and seeds - sum(sizes) in (0, 1)
    # zero-shot cells train nothing: never in a pack
    assert not any(packed.cells[k].config["model"]["method"] == "zero_shot" for k in keys)


def test_a_packed_cells_projection_is_its_share_of_its_packs(paper):
    """cell_shares: a cell alone keeps its own projection; a cell of a pack of K gets one
    K-th of the pack's training and its own evaluation."""
    from dfil.cost.packs import cell_shares

    ws = works(paper, "frog/qwen2.5-7b/dfil/lam0.1/nfull/qure/")
    assert len(ws) == 3
    gpus = {w.size: "h100" for w in ws}
    alone = cell_shares(ws, gpus, "dfil", MEASURED_TABLE, {})
    shared = cell_shares(ws, gpus, "dfil", MEASURED_TABLE, {"p": [w.key for w in ws]})
    whole = project(ws[0], "h100", "dfil", MEASURED_TABLE, seeds=3)
    assert alone[0] == project(ws[0], "h100", "dfil", MEASURED_TABLE)
    assert shared[0].train_s == pytest.approx(whole.train_s / 3)
    assert shared[0].eval_s == alone[0].eval_s


def test_the_cost_model_prices_the_packs_the_workflow_trains(paper):
    """project_packs and grid_packs split and name the paper grid's seeds alike: the
    priced packs of two or more seeds are the workflow's packs, by name."""
    from dfil.config.grid import Grid
    from dfil.cost.packs import grid_packs

    gpus = {size: "h100" for size in paper.config["resources"]}
    priced = {c.key: c.seeds for c in project_packs(works(paper, ""), gpus) if c.seeds > 1}
    trained = grid_packs(Grid({**paper.config, "pack": True}))
    assert priced == {name: len(keys) for name, keys in trained.items()}
