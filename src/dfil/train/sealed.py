"""A seed its pack sealed (no torch): the training summary a ``train_pack`` job wrote into
its record for a seed it finished (:func:`dfil.contracts.pack.pack_summary`), taken only
while the run is the one its cell makes now (config hash, input digests) and its best
checkpoint's layout is whole (a file cut short since is its own job's to meet). The seed's
``train_cell`` job then only copies that summary, and the workflow asks no GPU for the
job: both decide here."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from dfil.config.cell import load_cell
from dfil.contracts.identity import KEY, differences
from dfil.contracts.pack import pack_summary
from dfil.contracts.rundir import BEST
from dfil.engine.inputs import cell_identity
from dfil.preflight.damage import safetensors_problem


def sealed_summary(records: Iterable[str | Path], cell: str | Path,
                   run: str | Path) -> tuple[dict | None, list[str]]:
    """The summary a pack record among ``records`` (a seed job's inputs) sealed for run
    directory ``run``, when its checkpoint is whole and its identity is what ``cell`` (a
    ``cell.yaml``) makes now; else None, with why: what is wrong with the checkpoint, one
    phrase per difference, or the error met reading the cell and its inputs' stamps; no
    reason where :func:`~dfil.contracts.pack.pack_summary` holds none for the run. Never
    raises: the workflow asks it while choosing the job's resources."""
    summary = pack_summary(records, str(run))
    if summary is None:
        return None, []
    try:
        if problem := safetensors_problem(Path(run) / BEST):
            why = [f"{Path(run) / BEST}: {problem}"]
        else:
            why = differences(summary.get(KEY), cell_identity(load_cell(cell)))
    except Exception as err:  # the seed's own job meets it, where a last attempt records it
        why = [f"{type(err).__name__}: {err}"]
    return (None, why) if why else (summary, [])
