"""The projection as a range: each end's GPU-hours with the measurement behind it, the
current trainer unmeasured until a measurement is recorded, and `dfil grid cost`'s total
line still ending in the pessimistic GPU-hours."""

from pathlib import Path

import pytest

from dfil.cli import main
from dfil.cost import rates
from dfil.cost.ends import ENDS, format_range, projected_trainers
from dfil.cost.rates import Throughput, measurement

PAPER = Path(__file__).resolve().parents[2] / "config" / "paper.yaml"


def test_the_current_trainer_is_unmeasured_and_cannot_be_projected_yet():
    assert projected_trainers() == ["packed", "plain"]
    with pytest.raises(ValueError, match="'current' has not been timed on a GPU yet"):
        measurement("current", 8)


def test_the_range_names_each_end_and_every_measurement_behind_it():
    text = format_range({"packed": 359.04, "plain": 145.7}, "packed")
    lines = text.splitlines()
    assert lines[0].startswith("range: 145.7 to 359.0 GPU-h (optimistic end: the plain loop")
    assert lines[1].startswith("current trainer: unmeasured (never timed on a GPU")
    sources = [line for line in lines if line.startswith("  ")]
    assert len(sources) == 4  # two batches of each end
    assert sources[0] == (
        "  pessimistic (packed): 1,877 tokens/s, the project's packed path, batch 8; measured "
        "on one H100 80GB (a lent GPU session), 2026-11-24 (before the trainer's rebuild); "
        "Qwen2.5-7B architecture with random weights, LoRA q,v r16, bf16, ~120-token "
        "prompts; 8.1% MFU by 6N; peak memory 19.3 GiB")
    assert sources[2].startswith("  optimistic (plain): 5,111 tokens/s, a plain")


def test_a_recorded_measurement_of_the_current_trainer_is_projected(monkeypatch):
    timed = Throughput("the current trainer, batch 8", 3000, 8, "h100", "qwen2.5-7b", 120,
                       "a test's figure", "today", "a test GPU")
    monkeypatch.setitem(rates.MEASURED, ("current", 8), timed)
    assert projected_trainers() == [*ENDS.values(), "current"]
    text = format_range({"packed": 300.0, "plain": 100.0, "current": 180.0}, "packed")
    assert "current trainer: 180.0 GPU-h (measured on a test GPU, today)" in text
    assert ("  current (current): 3,000 tokens/s, the current trainer, batch 8; measured on "
            "a test GPU, today; a test's figure") in text


def test_the_total_line_keeps_the_pessimistic_end_last_and_the_range_follows(capsys):
    assert main(["grid", "cost", "--config", str(PAPER), "--catalogue"]) == 0
    lines = capsys.readouterr().out.splitlines()
    total = next(i for i, line in enumerate(lines) if line.startswith("total"))
    pessimistic = float(lines[total].split()[-1])
    assert lines[total + 1].startswith("range: ")
    low, high = (float(w) for w in lines[total + 1].split()[1:4:2])
    assert high == pytest.approx(pessimistic, abs=0.05) and low < pessimistic / 2
    assert lines[total + 2].startswith("current trainer: unmeasured")
