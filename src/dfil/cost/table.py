"""The cost table ``dfil grid cost`` prints, and the resources each size class could ask
SLURM for, derived from the projection.

Proposal rules (each a stated choice, for ``resources:`` in config/paper.yaml):

- GPU: the class's own ``gpu_model`` where the grid names one the cost model knows, else
  the site's GPU types from the smallest (where ``nodes`` are read), else an 80 GB H100
  and, where that does not fit, an H200. A GPU fits when the class's largest
  training step at batch 8 and its longest prompt (computed, :mod:`dfil.cost.memory`)
  takes at most 85% of its usable memory (the rest for allocator fragmentation, kernels'
  workspaces and bitsandbytes' dequantised weights), without gradient checkpointing or
  else with it. Where the grid's GPU fits in neither way, no GPU is proposed: the class
  fits none.
- runtime (minutes): the class's longest projected job (a pack's training job where seeds
  are packed) x 1.5, plus 10 minutes of start-up (imports, CUDA, tokenizing) beyond the
  weights' load already projected, rounded up to 15 minutes; training and evaluation jobs
  each their own.
- mem_mb (host RAM): 16 GB for the process (Python, torch, CUDA's host side, data) plus
  the largest backbone's bf16 weights once (a loader that materialises the checkpoint on
  the CPU before moving or quantising it), rounded up to 8 GB, at least 32 GB; on a
  SLURM site (``nodes``, from sinfo) at most the memory of its largest node with the GPU,
  and no fit where that holds less than the weights once and 4 GB.
- cpus_per_task: 8, at most the CPUs of the site's largest node with the GPU.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from dfil.cluster.nodes import NodeGroup
from dfil.cost.flops import decoder_params, shape
from dfil.cost.memory import GIB, HEADROOM, Memory, training_memory
from dfil.cost.packs import project_packs
from dfil.cost.project import CellWork, ClassTotal
from dfil.cost.rates import GPU_GIB, MEASURED, Table

MARGIN = 1.5
STARTUP_MIN = 10
PAPER_BATCH = 8
CPUS = 8
#: The least host memory beside the bf16 weights a job can run with (MB).
HOST_FLOOR_MB = 4000


@dataclass(frozen=True)
class Proposal:
    """Resources proposed for one size class, with the memory they rest on."""

    size: str
    gpu_model: str
    checkpointing: bool
    mem_mb: int
    train_runtime: int
    eval_runtime: int
    memory: Memory
    memory_plain: Memory
    cpus_per_task: int = CPUS
    #: What of the site the proposal is bounded by ("" where no site was read).
    site: str = ""
    #: Why no resources fit (None: they do); ``gpu_model`` is then the grid's.
    misfit: str | None = None


def _round_up(value: float, step: int) -> int:
    return int(math.ceil(value / step) * step)


def _largest(works: list[CellWork], checkpointing: bool) -> Memory:
    """The largest training step of ``works`` at the paper's batch and longest prompt."""
    steps = [training_memory(shape(w.arch), PAPER_BATCH * w.longest, w.lora_targets,
                             w.lora_r, w.quantized, checkpointing)
             for w in works if w.epochs]
    return max(steps, key=lambda m: m.total)


def _gpu(plain: Memory, ckpt: Memory, model: str | None,
         site: frozenset[str] = frozenset()) -> tuple[str, bool, bool]:
    """(GPU, checkpointing, fits) of a class's training step by the module doc's rule:
    the grid's ``model``, else the smallest the cost model knows of the ``site``'s GPU
    types, else an H100 or an H200; the last one tried, with checkpointing, where none
    fits (an H200 off any site counts as fitting: the largest GPU there is)."""
    known = sorted((t for t in site if t in GPU_GIB), key=lambda t: GPU_GIB[t])
    ladder = [model] if model in GPU_GIB else (known or ["h100", "h200"])
    for gpu in ladder:
        usable = HEADROOM * GPU_GIB[gpu] * GIB
        if plain.total <= usable:
            return gpu, False, True
        if ckpt.total <= usable:
            return gpu, True, True
    return ladder[-1], True, not (model in GPU_GIB or known)


def _site(gpu: str, need_mb: float, mem_mb: int, nodes: list[NodeGroup] | None
          ) -> tuple[int, int, str, str | None]:
    """(mem_mb, cpus_per_task, the site's bound, misfit or None) on ``nodes``."""
    if nodes is None:
        return mem_mb, CPUS, "", None
    typed = [n for n in nodes if n.gpus(gpu) > 0]
    if not typed:
        types = sorted(set().union(*(n.gpu_types for n in nodes)))
        return mem_mb, CPUS, "", (f"no node of this site has a {gpu} GPU (its GPU types: "
                                  f"{', '.join(types) or 'none'})")
    node_mem = max((n.mem_mb for n in typed if n.mem_mb), default=None)
    node_cpus = max((n.cpus for n in typed if n.cpus), default=None)
    bound = (f"site: {gpu} nodes of {node_mem or '?'} MB and {node_cpus or '?'} CPUs "
             "(sinfo)")
    if node_mem is not None and need_mb > node_mem:
        return mem_mb, CPUS, bound, (f"the weights once and {HOST_FLOOR_MB} MB need "
                                     f"{need_mb:.0f} MB of host memory > the {node_mem} MB "
                                     f"of this site's largest node with {gpu} GPUs")
    return (min(mem_mb, node_mem or mem_mb), min(CPUS, node_cpus or CPUS), bound, None)


def propose(works: Iterable[CellWork], trainer: str = "dfil",  # noqa: PLR0913
            table: Table = MEASURED, pack: bool = True,
            models: Mapping[str, str | None] | None = None,
            nodes: list[NodeGroup] | None = None) -> dict[str, Proposal]:
    """A :class:`Proposal` per size class of ``works`` (the rules of the module doc), at
    ``trainer``'s speed in ``table``, each configuration's seeds in packs (``pack``), on
    each class's GPU in ``models`` (the grid's ``gpu_model``; none: the H100/H200 rule) and
    within ``nodes`` (sinfo's; None: no site read)."""
    classes: dict[str, list[CellWork]] = {}
    for w in works:
        classes.setdefault(w.size, []).append(w)
    out = {}
    for size, group in classes.items():
        if not any(w.epochs for w in group):
            continue
        plain, ckpt = _largest(group, False), _largest(group, True)
        model = (models or {}).get(size)
        types = frozenset().union(*(n.gpu_types for n in nodes or []))
        gpu, checkpointing, fits = _gpu(plain, ckpt, model, types)
        misfit = None if fits else (
            f"its training step needs {ckpt.total / GIB:.1f} GiB with gradient "
            f"checkpointing > {HEADROOM:.0%} of a {gpu}'s {GPU_GIB[gpu]} GiB")
        costs = project_packs([replace(w, checkpointing=checkpointing) for w in group],
                              {size: gpu}, trainer, table, pack)
        longest = {"train_s": max(c.train_s for c in costs),
                   "eval_s": max(c.eval_s / c.seeds for c in costs)}
        weights = max(2.0 * decoder_params(shape(w.arch)) for w in group)
        mem_mb, cpus, bound, host = _site(
            gpu, weights / 1e6 + HOST_FLOOR_MB,
            max(32000, _round_up(16e3 + weights / 1e6, 8000)), nodes)
        out[size] = Proposal(
            size, gpu, checkpointing, mem_mb=mem_mb,
            train_runtime=_round_up(MARGIN * longest["train_s"] / 60 + STARTUP_MIN, 15),
            eval_runtime=_round_up(MARGIN * longest["eval_s"] / 60 + STARTUP_MIN, 15),
            memory=ckpt if checkpointing else plain, memory_plain=plain,
            cpus_per_task=cpus, site=bound, misfit=misfit or host)
    return out


def format_table(name: str, classes: Mapping[str, ClassTotal], trainer: str,
                 excluded: int = 0, pack: bool = True) -> str:
    """GPU-hours by size class and in total, with each class's longest jobs and its
    largest training step's memory (computed, at each cell's own batch: the bs64 cells'
    64; a pack's, for all its seeds, where ``pack``). ``excluded`` cells (no architecture
    known) are in no row, and the total says so; its last field is always the GPU-hours."""
    head = (f"{'class':<10} {'gpu':<5} {'cells':>5} {'trained':>7} {'train GPU-h':>11} "
            f"{'eval GPU-h':>10} {'total GPU-h':>11} {'longest train':>13} "
            f"{'longest eval':>12} {'memory, computed':>17}")
    packing = "each configuration's seeds in packs, projected" if pack else "one seed per job"
    lines = [f"Projected GPU-hours of grid {name!r} (trainer: {trainer}, {packing}; see "
             f"`dfil.cost.rates` for every figure's source)", head, "-" * len(head)]
    total = [0, 0, 0.0, 0.0]
    for size in sorted(classes, key=lambda k: classes[k].train_h + classes[k].eval_h):
        c = classes[size]
        mem = f"{c.memory.total / GIB:.1f} GiB" if c.memory else "-"
        lines.append(f"{size:<10} {c.gpu:<5} {c.cells:>5} {c.trained:>7} {c.train_h:>11.1f} "
                     f"{c.eval_h:>10.1f} {c.train_h + c.eval_h:>11.1f} "
                     f"{c.longest_train_h * 60:>9.0f} min {c.longest_eval_h * 60:>8.0f} min "
                     f"{mem:>17}")
        total = [total[0] + c.cells, total[1] + c.trained, total[2] + c.train_h,
                 total[3] + c.eval_h]
    lines.append("-" * len(head))
    label = f"total (excluding {excluded} cells)" if excluded else "total"
    lines.append(f"{label:<16} {total[0]:>5} {total[1]:>7} {total[2]:>11.1f} "
                 f"{total[3]:>10.1f} {total[2] + total[3]:>11.1f}")
    return "\n".join(lines)


def format_proposals(proposals: Mapping[str, Proposal]) -> str:
    """The proposed ``resources:`` lines, each with the computed memory behind it and the
    site it is bounded by; a class that fits nothing says why."""
    lines = [f"Proposed resources (memory computed at batch {PAPER_BATCH} and the longest "
             f"prompt; runtime = longest projected job x {MARGIN} + {STARTUP_MIN} min):"]
    for p in proposals.values():
        step = (f"training step {p.memory.total / GIB:.1f} GiB (weights "
                f"{p.memory.weights / GIB:.1f}, activations {p.memory.activations / GIB:.1f}"
                f"; without checkpointing {p.memory_plain.total / GIB:.1f})")
        if p.misfit:
            lines.append(f"  {p.size}: none fits on {p.gpu_model}: {p.misfit}; {step}")
            continue
        ckpt = ", gradient checkpointing" if p.checkpointing else ""
        site = f"; {p.site}" if p.site else ""
        lines.append(
            f"  {p.size}: {{gpu: 1, gpu_model: {p.gpu_model}, mem_mb: {p.mem_mb}, "
            f"cpus_per_task: {p.cpus_per_task}, runtime: {p.train_runtime}}}  # evaluation "
            f"runtime {p.eval_runtime}{ckpt}; {step}{site}")
    return "\n".join(lines)
