"""A grid's cells as the packs that train them: each cell configuration's seeds trained
together over one frozen base (pure).

A configuration is a run key without its seed. Its seeds go into as few packs as the GPU
holds (:func:`dfil.cost.memory.seeds_that_fit` at the cell's batch and longest prompt),
split as evenly as they go: 20 seeds of which 6 fit are 4 packs of 5. With packing off a
pack is one seed. Evaluation stays one job per seed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from dfil.cost.archs import catalogue_arch
from dfil.cost.cells import cell_work
from dfil.cost.flops import shape
from dfil.cost.memory import seeds_that_fit, training_memory
from dfil.cost.project import CellCost, CellWork, project
from dfil.cost.rates import GPU_GIB, MEASURED, Table


def configuration(key: str) -> str:
    """A run key without its seed: the configuration every seed of one cell shares."""
    return key.rsplit("/seed", 1)[0]


def split(seeds: int, most: int) -> list[int]:
    """``seeds`` seeds in the fewest packs of at most ``most``, sizes differing by at most
    one, largest first: ``split(20, 6) == [5, 5, 5, 5]``, ``split(21, 6) == [6, 5, 5, 5]``."""
    if seeds < 1 or most < 1:
        raise ValueError(f"a pack split needs seeds and a size of at least 1, not "
                         f"{seeds} and {most}")
    packs = math.ceil(seeds / most)
    base, extra = divmod(seeds, packs)
    return [base + 1] * extra + [base] * (packs - extra)


def parts(config: str, seeds: Sequence, most: int) -> list[tuple[str, list]]:
    """Configuration ``config``'s ``seeds`` (run keys, or their cells' work) as
    :func:`split` splits them by ``most``, each part with its pack's name: the
    configuration, with ``/pack<i>of<n>`` when it is one of several."""
    sizes = split(len(seeds), most)
    out, at = [], 0
    for i, size in enumerate(sizes, 1):
        name = config if len(sizes) == 1 else f"{config}/pack{i}of{len(sizes)}"
        out.append((name, list(seeds[at:at + size])))
        at += size
    return out


def grid_packs(grid) -> dict[str, list[str]]:
    """The packs a grid (:class:`dfil.config.grid.Grid`) trains, by name: each trained
    configuration of two or more seeds, its run keys split as :func:`split` splits them by
    what one pack holds on its class's GPU (``gpu_model``, else an H100; :func:`pack_size`
    with its backbone's architecture: the grid's ``arch``, else the offline catalogue's,
    which a fetch does not change, so neither do the packs; none: one seed a pack, so no
    pack), all of them on a class without a GPU; named as :func:`parts` names them. A part
    of one seed is no pack (that seed trains in its own job). Empty unless the grid sets
    ``pack``."""
    from dfil.core.methods import method_spec

    if not grid.config.get("pack", False):
        return {}
    groups: dict[str, list[str]] = {}
    for key in sorted(grid.cells):
        if method_spec(grid.cells[key].config["model"]["method"]).trains:
            groups.setdefault(configuration(key), []).append(key)
    out = {}
    for config, keys in groups.items():
        first = grid.cells[keys[0]]
        request = grid.job_resources(first.key, "train")
        most = len(keys)
        if int(request.get("gpu", 0) or 0):
            backbone = first.config["model"]["backbone"]
            arch = backbone.get("arch") or catalogue_arch(backbone)
            gpu = request.get("gpu_model") if request.get("gpu_model") in GPU_GIB else "h100"
            most = pack_size(cell_work(first.key, first.size, first.config, arch), gpu,
                             len(keys)) if arch else 1
        # a part of one seed is no pack: that seed trains in its own job
        out.update((name, part) for name, part in parts(config, keys, most) if len(part) > 1)
    return out


def cell_shares(works: Iterable[CellWork], gpus: Mapping[str, str], trainer: str,
                table: Table, packs: Mapping[str, Sequence[str]]) -> list[CellCost]:
    """Each cell's projection as the workflow trains it: alone, or (a cell of ``packs``)
    its share of its pack's training, one K-th of a pack of K, and its own evaluation."""
    size_of = {key: len(keys) for keys in packs.values() for key in keys}
    out = []
    for w in works:
        cost = project(w, gpus[w.size], trainer, table)
        if w.key in size_of:
            k = size_of[w.key]
            whole = project(w, gpus[w.size], trainer, table, seeds=k)
            cost = replace(cost, train_s=whole.train_s / k)
        out.append(cost)
    return out


def pack_size(w: CellWork, gpu: str, seeds: int) -> int:
    """How many of a configuration's ``seeds`` one pack of cell ``w`` holds on ``gpu``."""
    one = training_memory(shape(w.arch), w.batch_size * w.longest, w.lora_targets, w.lora_r,
                          w.quantized, w.checkpointing)
    return seeds_that_fit(one, GPU_GIB[gpu], most=seeds)


def project_packs(works: Iterable[CellWork], gpus: Mapping[str, str], trainer: str = "dfil",
                  table: Table = MEASURED, pack: bool = True) -> list[CellCost]:
    """One :class:`CellCost` per training job of ``works``: each configuration's seeds in
    packs (``pack``; named as :func:`parts` names them, a part of one seed priced as its
    own job), else one per seed; a class's GPU is ``gpus[size]``. Cells that train nothing
    (zero-shot) are one job each."""
    groups: dict[str, list[CellWork]] = {}
    for w in works:
        groups.setdefault(configuration(w.key), []).append(w)
    out = []
    for config, group in groups.items():
        first, gpu = group[0], gpus[group[0].size]
        if not pack or not first.epochs:
            out += [project(w, gpu, trainer, table) for w in group]
            continue
        out += [replace(project(first, gpu, trainer, table, seeds=len(part)), key=name)
                for name, part in parts(config, group, pack_size(first, gpu, len(group)))]
    return out
