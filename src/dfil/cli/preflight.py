"""``dfil grid preflight``: before the real run, one line per check (hub repos locked and
reachable or fetched, cache disk space, SLURM partitions, GPU types and account), then
the grid's projected GPU-hours (``dfil grid cost``'s table) and, for a grid ``dfil grid
plan`` wrote, the plan's coverage; exit status 3 when a check found a problem. The
``preflight`` target of the workflow runs it on the login node."""

from __future__ import annotations

from pathlib import Path

from dfil.util.errors import InputError, MissingInputError

#: The exit status of a preflight with a problem (0: every check ok or skipped).
FAILED = 3


def load_profile(paths: list[Path]) -> dict:
    """Snakemake profiles (directories holding config.yaml, or the files), merged as
    Snakemake merges several ``--profile``s: a later one's keys replace an earlier's."""
    from dfil.config.yamlfile import load_yaml

    merged: dict = {}
    for path in paths:
        file = path / "config.yaml" if path.is_dir() else path
        if not file.is_file():
            raise MissingInputError(f"--profile {path}: no Snakemake profile there (a "
                                    "directory with config.yaml, e.g. slurm)")
        merged.update(load_yaml(file) or {})
    return merged


def rule_jobs(grid) -> dict[str, dict[str, dict]]:
    """Each rule's largest job per size class (what each of its attempts asks), as the
    workflow's rules ask them: training and evaluation of every cell, the training of
    each pack of seeds (the grid's ``pack``; its first seed's request), the frozen-feature
    pass (its cell's evaluation's), the acceptance run (its cell's training's), and the
    light jobs of every other rule (the ``cpu`` class). A GPU rule's job that asks no GPU
    (a method that trains nothing) is a light job, but for a seed's training job that only
    writes its summary after its pack: the ``cpu`` class under ``train_cell``'s own
    settings (its QOS, say), checked against the CPU partition."""
    from dfil.cluster.rules import LIGHT
    from dfil.cost.packs import grid_packs
    from dfil.engine.featuresets import feature_jobs

    out: dict[str, dict[str, dict]] = {}

    def add(rule: str, key: str, stage: str) -> None:
        job = grid.job_resources(key, stage)
        if not job.get("gpu", 0):
            return
        size = grid.cells[key].size
        if job["runtime"] >= out.setdefault(rule, {}).get(size, {}).get("runtime", -1):
            out[rule][size] = job

    for key in grid.cells:
        add("train_cell", key, "train")
        add("evaluate_cell", key, "evaluate")
    packs = grid_packs(grid)
    for keys in packs.values():
        add("train_pack", keys[0], "train")
    if packs:  # a seed's summary after its pack: the cpu class, under its rule's settings
        out.setdefault("train_cell", {})["cpu"] = dict(grid.config["resources"]["cpu"])
    for key in feature_jobs({k: c.config for k, c in grid.cells.items()}).values():
        add("frozen_features", key, "evaluate")
    for key, _ in grid.acceptance().values():
        add("acceptance_run", key, "train")
    out[LIGHT] = {"cpu": dict(grid.config["resources"]["cpu"])}
    return out


def plan_lines(record) -> str:
    """What a grid file's ``plan:`` block (:class:`dfil.config.gridfile.PlanRecord`) planned and
    for how many GPU-hours, on which GPU and end of the cost range."""
    from dfil.plan.table import recorded_coverage

    on = record.gpu or "each size class's gpu_model"
    return (f"{recorded_coverage(record)}\n"
            f"plan: GPU-hours on {on}, the cost model's {record.end} end")


class _Tee:
    """Writes to each of ``streams``."""

    def __init__(self, *streams):
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()


def preflight_here(config: dict, configfiles: list, profiles: list[str]) -> int:
    """``snakemake preflight``: :func:`grid_preflight` in the Snakemake process, on the
    grid of its ``config`` (read from ``configfiles``), its lines printed and kept in
    ``results/<grid>/logs/preflight.log``; its exit status (2: a grid file's error, one
    line naming it)."""
    import contextlib
    import sys

    from dfil.config.grid import grid_of
    from dfil.util.errors import or_exit

    grid = or_exit(grid_of, config, configfiles, False)
    path = Path(grid.results) / "logs" / "preflight.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as kept, \
            contextlib.redirect_stdout(_Tee(sys.stdout, kept)):
        return grid_preflight(grid, [Path(p) for p in profiles])


def grid_preflight(grid, profiles: list[Path], trainer: str = "dfil",
                   catalogue: bool = False) -> int:
    """Run every check of :class:`dfil.config.grid.Grid` ``grid`` against this host, print one
    line each and the cost table; :data:`FAILED` if any check found a problem. A backbone
    without an architecture (:mod:`dfil.cli.archs`) is a skipped cost check naming the
    fix; its cells are left out of the table."""
    from dfil.cli.archs import grid_archs
    from dfil.cli.cost import grid_cost, missing_lines
    from dfil.cluster.checks import Check, problems, summary
    from dfil.cluster.slurm import site_from_profile, slurm_checks
    from dfil.hub import cache_root
    from dfil.preflight.hubcheck import disk_check, hub_checks

    cache = cache_root()
    checks, need = hub_checks(list(grid.pins.values()), cache, grid.spec.lock, grid.files)
    if grid.pins:
        answered = not any(c.area == "hub" and c.status == "problem" for c in checks)
        checks.append(disk_check(cache, need, answered))
    else:
        checks.append(Check("hub", "skipped", "the grid reads no hub backbone or dataset"))
    site = site_from_profile(load_profile(profiles)) if profiles else None
    checks += slurm_checks(site, rule_jobs(grid))
    checks += [Check("cost", "skipped", line)
               for line in missing_lines(grid_archs(grid, catalogue))]
    try:
        cost = grid_cost(grid, None, trainer, catalogue, missing=False)
    except InputError as err:  # a grid the cost model cannot project (a stand-in task)
        cost = ""
        checks.append(Check("cost", "skipped", f"no GPU-hours projected: {err}"))
    print("\n".join(c.line() for c in checks))
    print(f"\n{cost}\n" if cost else "")
    if grid.spec.plan is not None:
        print(plan_lines(grid.spec.plan) + "\n")
    print(summary(checks))
    return FAILED if problems(checks) else 0
