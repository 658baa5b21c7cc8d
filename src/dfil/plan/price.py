"""What a planned run costs: the projected GPU-hours of each grid coordinate's run (one
seed: its training and evaluation jobs) from the cost model (:mod:`dfil.cost`), and the
seeds a plan draws, in the order the grid names them.

The cost model's range (:mod:`dfil.cost.ends`): the slower of the two measured trainers
(a plain transformers+peft loop, the pessimistic end, used by default) or the faster (the
project's training step, the optimistic end), one seed per job.
"""

from __future__ import annotations

from collections.abc import Mapping

from dfil.cost import cell_work, project
from dfil.cost.ends import ENDS
from dfil.cost.rates import PEAK_BF16


def coordinate(key: str) -> str:
    """A run key without its seed: the coordinate every seed of one setting shares."""
    return key.rsplit("/seed", 1)[0]


def coordinate_hours(grid, archs: Mapping[str, Mapping | None], gpu: str | None = None,
                     end: str = "pessimistic") -> dict[str, float]:
    """GPU-hours of one run of each coordinate of ``grid`` (a :class:`dfil.config.grid.Grid`)
    whose backbone has an architecture in ``archs`` (backbone name -> config dict, None
    for none known: those coordinates are left out), projected on ``gpu`` (default: each
    size class's ``gpu_model`` the cost model knows, else an H100, as ``dfil grid cost``),
    at the ``end`` of the cost range."""
    if end not in ENDS:
        raise ValueError(f"unknown end of the cost range {end!r}; expected {sorted(ENDS)}")
    resources = grid.config["resources"]
    out: dict[str, float] = {}
    for key, cell in grid.cells.items():
        coord = coordinate(key)
        arch = archs.get(cell.config["model"]["backbone"]["name"])
        if coord in out or not arch:
            continue
        model = resources.get(cell.size, {}).get("gpu_model")
        on = gpu or (model if model in PEAK_BF16 else "h100")
        c = project(cell_work(key, cell.size, cell.config, arch), on, ENDS[end])
        out[coord] = (c.train_s + c.eval_s) / 3600
    return out


def seed_order(config: dict, count: int) -> list[int]:
    """The first ``count`` seeds a plan draws: the grid's seed sets' seeds, longest set
    first in its own order, then its groups' listed seeds, then the smallest unused
    integers. A plan's n seeds are a prefix of this, so a smaller plan's runs are a larger
    one's."""
    sets = sorted(config.get("seed_sets", {}).values(), key=len, reverse=True)
    listed = [g["seeds"] for g in config.get("groups", {}).values()
              if isinstance(g.get("seeds"), list)]
    order = list(dict.fromkeys(int(s) for seeds in [*sets, *listed] for s in seeds))
    extra = (i for i in range(1, count + len(order) + 1) if i not in set(order))
    while len(order) < count:
        order.append(next(extra))
    return order[:count]
