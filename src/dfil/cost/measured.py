"""What finished cells actually took, beside what the cost model projected for them
(pure: pandas).

Every training and evaluation job writes Snakemake's benchmark file
(``results/<grid>/benchmarks/{train_cell,untrained_cell,evaluate_cell}/<key>.tsv``,
``train_pack/<pack>.tsv`` for a pack of seeds trained together; column ``s``: the job's
wall-clock seconds). For each size class, the cells whose jobs have one are summed (a
packed cell's training: its share of its pack's job) and set beside the projection of
the same cells (a packed cell's: its share of its pack's), so the ratio says
how far the model is off on this cluster (or, on a CPU-only machine, that its figures
are CPU time: the class then asks no GPU and the table says so).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dfil.cost.project import CellCost

#: The rules whose benchmark files time a cell's training, and its evaluation.
TRAIN_RULES, EVAL_RULES = ("train_cell", "untrained_cell"), ("evaluate_cell",)
#: The rule whose benchmark file times a pack of seeds trained together.
PACK_RULE = "train_pack"


def job_seconds(path: Path) -> float | None:
    """The wall-clock seconds of a benchmark file (the mean of its repeats); None when
    there is no readable one."""
    try:
        frame = pd.read_csv(path, sep="\t")
        return float(frame["s"].mean()) if len(frame) else None
    except (OSError, ValueError, KeyError, pd.errors.ParserError):
        return None


@dataclass
class Measured:
    """One size class: cells with both jobs timed, their measured and projected hours."""

    size: str
    cells: int = 0
    train_h: float = 0.0
    eval_h: float = 0.0
    projected_h: float = 0.0


def _timed(benchmarks: Path, rules: Iterable[str], key: str) -> float | None:
    found = [job_seconds(benchmarks / rule / f"{key}.tsv") for rule in rules]
    return next((s for s in found if s is not None), None)


def measured_by_class(costs: Iterable[CellCost], benchmarks: Path,
                      packs: Mapping[str, Sequence[str]] | None = None) -> dict[str, Measured]:
    """Each size class's cells whose training and evaluation jobs were both timed. A cell
    that trained in one of ``packs`` (pack name -> its run keys) is timed by its share of
    its pack's ``train_pack`` job, plus its own job (which wrote its summary)."""
    out: dict[str, Measured] = {}
    pack_of = {key: (name, len(keys)) for name, keys in (packs or {}).items() for key in keys}
    for cost in costs:
        train = _timed(Path(benchmarks), TRAIN_RULES, cost.key)
        if cost.key in pack_of and train is not None:
            name, size = pack_of[cost.key]
            together = job_seconds(Path(benchmarks) / PACK_RULE / f"{name}.tsv")
            train = None if together is None else train + together / size
        evaluate = _timed(Path(benchmarks), EVAL_RULES, cost.key)
        if train is None or evaluate is None:
            continue
        m = out.setdefault(cost.size, Measured(cost.size))
        m.cells += 1
        m.train_h += train / 3600
        m.eval_h += evaluate / 3600
        m.projected_h += (cost.train_s + cost.eval_s) / 3600
    return out


def format_measured(measured: Mapping[str, Measured], gpus: Mapping[str, int]) -> str:
    """The measured table: per class, finished cells, measured hours (GPU-hours where the
    class asks ``gpus[size]`` > 0 GPUs, else CPU hours), the projection of the same cells
    and their ratio."""
    if not measured:
        return "Measured: no finished cell has benchmark files yet."
    head = (f"{'class':<10} {'finished':>8} {'train h':>9} {'eval h':>9} {'measured h':>10} "
            f"{'projected h':>11} {'ratio':>6}  kind")
    lines = ["Measured (the rules' benchmark files, wall-clock time of each job) beside the "
             "projection of the same cells:", head, "-" * len(head)]
    for size in sorted(measured):
        m = measured[size]
        total = m.train_h + m.eval_h
        ratio = f"{total / m.projected_h:6.2f}" if m.projected_h else f"{'-':>6}"
        kind = "GPU-hours" if gpus.get(size, 0) > 0 else "CPU hours (no GPU asked)"
        lines.append(f"{size:<10} {m.cells:>8} {m.train_h:>9.3f} {m.eval_h:>9.3f} "
                     f"{total:>10.3f} {m.projected_h:>11.3f} {ratio}  {kind}")
    return "\n".join(lines)
