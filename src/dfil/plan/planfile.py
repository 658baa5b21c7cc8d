"""A plan as a grid file: the source grid with only the planned runs (pure).

Every top-level key of the source grid is kept (its ``name`` too, so the plan's runs are
the larger grid's runs, under the same run directories); ``groups`` become one group per
(source group, coordinate) that a planned run needs, each listing the seeds planned for it
and keeping its source group's variant, cell overrides and tables; each seed set is
extended by the seeds a plan adds, so that the tables that read a set read them. The
``acceptance:`` section stays where the plan runs its cell and its 4-bit backbone, else it
is left out: the source grid's acceptance run (same name, same ``results/<name>/``) is the
plan's. Its positive controls (``controls:``) are left out: they name groups that a plan
regroups, so a plan runs none. Its ``plan:`` block (:func:`plan_record`,
:class:`dfil.config.gridfile.PlanRecord`) says what the plan was asked and which claims it
planned.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from dfil.config.runkey import RunPoint, applicable, format_key
from dfil.plan.budget import Plan
from dfil.plan.price import coordinate


def plan_record(plan: Plan, gpu: str | None, end: str) -> dict:
    """The ``plan:`` block of ``plan``'s grid file, its cost projected on ``gpu`` (None:
    each size class's own) at the ``end`` of the cost model's range."""
    return {"budget": plan.budget, "gpu": gpu or "", "end": end, "power": plan.power,
            "alpha": plan.alpha, "projected": round(plan.projected, 3),
            "considered": len(plan.rows),
            "claims": [r.claim.id for r in plan.rows if r.planned]}


def plan_config(config: dict, grid, runs: Iterable[str], order: list[int],
                record: dict | None = None) -> dict:
    """The grid file running ``runs`` (run keys, their seeds a prefix of ``order``) of
    ``grid`` (a :class:`dfil.config.grid.Grid` built from ``config``), with ``record`` as its
    ``plan:`` block (:func:`plan_record`; None: none)."""
    runs = list(runs)
    seeds: dict[str, list[int]] = {}
    for key in runs:
        coord, seed = key.rsplit("/seed", 1)
        seeds.setdefault(coord, []).append(int(seed))
    groups, done = {}, set()
    for gname, group in grid.spec.groups.items():
        raw = config["groups"][gname]
        for task, backbone, method, lam, budget, init in itertools.product(
                group.tasks, group.backbones, group.methods, group.lambdas, group.budgets,
                group.inits):
            point = RunPoint(task, backbone, method, group.variant, lam, budget, init, 0)
            coord = coordinate(format_key(applicable(point)))
            if coord not in seeds or coord in done:
                continue
            done.add(coord)
            groups[f"{gname}_{len(groups) + 1}"] = {
                **{k: v for k, v in raw.items() if k not in _COORDS},
                "tasks": [task], "backbones": [backbone], "methods": [method],
                "lambdas": [lam], "budgets": [budget], "inits": [init],
                "seeds": sorted(seeds[coord], key=order.index)}
    missing = sorted(set(seeds) - done)
    if missing:
        raise ValueError(f"planned runs the grid does not build: {missing}")
    most = max((len(s) for s in seeds.values()), default=0)
    sets = {name: [*given, *(s for s in order[:most] if s not in given)]
            for name, given in config.get("seed_sets", {}).items()}
    out = {k: v for k, v in config.items() if k not in ("groups", "plan", "acceptance", "controls")}
    if "render" in out:  # a plan runs part of the grid: its tables print the rest as not run
        out["render"] = {k: v for k, v in out["render"].items() if k != "strict"}
    accept = config.get("acceptance")
    if accept and accept["cell"] in runs and any(
            key.split("/")[1] == accept["qlora"] for key in runs):
        out["acceptance"] = accept
    if sets:
        out["seed_sets"] = sets
    return {**out, "groups": groups, **({"plan": record} if record is not None else {})}


_COORDS = ("tasks", "backbones", "methods", "lambdas", "budgets", "inits", "seeds")
