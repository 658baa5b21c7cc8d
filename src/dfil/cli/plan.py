"""``dfil grid plan``: which claims a budget of GPU-hours settles, and the grid file that
runs them (:mod:`dfil.plan`)."""

from __future__ import annotations

from dfil.plan.power import MAX_SEEDS
from dfil.util.errors import ConfigError


def grid_plan(grid, args) -> str:
    """The plan's table for ``grid`` (a :class:`dfil.config.grid.Grid`) and the budget
    ``args.gpu_hours`` (with ``args``' power, alpha, claims, GPU, cost end and tables);
    writes the plan's grid file to ``args.out`` unless it plans nothing. Every backbone
    needs an architecture (:mod:`dfil.cli.archs`): a plan prices each run it may draw."""
    import yaml

    from dfil.cli.archs import grid_archs
    from dfil.cli.cost import missing_lines
    from dfil.plan import (
        coordinate_hours,
        format_plan,
        make_plan,
        paper_claims,
        plan_config,
        plan_record,
        seed_order,
        select,
    )
    from dfil.render import load_specs
    from dfil.util.atomic import atomic_write_bytes

    budget, out, optimistic = args.gpu_hours, args.out, args.optimistic
    if budget < 0:
        raise ValueError(f"--gpu-hours must be >= 0, got {budget:g}")
    archs = grid_archs(grid, args.catalogue)
    if missing_lines(archs):
        raise ConfigError("every backbone needs an architecture to price its runs: "
                          + "; ".join(missing_lines(archs)))
    claims = paper_claims(grid, load_specs(args.tables))
    if args.claims:
        claims = select(claims, [w.strip() for w in args.claims.split(",") if w.strip()])
    end = "optimistic" if optimistic else "pessimistic"
    order = seed_order(grid.config, MAX_SEEDS)
    hours = coordinate_hours(grid, {n: a.config for n, a in archs.items()}, args.gpu, end)
    plan = make_plan(claims, hours, order, budget, args.alpha, args.power)
    text = format_plan(plan)
    note = (f"GPU-hours: the cost model's {end} end"
            f"{' (--optimistic)' if optimistic else ' (--optimistic for the other)'}")
    if not plan.runs:
        return f"{text}\n{note}\nNothing planned: no grid file written."
    if out is not None:
        config = plan_config(grid.config, grid, plan.runs, order,
                             plan_record(plan, args.gpu, end))
        atomic_write_bytes(out, yaml.safe_dump(config, sort_keys=False, default_flow_style=None,
                                                width=100).encode())
        note += f"\nwrote {out}: snakemake all_tables --configfile={out}"
    return f"{text}\n{note}"
