"""What the Snakefile checks before Snakemake builds the DAG, in the main Snakemake process.

- targets on the command line that the grid does not make (:mod:`.targets`);
- few-shot budgets larger than their data, where the data exists (:mod:`.budgets`);
- ``dfil`` jobs of an earlier run that still write their run directories
  (:mod:`dfil.cluster.writer`);
- damaged run files, moved aside so that the DAG re-creates them (:mod:`.damage`; only
  in a run that takes Snakemake's lock, and only with no other Snakemake running here);
- failure records of jobs SLURM refused, moved aside so that the DAG submits them again
  (:mod:`.refused`; likewise);
- generated files (``grid.yaml``, ``cell.yaml``) that differ from what the grid makes,
  written again, and run directories that are not the grid's run at their path, moved
  aside (:mod:`.identity`);
- frozen-feature stamps whose cache files are gone, removed likewise
  (:mod:`.featurestamps`);
- incomplete files of an interrupted run that this run would stop at
  (:func:`dfil.cluster.dirlock.incomplete_hint`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from dfil.cluster.dirlock import incomplete_hint, other_snakemakes, takes_lock
from dfil.cluster.writer import running_writers
from dfil.config.grid import Grid
from dfil.core.methods import method_spec
from dfil.preflight.budgets import check_budgets
from dfil.preflight.damage import repair_runs
from dfil.preflight.featurestamps import stale_stamps
from dfil.preflight.identity import foreign_runs, generated_files
from dfil.preflight.refused import resubmit_refused
from dfil.preflight.targets import target_notes
from dfil.util.errors import ConfigError


def preflight(grid: Grid, argv: list[str], workdir: str | Path, config_files: Iterable[str],
              outputs: Iterable[str]) -> list[str]:
    """The lines to print before the DAG is built (see the module docstring); a
    :class:`ConfigError` naming the files and key for a budget the data cannot fill."""
    workdir, config_files = Path(workdir), [str(f) for f in config_files]
    notes = target_notes(argv, grid.name, grid.cells, outputs, config_files)
    try:
        check_budgets(grid)
    except ConfigError as err:
        raise ConfigError(f"{', '.join(config_files)}: config {err}") from None
    runs = workdir / grid.results / "runs"
    dirs = [(runs / key, method_spec(cell.config["model"]["method"]).trains)
            for key, cell in sorted(grid.cells.items()) if (runs / key).is_dir()]
    building = other_snakemakes(workdir)
    writing = list(running_writers(d for d, _ in dirs))
    notes += [running_note(run_dir.relative_to(runs).as_posix(), holder, building)
              for run_dir, holder in writing]
    if not building:  # else the lock hint has said who runs here
        notes += generated_files(grid, workdir, apply=takes_lock(argv))
        notes += repair_runs(dirs, apply=takes_lock(argv))
        notes += resubmit_refused([d for d, _ in dirs], apply=takes_lock(argv))
        written = {d for d, _ in writing}
        notes += foreign_runs(grid, runs, [d for d, _ in dirs if d not in written],
                              apply=takes_lock(argv))
        notes += stale_stamps(workdir / grid.results / "features", apply=takes_lock(argv))
    if hint := incomplete_hint(workdir, argv):
        notes.append(hint)
    return notes


def running_note(key: str, holder: dict, building: Sequence[int] = ()) -> str:
    """One line naming a ``dfil`` job that still writes cell ``key``: a job of the build
    running in this directory where a Snakemake runs here (``building``, its pids), which
    is left to finish, else one an earlier run left, which may be stopped."""
    job = (f"pid {holder.get('pid')} on {holder.get('host')} ({holder.get('command')}, cell "
           f"{key}, since {holder.get('started')})")
    if building:
        return (f"dfil: {job} is a job of the Snakemake build running in this directory "
                f"(pid {', '.join(map(str, building))}): this run's job for that cell fails "
                "at once while it runs; let that build finish, then rerun this command")
    return (f"dfil: {job} still writes its run directory, left from an earlier run: this "
            "run's job for that cell fails at once while it does; wait for it, or stop it "
            f"(kill {holder.get('pid')}) and rerun")
