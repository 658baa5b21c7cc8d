"""``dfil grid cost``: the grid's projected GPU-hours by size class, one seed per job or
with each configuration's seeds projected in packs (as the grid's ``pack`` trains), at each
measured trainer's speed with the measurements' devices and dates (a site's own from the
acceptance run's records, ``results/<grid>/acceptance/``, where it ran), where each
backbone's architecture came from (:mod:`dfil.cli.archs`), the resources each class could
ask for (:mod:`dfil.cost`), and what its finished cells measured."""

from __future__ import annotations


def missing_lines(archs) -> list[str]:
    """One line per backbone without an architecture, with its fix."""
    return [a.source for a in archs.values() if a.config is None]


def grid_cost(grid, gpu: str | None, trainer: str = "dfil",  # noqa: PLR0913
              catalogue: bool = False, missing: bool = True, pack: str = "off",
              nodes=None) -> str:
    """The cost table, its totals and resource proposal of a :class:`dfil.config.grid.Grid`,
    its backbones' architectures (:func:`dfil.cli.archs.grid_archs`; ``catalogue``: the
    offline shapes where none is fetched or declared) labelled with their sources, and
    (``missing``) a line for each backbone without one; the cells of those are left out,
    and the totals say how many. ``pack`` "off": one seed per job; "on": each
    configuration's seeds projected in packs (``dfil grid cost`` follows the grid's
    ``pack``, as the workflow trains).

    Each class is projected on ``gpu``, else on its known ``resources`` gpu_model, else
    on an H100; its proposal keeps that GPU and fits ``nodes`` (else this host's sinfo's:
    :func:`dfil.cluster.slurm.site_nodes`).
    """
    from pathlib import Path

    from dfil.cli.archs import grid_archs
    from dfil.cluster.slurm import site_nodes
    from dfil.contracts.acceptance import grid_records
    from dfil.cost import by_class, cell_work, format_proposals, format_table, propose
    from dfil.cost.acceptance import acceptance_lines, acceptance_table
    from dfil.cost.ends import format_totals, total_hours
    from dfil.cost.measured import format_measured, measured_by_class
    from dfil.cost.packs import cell_shares, grid_packs, project_packs
    from dfil.cost.rates import MEASURED, PEAK_BF16, TRAINERS, measured

    packs = pack == "on"
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
    hours = {(t, p): total_hours(project_packs(works, gpus, t, table, p))
             for t in TRAINERS if measured(t, table) for p in (True, False)}
    classes = by_class(project_packs(works, gpus, trainer, table, packs), gpus)
    lines = [format_table(grid.name, classes, trainer, excluded, packs),
             format_totals(hours, trainer, packs, excluded, table)]
    trained = grid_packs(grid)  # as the workflow trains: each cell's share of its pack
    finished = format_measured(
        measured_by_class(cell_shares(works, gpus, trainer, table, trained),
                          Path(grid.results) / "benchmarks", trained),
        {size: int(r.get("gpu", 0)) for size, r in resources.items()})
    models = {size: gpu or r.get("gpu_model") for size, r in resources.items()}
    proposals = propose(works, trainer, table, packs, models,
                        nodes if nodes is not None else site_nodes())
    return "\n\n".join(["\n".join(head), "\n".join(lines), finished,
                        format_proposals(proposals)])
