"""dfil.cost.measured: finished cells' benchmark files beside their projection."""

from __future__ import annotations

import pytest

from dfil.cost.measured import format_measured, job_seconds, measured_by_class
from dfil.cost.project import CellCost

HEAD = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def bench(root, rule, key, *seconds):
    path = root / rule / f"{key}.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEAD + "".join(f"{s}\t0:00:01\t1\t1\t1\t1\t0\t0\t90\t{s}\n" for s in seconds))


def cost(key, size, train_s, eval_s):
    return CellCost(key, size, 0.0, 0.0, train_s, eval_s, memory=None)


def test_job_seconds_is_the_mean_of_the_repeats(tmp_path):
    bench(tmp_path, "train_cell", "a/seed1", 10.0, 20.0)
    assert job_seconds(tmp_path / "train_cell" / "a/seed1.tsv") == 15.0
    assert job_seconds(tmp_path / "missing.tsv") is None
    (tmp_path / "bad.tsv").write_text("no columns here\n")
    assert job_seconds(tmp_path / "bad.tsv") is None


def test_only_cells_with_both_jobs_timed_count_beside_their_own_projection(tmp_path):
    bench(tmp_path, "train_cell", "x/seed1", 3600.0)
    bench(tmp_path, "evaluate_cell", "x/seed1", 360.0)
    bench(tmp_path, "untrained_cell", "z/seedna", 1.0)  # zero-shot: no training job
    bench(tmp_path, "evaluate_cell", "z/seedna", 719.0)
    bench(tmp_path, "train_cell", "y/seed1", 100.0)  # not evaluated yet: left out
    costs = [cost("x/seed1", "7b", 1800.0, 180.0), cost("y/seed1", "7b", 1.0, 1.0),
             cost("z/seedna", "cpu", 0.0, 360.0)]
    m = measured_by_class(costs, tmp_path)
    assert (m["7b"].cells, m["7b"].train_h, m["7b"].eval_h) == (1, 1.0, pytest.approx(0.1))
    assert m["7b"].projected_h == pytest.approx(0.55)
    assert m["cpu"].cells == 1 and m["cpu"].eval_h == pytest.approx(719 / 3600)
    text = format_measured(m, {"7b": 1, "cpu": 0})
    row = next(line for line in text.splitlines() if line.startswith("7b"))
    assert row.split()[1:7] == ["1", "1.000", "0.100", "1.100", "0.550", "2.00"]
    assert row.endswith("GPU-hours")
    assert next(line for line in text.splitlines() if line.startswith("cpu")).endswith(
        "CPU hours (no GPU asked)")


def test_nothing_finished_says_so():
    assert "no finished cell" in format_measured({}, {})


def test_a_packed_cell_is_timed_by_its_share_of_its_packs_job(tmp_path):
    """Two seeds of a pack: 7,200 s for the pack, 36 s each for their own (summary) jobs:
    each cell's training is 3,600 + 36 s; a pack without its job timed counts nothing."""
    bench(tmp_path, "train_pack", "p", 7200.0)
    for seed in (1, 2):
        bench(tmp_path, "train_cell", f"p/seed{seed}", 36.0)
        bench(tmp_path, "evaluate_cell", f"p/seed{seed}", 360.0)
    bench(tmp_path, "train_cell", "q/seed1", 36.0)  # its pack's job not timed: left out
    bench(tmp_path, "evaluate_cell", "q/seed1", 360.0)
    costs = [cost(f"p/seed{s}", "7b", 1800.0, 180.0) for s in (1, 2)] + [
        cost("q/seed1", "7b", 1.0, 1.0)]
    packs = {"p": ["p/seed1", "p/seed2"], "q": ["q/seed1", "q/seed2"]}
    m = measured_by_class(costs, tmp_path, packs)
    assert m["7b"].cells == 2
    assert m["7b"].train_h == pytest.approx(2 * 3636 / 3600)
    assert m["7b"].projected_h == pytest.approx(2 * 1980 / 3600)
