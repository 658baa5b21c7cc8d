"""``dfil grid cost``: the grid's projected GPU-hours by size class, the range between the
recorded trainers' speeds with each figure's source (the current trainer's from the
acceptance run's records, ``results/<grid>/acceptance/``, once it ran), where each
backbone's architecture came from (:mod:`dfil.cli.archs`), the resources each class could
ask for (:mod:`dfil.cost`), and what its finished cells measured."""

from __future__ import annotations


def missing_lines(archs) -> list[str]:
    """One line per backbone without an architecture, with its fix."""
    return [a.source for a in archs.values() if a.config is None]


def grid_cost(grid, gpu: str | None, trainer: str, catalogue: bool = False,
              missing: bool = True, nodes=None) -> str:
    """The cost table, its range and resource proposal of a :class:`dfil.config.grid.Grid`, its
    backbones' architectures (:func:`dfil.cli.archs.grid_archs`; ``catalogue``: the
    offline shapes where none is fetched or declared) labelled with their sources, and
    (``missing``) a line for each backbone without one; the cells of those are left out,
    and the totals say how many.

    Each class is projected on ``gpu``, else on its known ``resources`` gpu_model, else
    on an H100; its proposal keeps that GPU and fits ``nodes`` (else this host's sinfo's:
    :func:`dfil.cluster.slurm.site_nodes`).
    """
    from pathlib import Path

    from dfil.cli.archs import grid_archs
    from dfil.cluster.slurm import site_nodes
    from dfil.contracts.acceptance import grid_records
    from dfil.cost import by_class, cell_work, format_proposals, format_table, project, propose
    from dfil.cost.acceptance import acceptance_lines, acceptance_table
    from dfil.cost.ends import format_range, projected_trainers, total_hours
    from dfil.cost.measured import format_measured, measured_by_class
    from dfil.cost.rates import MEASURED, PEAK_BF16

    archs = grid_archs(grid, catalogue)
    resources = grid.config["resources"]
    gpus = {size: gpu or (r.get("gpu_model") if r.get("gpu_model") in PEAK_BF16 else "h100")
            for size, r in resources.items()}
    known = [(c, archs[c.config["model"]["backbone"]["name"]].config)
             for c in grid.cells.values()]
    works = [cell_work(c.key, c.size, c.config, arch) for c, arch in known if arch]
    excluded = len(known) - len(works)
    records = grid_records(grid.results)
    table = {**MEASURED, **acceptance_table(records)}
    head = [*(missing_lines(archs) if missing else []),
            *(f"architecture of {a.name}: {a.source}" for a in archs.values() if a.config),
            *acceptance_lines(records)]
    if not works:
        return "\n".join([*head, f"No cell projected: none of the {excluded} cells' "
                                  "backbones has an architecture."])
    costs = [project(w, gpus[w.size], trainer, table) for w in works]
    hours = {t: total_hours(project(w, gpus[w.size], t, table) for w in works)
             for t in projected_trainers(table)}
    lines = "\n".join([format_table(grid.name, by_class(costs, gpus), trainer, excluded),
                       format_range(hours, trainer, excluded, table)])
    measured = format_measured(measured_by_class(costs, Path(grid.results) / "benchmarks"),
                               {size: int(r.get("gpu", 0)) for size, r in resources.items()})
    models = {size: gpu or r.get("gpu_model") for size, r in resources.items()}
    proposals = propose(works, trainer, table, models,
                        nodes if nodes is not None else site_nodes())
    return "\n\n".join(["\n".join(head), lines, measured, format_proposals(proposals)])
