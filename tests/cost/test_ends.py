"""The lines under the cost table: each trainer's GPU-hours with packs and one seed per
job, a pack's step MFU, every measurement with its device and date; and `dfil grid cost`
with packs on and off."""

from pathlib import Path

import pytest

from dfil.cli import main
from dfil.cost.ends import ENDS, format_totals

PAPER = Path(__file__).resolve().parents[2] / "config" / "paper.yaml"


def test_the_ends_are_the_two_measured_trainers_slower_first():
    assert ENDS == {"pessimistic": "plain", "optimistic": "dfil"}


def test_the_totals_name_each_trainer_the_pack_step_and_every_measurement():
    hours = {("dfil", True): 80.04, ("dfil", False): 137.6, ("plain", True): 86.3,
             ("plain", False): 140.0}
    lines = format_totals(hours, "dfil", True, excluded=2).splitlines()
    assert lines[0] == "the table above: trainer dfil, packs (projected), excluding 2 cells"
    assert lines[1] == ("trainer dfil: 137.6 GPU-h one seed per job, 80.0 GPU-h projected "
                        "with each configuration's seeds in packs")
    # MFU by this package's rule: 5,239 and 10,365 tokens/s are 13.9% and 27.5%; a pack of
    # K at batch 8 steps at K x 8 sequences, linear between: K=2 13.9 + 13.6 x 8/24.
    assert lines[3].endswith("K=1 13.9%, K=2 18.4%, K=3 22.9%, K=4 27.5%")
    sources = [line for line in lines if line.startswith("  ")]
    assert len(sources) == 4
    assert sources[0].startswith(
        "  dfil: 5,239 tokens/s, the project's training step (dfil.train.step), batch 8; "
        "measured on an NVIDIA H100 80GB HBM3, 2026-11-26; benchmarks/train_throughput.py")
    assert sources[3].startswith("  plain: 9,911 tokens/s, a plain transformers+peft loop")
    for word in ("rebuild", "session", "unmeasured", "packed path"):
        assert word not in "\n".join(lines)


def totals(argv, capsys) -> tuple[float, list[str]]:
    assert main(["grid", "cost", "--config", str(PAPER), "--catalogue", *argv]) == 0
    lines = capsys.readouterr().out.splitlines()
    total = next(line for line in lines if line.startswith("total"))
    return float(total.split()[-1]), lines


def test_packs_on_and_off_match_their_lines_and_packs_cost_less(capsys):
    solo_total, lines = totals(["--pack", "off"], capsys)
    assert "the table above: trainer dfil, one seed per job" in lines
    dfil = next(line for line in lines if line.startswith("trainer dfil: "))
    # "trainer dfil: 137.6 GPU-h one seed per job, 82.8 GPU-h projected with each ..."
    solo, with_packs = (float(w) for w in dfil.split()[2:3] + dfil.split()[8:9])
    assert solo_total == pytest.approx(solo, abs=0.05)
    packed, lines = totals([], capsys)  # the default: as the grid's `pack` (paper: packs)
    assert "the table above: trainer dfil, packs (projected)" in lines
    assert packed == pytest.approx(with_packs, abs=0.05)
    assert packed < 0.65 * solo_total
