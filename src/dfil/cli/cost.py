"""``dfil grid cost``: the grid's projected GPU-hours by size class, the range between the
recorded trainers' speeds with each figure's source, the resources each class could ask
for (:mod:`dfil.cost`), and what its finished cells measured."""

from __future__ import annotations


def grid_cost(grid, gpu: str | None, trainer: str) -> str:
    """The cost table, its range and resource proposal of a :class:`dfil.grid.Grid`.

    Each class is projected on ``gpu``, else on its ``resources`` gpu_model where that is
    a GPU the cost model knows, else on an H100.
    """
    from pathlib import Path

    from dfil.cost import by_class, cell_work, format_proposals, format_table, project, propose
    from dfil.cost.ends import format_range, projected_trainers, total_hours
    from dfil.cost.measured import format_measured, measured_by_class
    from dfil.cost.rates import PEAK_BF16

    resources = grid.config["resources"]
    gpus = {size: gpu or (r.get("gpu_model") if r.get("gpu_model") in PEAK_BF16 else "h100")
            for size, r in resources.items()}
    works = [cell_work(c.key, c.size, c.config) for c in grid.cells.values()]
    costs = [project(w, gpus[w.size], trainer) for w in works]
    hours = {t: total_hours(project(w, gpus[w.size], t) for w in works)
             for t in projected_trainers()}
    table = "\n".join([format_table(grid.name, by_class(costs, gpus), trainer),
                       format_range(hours, trainer)])
    measured = format_measured(measured_by_class(costs, Path(grid.results) / "benchmarks"),
                               {size: int(r.get("gpu", 0)) for size, r in resources.items()})
    return "\n\n".join([table, measured, format_proposals(propose(works, trainer))])
