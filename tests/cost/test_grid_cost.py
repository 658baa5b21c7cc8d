"""The paper grid's cells as the projection's input, the resource proposal's rules, and
`dfil grid cost --config config/paper.yaml`."""

from pathlib import Path

import pytest

from dfil.cli import main
from dfil.config.grid import load_grid_files
from dfil.cost.archs import ARCHS
from dfil.cost.cells import cell_work, splits
from dfil.cost.memory import GIB
from dfil.cost.project import CellWork
from dfil.cost.table import propose
from dfil.util.errors import ConfigError
from tinymodel import TINY_LLAMA

PAPER = Path(__file__).resolve().parents[2] / "config" / "paper.yaml"


@pytest.fixture(scope="module")
def paper():
    return load_grid_files([PAPER])


def catalogued(cell) -> dict:
    """The offline catalogue's shapes of a cell's backbone (nothing is fetched here)."""
    return ARCHS[cell.config["model"]["backbone"]["name"]]


def work(grid, key):
    cell = grid.cell(key)
    return cell_work(cell.key, cell.size, cell.config, catalogued(cell))


def test_a_full_frog_cell_trains_on_1636_and_is_scored_on_every_set(paper):
    w = work(paper, "frog/qwen2.5-7b/dfil/lam0.1/nfull/qure/seed42")
    assert w.examples == {"train": 1636, "val": 408, "test": 2044, "compositional": 900,
                          "csmc": 400, "entailment": 2688, "ipr": 40, "naturalistic": 320,
                          "qure": 401}
    assert w.prompt_tokens["train"] == 142.5 and w.prompt_tokens["csmc"] == 79.7
    assert (w.epochs, w.batch_size, w.lora_targets, w.longest) == (20, 8, ("q", "v"), 171)
    assert w.arch == ARCHS["qwen2.5-7b"] and w.size == "7b"


def test_few_shot_zero_shot_quantized_and_cross_task_cells(paper):
    few = work(paper, "frog/qwen2.5-7b/dfil+fewshot/lam0.5/n16/qure/seed42")
    assert few.examples["train"] == 16 and few.examples["val"] == 408
    zero = work(paper, "frog/qwen2.5-7b/zero_shot/lamna/nfull/na/seedna")
    assert zero.epochs == 0 and zero.options == 8
    assert set(zero.examples) == {"train", "val", "test"}  # no probes, no QuRe
    big = work(paper, "frog/qwen2.5-72b/dfil/lam0.1/nfull/qure/seed42")
    assert big.quantized and big.size == "72b-4bit"
    sts = work(paper, "sts22/phi-3.5-mini/dfil/lam0.5/nfull/uniform/seed42")
    assert sts.examples == {"train": 1392, "val": 348, "test": 197}
    assert sts.lora_targets == ("q", "k", "v", "o") and sts.longest == 256
    bs64 = work(paper, "frog/qwen2.5-1.5b/dfil+bs64/lam0.5/nfull/qure/seed42")
    assert bs64.batch_size == 64


def test_ordinal_standin_splits_are_the_generators():
    from dfil.data.synthetic import ORDINAL_STANDIN_POOL, ORDINAL_STANDIN_TEST

    assert splits("ordinal_standin", None) == {
        "train": round(0.8 * ORDINAL_STANDIN_POOL), "val": ORDINAL_STANDIN_POOL // 5,
        "test": ORDINAL_STANDIN_TEST}
    assert splits("ordinal_standin", 32) == {"train": 32, "val": 200, "test": 500}


def test_unknown_task_is_named():
    with pytest.raises(ConfigError, match="task 'nli': no split sizes"):
        splits("nli", None)


def test_proposal_turns_checkpointing_on_where_an_h100_needs_it(paper):
    works = [cell_work(c.key, c.size, c.config, catalogued(c)) for c in paper.cells.values()]
    proposals = propose(works)
    assert {s: (p.gpu_model, p.checkpointing) for s, p in proposals.items()} == {
        "small": ("h100", False), "7b": ("h100", False), "14b": ("h100", False),
        "32b": ("h100", True), "72b-4bit": ("h100", True)}
    assert proposals["32b"].memory_plain.total / GIB > 0.85 * 79.1
    assert proposals["32b"].memory.total / GIB < 0.85 * 79.1
    # Host memory: 16 GB + the largest backbone's bf16 decoder, to 8 GB, at least 32 GB.
    assert proposals["72b-4bit"].mem_mb == 160_000  # 16 + 144.3 GB
    assert proposals["small"].mem_mb == 32_000
    assert all(p.train_runtime % 15 == 0 for p in proposals.values())


def test_runtime_is_the_longest_job_with_its_margin():
    tiny = CellWork(key="t", size="x", arch=TINY_LLAMA,
                    examples={"train": 10, "val": 4, "test": 6},
                    prompt_tokens={"train": 3, "val": 3, "test": 3}, longest=3, epochs=2,
                    batch_size=8, lora_r=4)
    # Seconds of work: 1.5 x ~0 + 10 min start-up, rounded up to 15 minutes.
    assert propose([tiny])["x"].train_runtime == 15


def test_the_cost_command_prints_the_table_and_the_proposal(capsys):
    assert main(["grid", "cost", "--config", str(PAPER), "--catalogue"]) == 0
    out = capsys.readouterr().out
    total = next(line for line in out.splitlines() if line.startswith("total"))
    assert total.split()[1:3] == ["292", "290"]  # cells, of which trained (2 zero-shot)
    rows = [line.split() for line in out.splitlines()
            if line.split()[:1] and line.split()[0] in ("small", "7b", "14b", "32b", "72b-4bit")
            and "GiB" in line]
    assert len(rows) == 5
    assert float(total.split()[-1]) == pytest.approx(sum(float(r[6]) for r in rows), abs=0.3)
    assert "32b: {gpu: 1, gpu_model: h100" in out and "gradient checkpointing" in out


def test_proposals_keep_the_grids_gpu_and_fit_the_sites_nodes(paper):
    """On a site of two-A100 nodes with 16 GB and 8 CPUs, a grid asking a100: the small
    class gets the a100, 16000 MB and 8 CPUs; the 7b class's bf16 weights (15.0 GB) and
    4 GB need 19010 MB: no fit, said. Without a site, the grid's h100 stays."""
    from dfil.cluster.nodes import parse_sinfo
    from dfil.cost.table import format_proposals

    works = [cell_work(c.key, c.size, c.config, catalogued(c)) for c in paper.cells.values()]
    nodes = parse_sinfo("standard* (null) (null) 2-00:00:00 16000 8\n"
                        "accel gpu:a100:2(S:0) (null) 2-00:00:00 16000 8\n")
    proposals = propose(works, models={s: "a100" for s in ("small", "7b")}, nodes=nodes)
    small, big = proposals["small"], proposals["7b"]
    assert (small.gpu_model, small.mem_mb, small.cpus_per_task, small.misfit) == (
        "a100", 16000, 8, None)
    assert big.misfit == ("the weights once and 4000 MB need 19010 MB of host memory > the "
                          "16000 MB of this site's largest node with a100 GPUs")
    text = format_proposals(proposals)
    assert "  small: {gpu: 1, gpu_model: a100, mem_mb: 16000, cpus_per_task: 8, " in text
    assert "site: a100 nodes of 16000 MB and 8 CPUs (sinfo)" in text
    assert "  7b: none fits on a100: the weights once" in text
    assert "h100" not in text.split("7b:")[1].split("\n")[0]
    # a site without the grid's GPU type fits nothing of it; a class naming none takes
    # the site's
    h100 = propose(works, models={"small": "h100"}, nodes=nodes)["small"]
    assert h100.misfit == "no node of this site has a h100 GPU (its GPU types: a100)"
    assert propose(works, nodes=nodes)["small"].gpu_model == "a100"
    # a GPU too small for the class's step even with checkpointing: none fits
    fits = propose(works, models={"32b": "a100", "72b-4bit": "a100"})
    assert fits["32b"].misfit is None and fits["32b"].checkpointing


def test_a_grid_gpu_too_small_for_the_step_fits_nothing():
    from dfil.cost.memory import Memory
    from dfil.cost.table import _gpu

    big = Memory(weights=70 * GIB, lora=0.0, activations=10 * GIB)  # 80 GiB
    assert _gpu(big, big, "a100") == ("a100", True, False)  # over 85% of 79.5 GiB
    assert _gpu(big, big, None) == ("h200", False, True)  # under 85% of 139.8 GiB
    # a class naming no GPU takes the site's smallest that fits
    small = Memory(weights=10 * GIB, lora=0.0, activations=5 * GIB)
    assert _gpu(small, small, None, frozenset({"h200", "a100", "mi300"})) == (
        "a100", False, True)
    assert _gpu(big, big, None, frozenset({"a100"})) == ("a100", True, False)
