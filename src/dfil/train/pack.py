"""Training a pack (:class:`dfil.model.pack.PackedModel`): the K seeds of one cell
configuration in one process, each with its own run directory, data order, optimizer,
schedule, dropout stream, gradient clipping, best epoch, checkpoint and resume state.

A step (:func:`pack_step`) runs the K seeds' batches side by side through one forward and
one backward of the shared base (or, on cached features, of each seed's heads on its
rows), each seed's loss on its own rows, each seed's gradient clipped on its own (never
one norm over the pack), each seed's AdamW (fused), with no host synchronisation, as
:func:`dfil.train.step.train_step`. An attempt (:func:`train_pack_attempt`) is the
training loop of :mod:`dfil.train.loop` over the K seeds at once: each seed's epoch plan
is its solo run's (:func:`~dfil.train.loop.epoch_plan`), and each seed is seen through its
:class:`~dfil.model.pack.SeedView`, so its history, checkpoint and ``resume.pt`` are
what its solo run writes. A pack of one trains bit for bit as the solo loop.

A pack batch is one :class:`~dfil.engine.loader.Batch` over the K seeds' example rows
side by side, seed k's ``sizes[k]`` after the seeds before it (None: equal shares); a
padding-free one also needs its seeds' token bounds (:func:`dfil.model.pack.seed_spans`,
host ints).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np
import torch

from dfil.config.cell import CellConfig, LossConfig, config_hash
from dfil.contracts.rundir import RESUME
from dfil.core.methods import MethodSpec
from dfil.engine.batching import Encoded, batches, concat
from dfil.engine.device import autocast, autocast_dtype, progress, sync_guard
from dfil.engine.loader import Batch, Loader
from dfil.engine.predict import Collector, layout_for
from dfil.engine.provenance import device_name
from dfil.model.dual_path import HeadOutputs
from dfil.model.losses import LossTerms
from dfil.model.objective import compute_loss
from dfil.model.pack import PackedModel, SeedView, seed_rows, seed_spans, seed_widths
from dfil.train.finite import FiniteWatch
from dfil.train.loop import (
    Place,
    TrainData,
    class_weights,
    epoch_plan,
    finish_epoch,
    optimization,
    validation_record,
)
from dfil.train.resume import AttemptState, StopFlag
from dfil.util.errors import CheckpointError, NonFiniteLoss, Preempted


@dataclass(frozen=True)
class PackSetup:
    """What every step of one pack uses: as :class:`dfil.train.step.StepSetup`, with
    seed k's optimizer and schedule (``optimizers[k]``, ``schedulers[k]``; one optimizer
    over every seed's tensors also works, AdamW updating per tensor) and class weights
    ``weights[k] [Q]`` (None: unweighted)."""

    pack: PackedModel
    optimizers: Sequence[torch.optim.Optimizer]
    schedulers: Sequence[torch.optim.lr_scheduler.LRScheduler]
    loss: LossConfig
    weights: Sequence[torch.Tensor | None]
    grad_clip: float
    dtype: torch.dtype | None
    spec: MethodSpec = field(init=False)
    per_seed: tuple[tuple[torch.nn.Parameter, ...], ...] = field(init=False)
    device: torch.device = field(init=False)

    def __post_init__(self):
        pack = self.pack
        object.__setattr__(self, "spec", pack.heads[0].spec)
        object.__setattr__(self, "per_seed", tuple(tuple(pack.seed_parameters(k))
                                                   for k in range(len(pack.seeds))))
        object.__setattr__(self, "device", next(pack.parameters()).device)


def forward_pack(pack: PackedModel, batch: Batch, bounds: Sequence[int] | None = None,
                 sizes: Sequence[int] | None = None) -> list[HeadOutputs]:
    """Each seed's head outputs for a pack ``batch`` of any layout, seed k's ``sizes[k]``
    rows (None: equal shares). ``bounds`` (host ints, :func:`batch_bounds`): a
    padding-free batch's ``[K + 1]`` token bounds of its seeds; with cached token states
    (attention pooling), each seed's ``[K]`` token width; else None."""
    if batch.features is not None:
        return pack.forward_features(batch.features, batch.states, batch.attention_mask,
                                     sizes, bounds)
    if batch.cu_seq_lens is None:
        return pack.forward_padded(batch.input_ids, batch.attention_mask, batch.last, sizes)
    if bounds is None:
        raise ValueError("a padding-free pack batch needs its seeds' token bounds")
    return pack.forward_packed(batch.input_ids, batch.position_ids, batch.last,
                               batch.cu_seq_lens, batch.max_length, bounds, sizes)


def batch_bounds(loader: Loader, index: np.ndarray, sizes: Sequence[int]) -> list[int] | None:
    """What :func:`forward_pack` needs beyond the batch of rows ``index [B]`` (seed k's
    ``sizes[k]``), as host ints from the loader's host lengths (no device read): a
    padding-free batch's ``[K + 1]`` token bounds of its seeds (:func:`seed_spans`), or
    with cached token states each seed's ``[K]`` token width (:func:`seed_widths`); else
    None."""
    lengths = loader.enc.lengths[index]
    if loader.layout == "packed":
        return seed_spans(lengths, sizes)
    if loader.states is not None:
        return seed_widths(lengths, sizes)
    return None


def pack_step(setup: PackSetup, batch: Batch, bounds: Sequence[int] | None = None,
              sizes: Sequence[int] | None = None) -> list[LossTerms]:
    """Forward, each seed's loss, one backward, per-seed clipping and each seed's update
    for a pack ``batch`` (``bounds``: :func:`batch_bounds`); each seed's loss terms
    (device scalars, graph-free)."""
    k_seeds = len(setup.per_seed)
    sizes = sizes or [batch.size // k_seeds] * k_seeds
    with autocast(setup.device, setup.dtype):
        outs = forward_pack(setup.pack, batch, bounds, sizes)
    terms = [compute_loss(out, batch.y[a:b], batch.p[a:b], setup.spec, setup.loss,
                          setup.weights[k])
             for k, (out, (a, b)) in enumerate(zip(outs, pairwise(seed_rows(sizes)),
                                                   strict=True))]
    total = terms[0].total
    for t in terms[1:]:
        total = total + t.total
    total.backward()
    for params in setup.per_seed:
        torch.nn.utils.clip_grad_norm_(params, setup.grad_clip)
    for optimizer, scheduler in zip(setup.optimizers, setup.schedulers, strict=True):
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
    return [LossTerms(**{n: v.detach() for n, v in vars(t).items()}) for t in terms]


class Unpackable(ValueError):
    """These seeds cannot train as one pack (their data or positions differ); each trains
    on its own instead."""


@dataclass
class Seed:
    """One seed of a pack attempt: its cell, place (whose log names the seed), data, view
    and state; ``failed`` the error that ended it (a non-finite loss) while the others
    go on."""

    cell: CellConfig
    place: Place
    data: TrainData
    view: SeedView
    state: AttemptState
    failed: NonFiniteLoss | None = None


@dataclass(frozen=True)
class PackRun:
    """What one pack attempt trains with: its seeds, the step's setup, and batch loaders
    over the seeds' training and validation sets joined (seed k's rows from
    ``train_at[k]``, ``val_at[k]``)."""

    seeds: list[Seed]
    setup: PackSetup
    train: Loader
    val: Loader
    train_at: list[int]
    val_at: list[int]

    @property
    def live(self) -> list[Seed]:
        return [s for s in self.seeds if s.failed is None]


def train_pack_attempt(pack: PackedModel, cells: Sequence[CellConfig],
                       datas: Sequence[TrainData], places: Sequence[Place]
                       ) -> list[dict | NonFiniteLoss]:
    """Train the seeds of ``pack`` (seed k: ``cells[k]``, ``datas[k]``, ``places[k]``) in
    place for one attempt; each seed's summary as :func:`dfil.train.loop.train_attempt`
    returns it, with ``pack`` (its seeds and the device they trained on), or the
    :class:`NonFiniteLoss` that ended it.
    Raises Preempted on SIGTERM (every live seed's state saved), :class:`Unpackable`
    when the seeds' data sizes or resumed positions differ."""
    run = _set_up(pack, cells, datas, places)
    epochs = cells[0].train.epochs
    started = time.perf_counter()
    with StopFlag() as stop:
        while run.live and run.live[0].state.epoch < epochs:
            _run_epoch(run, stop)
            _end_epoch(run)
    # Where the seeds trained: their summaries are written later, by jobs without a GPU.
    together = {"seeds": list(pack.seeds), "size": len(pack.seeds),
                "device": device_name(run.setup.device)}
    return [s.failed if s.failed is not None else {
        "attempt": s.place.number, "stop_grad_p": s.cell.model.loss.stop_grad_p,
        "best_epoch": s.state.best_epoch, "best_val_loss": s.state.best_val_loss,
        "final": s.state.history[-1], "resumes": s.state.resumes,
        "train_seconds_this_process": time.perf_counter() - started, "pack": together}
        for s in run.seeds]


def _set_up(pack: PackedModel, cells, datas, places) -> PackRun:
    """Each seed's view, optimizer, schedule and state (fresh, or where its
    ``resume.pt`` left it), and the loaders over the joined sets."""
    device = next(pack.parameters()).device
    for what in ("train", "val"):
        if len({len(getattr(d, what)) for d in datas}) > 1:
            raise Unpackable(f"the seeds' {what} sets differ in size")
    seeds, optimizers, schedulers, weights = [], [], [], []
    streams = pack.dropout_streams or [None] * len(cells)
    for k, (cell, data, place) in enumerate(zip(cells, datas, places, strict=True)):
        view = SeedView(pack, k)
        optimizer, scheduler = optimization(view, cell, len(data.train))
        state = AttemptState(view, optimizer, scheduler, config_hash(cell), place.number,
                             identity=place.identity, stream=streams[k])
        seed = Seed(cell, place, data, view, state)
        try:
            resumed = state.resume(place.run_dir / RESUME)
        except CheckpointError as err:  # the seed's own run reports or continues it
            raise Unpackable(str(err)) from err
        if resumed:
            seed.place.log(f"resuming attempt {place.number} at epoch {state.epoch + 1}, "
                           f"step {state.step}")
        seeds.append(seed)
        optimizers.append(optimizer)
        schedulers.append(scheduler)
        weights.append(class_weights(cell, data.train, device))
    if len({(s.state.epoch, s.state.step) for s in seeds}) > 1:
        raise Unpackable("the seeds' resume states stand at different steps: " + ", ".join(
            f"seed {s.cell.train.seed} at epoch {s.state.epoch + 1} step {s.state.step}"
            for s in seeds))
    cfg = cells[0].train
    setup = PackSetup(pack, optimizers, schedulers, cells[0].model.loss, weights,
                      cfg.grad_clip, autocast_dtype(cfg.precision, device))
    train, train_at = _joined([d.train for d in datas])
    val, val_at = _joined([d.val for d in datas])
    layout = layout_for(pack, train, cfg.batching)
    pad = datas[0].pad_id
    run = PackRun(seeds, setup, Loader(train, device, layout, pad),
                  Loader(val, device, layout_for(pack, val, "padded"), pad), train_at, val_at)
    grouped = ", grouped by length" if cfg.group_by_length and layout != "features" else ""
    for seed in seeds:
        seed.place.log(f"batches: {layout}{grouped}, in a pack of {len(seeds)} seeds "
                       f"({', '.join(str(s) for s in pack.seeds)})")
    return run


def _joined(sets: Sequence[Encoded]) -> tuple[Encoded, list[int]]:
    """The seeds' sets one after the other, and where each seed's rows start."""
    return concat(sets), seed_rows([len(s) for s in sets])[:-1]


def _step_rows(plans: Sequence[Sequence[np.ndarray]], at: Sequence[int],
               start: int) -> tuple[list[np.ndarray], list[list[int]]]:
    """From step ``start`` on: each step's rows of the joined set (seed k's from its
    plan, shifted by ``at[k]``) and each seed's share of them."""
    if len({len(plan) for plan in plans}) > 1:
        raise Unpackable("the seeds' epochs have different step counts")
    rows, sizes = [], []
    for i in range(start, len(plans[0])):
        rows.append(np.concatenate([plan[i] + a for plan, a in zip(plans, at, strict=True)]))
        sizes.append([len(plan[i]) for plan in plans])
    return rows, sizes


def _run_epoch(run: PackRun, stop: StopFlag) -> None:
    """The steps left in the epoch for every seed, as :func:`dfil.train.loop._run_epoch`
    runs them for one: each seed's loss terms added to its state's sums; on SIGTERM every
    live seed's state after the step is saved, then Preempted raised."""
    setup, live = run.setup, run.live
    setup.pack.train()
    first = live[0].state
    plans = [epoch_plan(s.cell, s.data.train, first.epoch) for s in run.seeds]
    rows, sizes = _step_rows(plans, run.train_at, first.step)
    for s in live:
        s.state.sums = {k: v.to(setup.device) for k, v in s.state.sums.items()}
    watches = [FiniteWatch(setup.device) for _ in run.seeds]
    total = len(plans[0])
    bar = progress(range(first.step, total), total=total, initial=first.step,
                   desc=f"pack of {len(run.seeds)} epoch {first.epoch + 1}/"
                        f"{run.seeds[0].cell.train.epochs}")
    with sync_guard() as guard:
        for s, batch, index, size in zip(bar, run.train(rows), rows, sizes, strict=True):
            terms = pack_step(setup, batch, batch_bounds(run.train, index, size), size)
            for seed, t, n, watch in zip(run.seeds, terms, size, watches, strict=True):
                if seed.failed is None:
                    for k, v in vars(t).items():  # stays on device: no host sync
                        seed.state.sums[k] = seed.state.sums.get(k, 0.0) + v * n
                    watch.add(t.total, s + 1)
            guard.arm()
            if stop.raised:
                guard.disarm()
                _check(run, watches)  # a diverged seed saves no state to resume
                _on_signal(run, stop, first.epoch, s + 1)
    _check(run, watches)


def _check(run: PackRun, watches: Sequence[FiniteWatch]) -> None:
    """End the seeds whose loss went non-finite this epoch (the others go on)."""
    for seed, watch in zip(run.seeds, watches, strict=True):
        if seed.failed is None:
            try:
                watch.check(seed.state.epoch + 1)
            except NonFiniteLoss as err:
                seed.failed = err
                seed.place.log(str(err))


def _on_signal(run: PackRun, stop: StopFlag, epoch: int, step: int) -> None:
    """Save every live seed's state after ``step`` of epoch ``epoch`` (0-based), then stop
    (Preempted)."""
    for seed in run.live:
        seed.state.step = step
        seed.state.save(seed.place.run_dir / RESUME)
    where = ", ".join(str(s.place.run_dir / RESUME) for s in run.live) or "none (all diverged)"
    raise Preempted(f"{stop.raised} at epoch {epoch + 1}, step {step}; the pack's states "
                    f"saved to {where}")


def _end_epoch(run: PackRun) -> None:
    """Validate every seed, then :func:`dfil.train.loop.finish_epoch` for each live one."""
    for seed, val in zip(run.seeds, _validate(run), strict=True):
        if seed.failed is not None:
            continue
        try:
            finish_epoch(seed.state, seed.view, seed.cell, seed.place, len(seed.data.train),
                         val)
        except NonFiniteLoss as err:
            seed.failed = err
            seed.place.log(str(err))


def _validate(run: PackRun) -> list[dict]:
    """Each seed's validation numbers (:func:`dfil.train.loop.validation_record`) from
    one pass over the seeds' validation sets side by side, read at its end."""
    setup = run.setup
    vals = [s.data.val for s in run.seeds]
    plans = [batches(np.arange(len(v)), s.cell.train.eval_batch_size)
             for v, s in zip(vals, run.seeds, strict=True)]
    rows, sizes = _step_rows(plans, run.val_at, 0)
    totals = [torch.zeros((), dtype=torch.float64, device=setup.device) for _ in vals]
    collects = [Collector(setup.spec) for _ in vals]
    setup.pack.eval()
    with torch.no_grad(), sync_guard() as guard:
        for batch, index, size in zip(run.val(rows), rows, sizes, strict=True):
            with autocast(setup.device, setup.dtype):
                outs = forward_pack(setup.pack, batch, batch_bounds(run.val, index, size),
                                    size)
            for k, (out, (a, b)) in enumerate(zip(outs, pairwise(seed_rows(size)),
                                                   strict=True)):
                terms = compute_loss(out, batch.y[a:b], batch.p[a:b], setup.spec,
                                     setup.loss, setup.weights[k])
                totals[k] += terms.total.double() * (b - a)
                collects[k].add(out)
            guard.arm()
    return [validation_record(total, collect, val, heads) for total, collect, val, heads
            in zip(totals, collects, vals, setup.pack.heads, strict=True)]


