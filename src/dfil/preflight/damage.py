"""Damaged run files, found before Snakemake builds the DAG and re-created by their producer.

Snakemake removes a job's outputs before the job runs, and decides what to run from
timestamps alone: a ``metrics.json`` truncated after it was written still counts as
done, so the tables that read it are the jobs rerun, and they fail with their outputs
already removed. :func:`repair_runs` reads each evaluated run's files first (cheaply: the
JSON parses into a mapping, the parquet footer reads) and moves a damaged one to the run's
``damaged/`` folder, so the DAG the Snakefile then builds re-creates it from what produced
it: evaluation from the checkpoint, or training again when the checkpoint (or the
training summary) is damaged too. A ``metrics.json`` that parses is damaged too when its
numbers are not those evaluation wrote: its content digest does not match (or it has
none), or a number its ``predictions.parquet`` determines differs
(:mod:`dfil.contracts.predictions`); evaluation is cheap, so such a run is re-evaluated
from its checkpoint rather than trusted. Each file so found is named in one line. A
finished LoRA run's ``adapter/`` (an export of its checkpoint, which nothing downstream
reads) that is missing or damaged is exported again in place, the run's results left as
they are.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dfil.cluster.writer import is_alive, read_holder
from dfil.contracts.failure import is_failure
from dfil.contracts.metrics import digest_problem
from dfil.contracts.rundir import (
    ADAPTER,
    ADAPTER_CONFIG,
    ADAPTER_WEIGHTS,
    BEST,
    DAMAGED,
    EVALUATION_OUTPUTS,
    METRICS,
    PREDICTIONS,
    SUMMARY,
    TRAINING_OUTPUTS,
)
from dfil.util.atomic import write_error

#: What evaluation writes, and what training writes (moved aside to retrain from scratch).
EVALUATION, TRAINING = EVALUATION_OUTPUTS, TRAINING_OUTPUTS


@dataclass(frozen=True)
class Finding:
    """One damaged file of a run: what is wrong, and which files must be made again."""

    path: Path
    problem: str
    move: tuple[str, ...]
    redo: str


def file_problem(path: Path) -> str | None:
    """What is wrong with the run file ``path`` (None: it reads, or it does not exist)."""
    if not path.exists():
        return None
    try:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            pq.read_metadata(path)
            return None
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        return f"unreadable: {' '.join(str(err).split())[:120]}"
    except Exception as err:  # pyarrow's own errors for a footer that is not one
        return f"unreadable: {type(err).__name__}: {' '.join(str(err).split())[:120]}"
    if not isinstance(record, dict) or not record:
        return "not a JSON object with keys"
    return None


def numbers_problem(run_dir: Path) -> str | None:
    """What is wrong with the numbers of the run's readable ``metrics.json``: its digest,
    or a number its ``predictions.parquet`` contradicts (None: neither, or no file)."""
    path = run_dir / METRICS
    if not path.is_file():
        return None
    record = json.loads(path.read_text(encoding="utf-8"))
    if is_failure(record):
        return None
    if problem := digest_problem(record):
        return problem
    if not (run_dir / PREDICTIONS).is_file():
        return None
    from dfil.contracts.predcheck import predictions_problem  # pandas: only when needed

    return predictions_problem(record, run_dir / PREDICTIONS)


def checkpoint_problem(run_dir: Path) -> str | None:
    """What is wrong with the run's checkpoint (None: it reads and matches its hash)."""
    from dfil.engine.checkpoint import read_checkpoint  # torch: only for a damaged run
    from dfil.util.errors import CheckpointError

    try:
        read_checkpoint(run_dir / BEST)
    except CheckpointError as err:
        return str(err)
    return None


def adapter_problem(run_dir: Path) -> str | None:
    """What is wrong with a finished LoRA run's ``adapter/`` (peft's export of its LoRA,
    :mod:`dfil.model.adapter`): missing (a run trained before runs had one, or deleted) or
    unreadable. None: it reads, or the run has none to have (a frozen backbone, a failure,
    no readable summary). Plain reads: no torch."""
    try:
        summary = json.loads((run_dir / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(summary, dict) or is_failure(summary) \
            or not summary.get("trained") or summary.get("frozen_backbone", True):
        return None
    folder = run_dir / ADAPTER
    if not (folder / ADAPTER_CONFIG).is_file() or not (folder / ADAPTER_WEIGHTS).is_file():
        return "missing"
    return file_problem(folder / ADAPTER_CONFIG) or safetensors_problem(folder / ADAPTER_WEIGHTS)


def safetensors_problem(path: Path) -> str | None:
    """What is wrong with the layout of the safetensors file ``path`` (None: it holds an
    8-byte header length, that JSON header, and exactly the data its offsets end at):
    read in plain Python, without loading a tensor."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            head = fh.read(8)
            length = int.from_bytes(head, "little") if len(head) == 8 else size
            if 8 + length > size:
                return f"unreadable: {size} bytes, shorter than its header"
            header = json.loads(fh.read(length))
        if not isinstance(header, dict):
            return f"unreadable: its header is JSON {type(header).__name__}, not an object"
        ends = [v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"]
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError, IndexError) as err:
        return f"unreadable: {' '.join(str(err).split())[:120]}"
    if not all(type(e) is int for e in ends):
        return "unreadable: a tensor's data offsets are not whole numbers"
    end = max(ends, default=0)
    if 8 + length + end != size:
        return f"unreadable: {size} bytes where its header says {8 + length + end}"
    return None


def export_adapter(run_dir: Path, problem: str, apply: bool) -> str:
    """Write a finished LoRA run's ``adapter/`` again from its checkpoint (``problem``:
    what :func:`adapter_problem` found), in place: the run's results stand, nothing is
    trained or evaluated again. One line saying what was done (``apply`` false: what
    would be)."""
    where = f"dfil: {run_dir / ADAPTER}: {problem}"
    if not apply:
        return f"{where}; would export it again from {run_dir / BEST}"
    from dfil.engine.checkpoint import export_adapter  # torch: only for such a run
    from dfil.util.errors import CheckpointError, ConfigError

    try:
        export_adapter(run_dir)
    except (CheckpointError, ConfigError, OSError, ValueError) as err:
        return f"{where}; not exported: {' '.join(str(err).split())[:200]}"
    return f"{where}; exported again from {run_dir / BEST}"


def inspect_run(run_dir: Path, trains: bool) -> list[Finding]:
    """The damaged files of one run directory and what re-creates them. ``trains``:
    whether the cell's method trains (zero-shot cells have no checkpoint)."""
    broken = [(name, p) for name in (SUMMARY, *EVALUATION)
              if (p := file_problem(run_dir / name))]
    if not broken and (p := numbers_problem(run_dir)):
        broken = [(METRICS, p)]
    if not broken:
        return []
    ckpt = checkpoint_problem(run_dir) if trains and (run_dir / SUMMARY).exists() else None
    if ckpt:
        redo = f"its checkpoint is damaged too ({ckpt}): retraining the cell from scratch"
        move = (*TRAINING, *EVALUATION)
    elif broken[0][0] == SUMMARY:
        redo = ("dfil train writes it again from the recorded attempts and checkpoint (no "
                "retraining), then the run is re-evaluated")
        move = (SUMMARY, *(name for name, _ in broken))
    else:
        redo, move = "re-evaluating the run from its checkpoint", EVALUATION
    return [Finding(run_dir / name, problem, move, redo) for name, problem in broken]


def repair_runs(runs: Iterable[tuple[Path, bool]], apply: bool = True) -> list[str]:
    """Find the damaged files of ``runs`` ((run directory, whether its method trains)),
    move them (and what must be made again with them) to ``<run>/damaged/`` when
    ``apply``; one line per damaged file. A finished LoRA run's missing or damaged
    ``adapter/`` is exported again in place (:func:`export_adapter`). A run a live process
    writes is left alone."""
    notes = []
    for run_dir, trains in runs:
        findings = inspect_run(Path(run_dir), trains)
        adapter = trains and not findings and adapter_problem(Path(run_dir))
        if not findings and not adapter:
            continue
        holder = read_holder(run_dir)
        if holder is not None and is_alive(holder) is not False:
            if adapter:
                continue  # its training writes it
            notes.extend(f"dfil: {f.path}: damaged ({f.problem}), but pid {holder.get('pid')} "
                         f"on {holder.get('host')} writes {run_dir} now: left as it is"
                         for f in findings)
            continue
        if adapter:
            notes.append(export_adapter(Path(run_dir), adapter, apply))
            continue
        if apply:
            move_aside(Path(run_dir), {name for f in findings for name in f.move})
        verb = "moved to" if apply else "would move it to"
        notes.extend(f"dfil: {f.path}: damaged ({f.problem}); {verb} {run_dir}/{DAMAGED}/, "
                     f"{f.redo}" for f in findings)
    return notes


def move_aside(run_dir: Path, names: set[str]) -> None:
    """Move ``names`` to ``damaged/``; a results directory the filesystem will not let
    change (read-only, or full) is one error naming the path and the fix."""
    target = run_dir / DAMAGED
    try:
        target.mkdir(exist_ok=True)
        for name in sorted(names):
            if (run_dir / name).exists():
                if (target / name).is_dir():  # an older export moved aside before
                    shutil.rmtree(target / name)
                (run_dir / name).replace(target / name)
    except OSError as err:
        if (named := write_error(err)) is None:
            raise
        raise named from None
