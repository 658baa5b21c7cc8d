"""Training one cell into its run directory: the attempts, with collapse remediation.

Writes ``cell.yaml`` (unless the cell was read from it), then per attempt the loop's
outputs (:mod:`dfil.train.loop`) and ``attempts.json``; when every attempt is done, a LoRA
run's ``adapter/`` (its best checkpoint's LoRA in peft's format, :mod:`dfil.model.adapter`)
and ``train_summary.json``. Each of them records the run's identity: its cell, config hash
and the sha256 of every input it trains on (:mod:`dfil.contracts.identity`); outputs
recorded for another identity are moved aside and the cell trains afresh, the summary's
``retrained`` saying why (:mod:`dfil.train.superseded`). An MF branch that collapses
(App. D.2) is retrained once with stop-gradient on p. A CUDA out-of-memory error moves the
run's memory plan one remedy on (:mod:`dfil.train.memory`) for the retry.
File names: :mod:`dfil.contracts.rundir`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import torch

from dfil.config.cell import (
    CellConfig,
    config_hash,
    configuration,
    dump_cell,
    load_cell,
    with_stop_grad_p,
)
from dfil.contracts.failure import is_failure
from dfil.contracts.identity import KEY as IDENTITY
from dfil.contracts.identity import differences, run_identity
from dfil.contracts.pack import sealable
from dfil.contracts.rundir import (
    ATTEMPT1_BEST,
    ATTEMPTS,
    BEST,
    CELL,
    RESUME,
    SUMMARY,
    read_run_json,
)
from dfil.core.methods import method_spec
from dfil.engine.checkpoint import export_adapter, read_checkpoint
from dfil.engine.device import deterministic, pick_device
from dfil.engine.features import LazyTokenizer, encode_frame
from dfil.engine.frames import task_frames
from dfil.engine.inputs import stamped_inputs, trained_inputs
from dfil.engine.provenance import provenance
from dfil.engine.truncation import truncation, truncation_line
from dfil.model.attention import describe as describe_attention
from dfil.model.dual_path import build_model
from dfil.model.pack import build_pack
from dfil.train.loop import Place, TrainData, train_attempt
from dfil.train.memory import MemoryPlan, applied, next_plan, read_plan, write_plan
from dfil.train.pack import Unpackable, train_pack_attempt
from dfil.train.resume import saved_place
from dfil.train.superseded import supersede, trained_record
from dfil.util.atomic import atomic_write_bytes, atomic_write_json
from dfil.util.errors import CheckpointError, ConfigError, OutOfMemory, RunFileError

FROZEN_NOTE = ("frozen backbone: heads trained on cached final-layer features (last token; "
               "every token for attention pooling), no LoRA")


@dataclass(frozen=True)
class Job:
    """What every attempt of one cell shares: where it writes, its config hash, the
    device, the task's data frames and the tokenizer, the log, the memory plan, and
    whether this is the job's last try, and the run's identity record."""

    run_dir: Path
    config_hash: str
    device: torch.device
    frames: dict[str, pd.DataFrame]
    tokenizer: LazyTokenizer
    log: Callable[[str], None]
    plan: MemoryPlan = MemoryPlan()
    identity: dict | None = None


def train_cell(cell_path: str | Path, run_dir: str | Path, log=print) -> dict:
    """Train the cell at ``cell_path`` into ``run_dir`` (resuming if it was interrupted)."""
    started = time.perf_counter()
    cell_path, run_dir = Path(cell_path), Path(run_dir)
    cell = load_cell(cell_path)
    with deterministic(cell.train.deterministic):  # before any CUDA work
        return _train(cell, cell_path, run_dir, started, log)


def _train(cell: CellConfig, cell_path: Path, run_dir: Path, started: float, log) -> dict:
    # The data first, also for a method that trains nothing (evaluation reads it): a bad
    # source stops the job before anything in run_dir is moved.
    frames = task_frames(cell)
    trains = method_spec(cell.model.method).trains
    run_dir.mkdir(parents=True, exist_ok=True)
    chash = config_hash(cell)
    inputs = stamped_inputs(cell)
    identity = run_identity(cell.name, chash, trained_inputs(inputs))
    retrained = _prepare(run_dir, cell, cell_path, identity, log)
    plan = read_plan(run_dir)
    if plan.ooms:
        log(f"memory plan after {len(plan.ooms)} out-of-memory error(s): "
            f"gradient checkpointing {'on' if plan.gradient_checkpointing else 'as configured'}"
            f", micro-batch {plan.micro_batch_size or cell.train.batch_size} of "
            f"{cell.train.batch_size}")
    device = pick_device()
    attempts = None
    if trains:
        job = Job(run_dir, chash, device, frames,
                  LazyTokenizer(cell.model.backbone), log, plan, identity)
        attempts = _out_of_memory_guarded(cell, job)
        if cell.model.adapter == "lora":
            export_adapter(run_dir)
    summary = train_summary(cell, identity, retrained, attempts,
                            len(frames["train"]) if trains else 0)
    summary["provenance"] = provenance(device, time.perf_counter() - started,
                                       inputs, {"memory": plan.record()})
    atomic_write_json(run_dir / SUMMARY, summary)
    return summary


def train_summary(cell: CellConfig, identity: dict, retrained: dict | None,
                  attempts: list[dict] | None, train_examples: int) -> dict:
    """``train_summary.json`` but its provenance: the cell, its identity, what
    :func:`_prepare` moved aside (``retrained``), and its ``attempts`` (None: the method
    trains nothing) on ``train_examples`` training examples."""
    summary = {"cell": cell.name, "config_hash": identity["config_hash"], IDENTITY: identity,
               "method": cell.model.method,
               "frozen_backbone": cell.model.adapter == "none", "attempts": []}
    if retrained:
        summary["retrained"] = retrained
    if cell.model.adapter == "none":
        summary["note"] = FROZEN_NOTE
    if cell.data.standin:
        summary["data_note"] = "synthetic stand-in data, not the paper's dataset"
    if attempts is None:
        summary["trained"] = False
        return summary
    summary.update(attempts=attempts, remediated=len(attempts) > 1, trained=True,
                   train_examples=train_examples)
    if "retrained" not in summary and attempts[0].get("retrained"):  # by its pack
        summary["retrained"] = attempts[0]["retrained"]
    return summary


def _out_of_memory_guarded(cell: CellConfig, job: Job) -> list[dict]:
    """:func:`_attempts`; a CUDA out-of-memory error moves the memory plan one remedy on
    and raises :class:`OutOfMemory` (``retry`` False when nothing is left to try)."""
    try:
        return _attempts(cell, job)
    except RuntimeError as err:  # torch.OutOfMemoryError, or a kernel's own CUDA OOM
        if not (isinstance(err, torch.OutOfMemoryError) or "out of memory" in str(err)):
            raise
        message = str(err).strip().splitlines()[0] if str(err).strip() else "out of memory"
        plan = next_plan(job.plan, cell, {"message": message})
        if plan is None:
            raise OutOfMemory(f"CUDA out of memory with gradient checkpointing on and a "
                              f"micro-batch of 1: nothing left to try ({message})") from err
        write_plan(job.run_dir, plan)
        raise OutOfMemory(f"CUDA out of memory ({message}); the retry trains with gradient "
                          f"checkpointing on and a micro-batch of "
                          f"{plan.micro_batch_size or cell.train.batch_size} (memory plan in "
                          f"{job.run_dir}), the cell's config and hash unchanged",
                          retry=True) from err


def _prepare(run_dir: Path, cell: CellConfig, cell_path: Path, identity: dict,
             log) -> dict | None:
    """Move aside outputs made for another config or from other inputs (what the
    summary's ``retrained`` then records: why, and where they went; None when nothing
    was moved); write the cell's ``cell.yaml`` unless that is the file the cell was read
    from (a rule never rewrites its own input)."""
    old = trained_record(run_dir)
    why = differences(old, identity) if old is not None else []
    retrained = None
    if why:
        moved = supersede(run_dir, str(old.get("config_hash")))
        retrained = {"because": why, "superseded": moved.relative_to(run_dir).as_posix()}
        was = old.get("config_hash")
        head = ("were trained on other inputs" if was == identity["config_hash"] else
                f"were trained for config {was}, this cell is {identity['config_hash']}")
        log(f"{run_dir}: its outputs {head} ({'; '.join(why)}): moved them to {moved} and "
            "training afresh")
    target = run_dir / CELL
    if not (target.exists() and target.samefile(cell_path)):
        atomic_write_bytes(target, dump_cell(cell).encode())
    return retrained


def _attempts(cell: CellConfig, job: Job) -> list[dict]:
    """Attempt 1 and, if its MF branch collapsed (App. D.2), attempt 2 with stop-gradient
    on p; an attempt recorded in ``attempts.json`` is not trained again."""
    done = _attempts_so_far(job.run_dir)
    if not done:
        result = _attempt(1, cell, job)
        if needs_remediation(result, cell):  # attempt 2 will write its own best checkpoint
            atomic_write_bytes(job.run_dir / ATTEMPT1_BEST, (job.run_dir / BEST).read_bytes())
        _record(done, result, job)
    if needs_remediation(done[0], cell):
        job.log(f"MF accuracy {done[0]['final'].get('val_acc_mf'):.3f} is below "
                f"{cell.train.collapse_threshold}: retraining with stop-gradient on p")
        if len(done) < 2:
            _record(done, _attempt(2, with_stop_grad_p(cell), job), job)
    return done


def _attempt(number: int, cell: CellConfig, job: Job) -> dict:
    """One attempt: build the model, encode the data, train; returns its summary, with
    how many of the training and validation prompts were cut to ``max_length``."""
    frozen = cell.model.adapter == "none"
    # Frozen mode builds the heads alone; the backbone is loaded only if a feature set is
    # not cached yet (frozen_features). The memory plan may turn checkpointing on for the
    # build alone: the cell (its hash, its checkpoint's config) stays as configured.
    model = build_model(applied(cell, job.plan).model, seed=cell.train.seed,
                        backbone=not frozen).to(job.device)
    if not frozen:
        job.log("backbone " + describe_attention(cell.model.backbone.attn_implementation,
                                                 model.backbone))
    data = _encode(model, cell, job)
    cut = {split: truncation(enc, cell.data.max_length)
           for split, enc in (("train", data.train), ("val", data.val))}
    if line := truncation_line(cut):
        job.log(line)
    place = Place(job.run_dir, number, job.log, job.plan.micro_batch_size, job.identity)
    return {**train_attempt(model, cell, data, place), "truncation": cut}


def _encode(model, cell: CellConfig, job: Job, heads=None) -> TrainData:
    """The training and validation splits encoded for ``model``; in frozen mode the heads'
    feature standardisation (of ``heads``, default ``model.heads``) is fitted to the
    training pool's features."""
    frozen, frames = cell.model.adapter == "none", job.frames
    if frozen and "train_pool" in frames:
        # A few-shot subset's features are rows of its pool's: one backbone pass serves
        # every budget and seed drawn from that pool.
        pool = encode_frame(model, job.tokenizer, cell, frames["train_pool"])
        train = pool.take(frames["train"]["pool_row"])
    else:
        pool = train = encode_frame(model, job.tokenizer, cell, frames["train"])
    data = TrainData(train=train, val=encode_frame(model, job.tokenizer, cell, frames["val"]),
                     pad_id=None if frozen else job.tokenizer.pad_id)
    if frozen:  # heads.feature_norm: statistics of the training pool's features
        (heads or model.heads).fit_feature_norm(pool.features, pool.states)
    return data


@dataclass(frozen=True)
class Together:
    """What :func:`train_together` did, by seed index: the seeds it ``trained`` as one
    pack, and those ``finished`` (before, or in the pack with no remediation ahead: only
    their summary is left to write), with each finished seed's ``summaries`` (its
    ``train_summary.json`` as its own job would write it, the provenance this pack
    process's; for a seed whose summary was written before, that summary)."""

    trained: list[int]
    finished: list[int]
    summaries: dict[int, dict] = field(default_factory=dict)


def train_together(cell_paths: Sequence[str | Path], run_dirs: Sequence[str | Path],
                   log=print) -> Together:
    """Attempt 1 of the seeds of one cell configuration (``cell_paths[i]`` into
    ``run_dirs[i]``) as one pack (:mod:`dfil.train.pack`).

    A seed joins the pack unless it is finished (its summary records this identity, or
    its attempts are all done and only its summary is left), its attempt 1 is done or it
    resumes attempt 2, or an out-of-memory error gave it a memory plan (:func:`_role`).
    Everything else (the summary, collapse remediation, the seeds left out, a seed whose
    loss went non-finite in the pack, from its last epoch's state) is
    :func:`train_cell`'s, run for each seed after this. Seeds whose data sizes or resumed
    positions differ, or a pack that runs out of memory, train alone instead; a seed whose
    run directory holds a damaged file (checkpoint, memory plan, summary, attempts) is
    left to its own job, and so is the summary of a seed the pack cannot seal."""
    cell_paths, run_dirs = [Path(p) for p in cell_paths], [Path(r) for r in run_dirs]
    cells = [load_cell(p) for p in cell_paths]
    check_seeds(cells, cell_paths)
    with deterministic(cells[0].train.deterministic):  # before any CUDA work
        return _together(cells, cell_paths, run_dirs, log, time.perf_counter())


def check_seeds(cells: Sequence[CellConfig], paths: Sequence[Path]) -> None:
    """A pack's cells are one configuration's seeds: equal but for ``train.seed``, each
    seed once; else a :class:`ConfigError` naming the files."""
    first = configuration(cells[0])
    for cell, path in zip(cells[1:], paths[1:], strict=True):
        if configuration(cell) != first:
            raise ConfigError(f"{path}: not a seed of {paths[0]}'s configuration (the cells "
                              "of a pack differ only in train.seed)")
    seeds = [c.train.seed for c in cells]
    if len(set(seeds)) < len(seeds):
        raise ConfigError(f"{', '.join(map(str, paths))}: a seed given twice ({seeds})")


def _together(cells: list[CellConfig], paths: list[Path], run_dirs: list[Path],
              log, started: float) -> Together:
    if not method_spec(cells[0].model.method).trains:
        return Together([], [])
    device = pick_device()
    members, seats, finished = [], {}, []
    for i, (cell, path, run_dir) in enumerate(zip(cells, paths, run_dirs, strict=True)):
        frames = task_frames(cell)
        chash = config_hash(cell)
        inputs = stamped_inputs(cell)
        identity = run_identity(cell.name, chash, trained_inputs(inputs))
        try:
            role, retrained = _role(cell, path, run_dir, identity,
                                    len(cells) > 1 and cell.model.adapter == "lora", log)
            plan = read_plan(run_dir)
        except (CheckpointError, RunFileError) as err:  # the seed's own run reports it
            log(f"{run_dir}: trains on its own: {err}")
            continue
        job = Job(run_dir, chash, device, frames, LazyTokenizer(cell.model.backbone),
                  _seed_log(log, cell.train.seed), plan, identity)
        seats[i] = (job, inputs, retrained)
        if role == "finished":
            finished.append(i)
        elif role == "joins":
            members.append(i)
    trained = _train_members(cells, members, seats, finished, log) if members else []
    finished.sort()
    summaries = {}
    for i in finished:
        try:
            summaries[i] = sealable(_seal(cells[i], *seats[i], started), run_dirs[i])
        except Exception as err:  # the seed's own job meets it, and says so
            log(f"{run_dirs[i]}: its summary is left to its own job: "
                f"{type(err).__name__}: {err}")
    return Together(trained, finished, summaries)


def _train_members(cells: list[CellConfig], members: list[int], seats: dict, finished:
                   list[int], log) -> list[int]:
    """Attempt 1 of the seeds ``members`` as one pack, each recorded in its
    ``attempts.json``; those with no remediation ahead join ``finished``. Returns the
    members, or none when the seeds train one by one instead (unpackable, or the pack ran
    out of memory)."""
    group, jobs = [cells[i] for i in members], [seats[i][0] for i in members]
    try:
        results = _pack_attempt(group, jobs)
    except Unpackable as err:
        log(f"seeds {[c.train.seed for c in group]} train one by one: {err}")
        return []
    except RuntimeError as err:  # torch.OutOfMemoryError, or a kernel's own CUDA OOM
        if not (isinstance(err, torch.OutOfMemoryError) or "out of memory" in str(err)):
            raise
        log(f"the pack of seeds {[c.train.seed for c in group]} ran out of memory; they "
            "train one by one")
        return []
    for i, cell, job, result in zip(members, group, jobs, results, strict=True):
        if isinstance(result, Exception):  # the seed's own run meets it again, alone
            continue
        if retrained := seats[i][2]:  # the summary says why, as a seed trained alone does
            result = {**result, "retrained": retrained}
        if needs_remediation(result, cell):  # attempt 2 will write its own best checkpoint
            atomic_write_bytes(job.run_dir / ATTEMPT1_BEST, (job.run_dir / BEST).read_bytes())
        else:
            finished.append(i)
        _record([], result, job)
    return members


def _seal(cell: CellConfig, job: Job, inputs: dict, retrained: dict | None,
          started: float) -> dict:
    """The ``train_summary.json`` of a seed whose training is complete, as its own job's
    :func:`train_cell` would write it (its LoRA adapter exported), the provenance this
    pack process's since ``started``; a summary written before is returned as it is."""
    if _finished(job.run_dir, job.identity):
        return read_run_json(job.run_dir / SUMMARY, f"delete {job.run_dir} and train it again")
    attempts = _attempts_so_far(job.run_dir)
    if cell.model.adapter == "lora":
        export_adapter(job.run_dir)
    summary = train_summary(cell, job.identity, retrained, attempts, len(job.frames["train"]))
    summary["provenance"] = provenance(job.device, time.perf_counter() - started, inputs,
                                       {"memory": job.plan.record()})
    return summary


def _role(cell: CellConfig, path: Path, run_dir: Path, identity: dict, streams: bool,
          log) -> tuple[str, dict | None]:
    """What the seed in ``run_dir`` does in its pack, with what :func:`_prepare` moved
    aside for it: ``finished`` (its summary records this identity, or its attempts are
    all done: attempt 1 with no collapse remediation to follow, or attempt 2 as well; only
    its summary is left to write), ``joins`` (its attempt 1 is not done, and
    :func:`_joins`), or ``alone`` (its own job trains it). A damaged file is a
    :class:`CheckpointError`."""
    if _finished(run_dir, identity):
        return "finished", None
    run_dir.mkdir(parents=True, exist_ok=True)
    retrained = _prepare(run_dir, cell, path, identity, log)
    done = _attempts_so_far(run_dir)
    if done and (len(done) > 1 or not needs_remediation(done[0], cell)):
        return "finished", retrained  # by an earlier pack, its summary not written yet
    return ("joins" if not done and _joins(run_dir, streams) else "alone"), retrained


def _joins(run_dir: Path, streams: bool) -> bool:
    """Whether the seed in ``run_dir``, its attempt 1 not done, joins a pack: no
    out-of-memory error gave it a memory plan, and any resume state is attempt 1's,
    holding a pack's dropout stream where the pack draws them (``streams``). A damaged
    file is a :class:`CheckpointError`."""
    if read_plan(run_dir).ooms:
        return False
    saved = saved_place(run_dir / RESUME)
    return saved is None or (saved["attempt"] == 1 and (saved["stream"] or not streams))


def _seed_log(log, seed: int):
    return lambda line: log(f"seed {seed}: {line}")


def _pack_attempt(cells: list[CellConfig], jobs: list[Job]) -> list[dict | Exception]:
    """Attempt 1 of ``cells`` (one configuration's seeds) as one pack."""
    frozen = cells[0].model.adapter == "none"
    pack = build_pack(applied(cells[0], jobs[0].plan).model,
                      [c.train.seed for c in cells]).to(jobs[0].device)
    if not frozen:
        jobs[0].log("backbone " + describe_attention(
            cells[0].model.backbone.attn_implementation, pack.backbone))
    datas, places = [], []
    for k, (cell, job) in enumerate(zip(cells, jobs, strict=True)):
        data = _encode(pack, cell, job, pack.heads[k])
        cut = {split: truncation(enc, cell.data.max_length)
               for split, enc in (("train", data.train), ("val", data.val))}
        if line := truncation_line(cut):
            job.log(line)
        datas.append((data, cut))
        places.append(Place(job.run_dir, 1, job.log, None, job.identity))
    results = train_pack_attempt(pack, cells, [d for d, _ in datas], places)
    return [r if isinstance(r, Exception) else {**r, "truncation": cut}
            for r, (_, cut) in zip(results, datas, strict=True)]


def _finished(run_dir: Path, identity: dict) -> bool:
    """Whether ``run_dir`` holds a finished training of this identity."""
    path = run_dir / SUMMARY
    if not path.is_file():
        return False
    summary = read_run_json(path, f"delete {run_dir} and run dfil train again")
    return not is_failure(summary) and not differences(summary.get(IDENTITY) or {}, identity)


def _record(done: list[dict], result: dict, job: Job) -> None:
    """Add a finished attempt to ``attempts.json``; its resume state is no longer needed."""
    done.append({**result, "config_hash": job.config_hash, IDENTITY: job.identity})
    atomic_write_json(job.run_dir / ATTEMPTS, done)
    (job.run_dir / RESUME).unlink(missing_ok=True)


def _attempts_so_far(run_dir: Path) -> list[dict]:
    """The attempts ``attempts.json`` records; a run counts as trained only with an intact
    checkpoint."""
    path = run_dir / ATTEMPTS
    if not path.is_file():
        return []
    try:
        read_checkpoint(run_dir / BEST)
    except CheckpointError as err:
        raise CheckpointError(f"{err}; the run is not trained after all: delete "
                              f"{run_dir} and run dfil train again") from None
    return read_run_json(path, f"delete {run_dir} and run dfil train again")


def needs_remediation(summary: dict, cell: CellConfig) -> bool:
    """App. D.2: an MF branch ending below the threshold is retrained with stop-gradient."""
    acc = summary["final"].get("val_acc_mf")
    return (acc is not None and cell.train.collapse_threshold > 0
            and not cell.model.loss.stop_grad_p and acc < cell.train.collapse_threshold)
