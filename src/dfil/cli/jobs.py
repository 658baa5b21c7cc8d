"""``dfil train`` and ``dfil evaluate`` as the workflow's jobs run them: exit codes, and
on Snakemake's last attempt a failure record instead of a failure.

Snakemake runs a job again on failure (``retries``); with keep-going, the workflow tells
its jobs which attempt is the last (``DFIL_LAST_ATTEMPT``, set by the Snakefile's
``onstart``), and a job given ``--attempt`` that number turns its failure into a record
(:mod:`dfil.contracts.failure`) and exits 0, so the tables are built from the cells that
finished (a SIGTERM at the SLURM time limit on the last attempt too:
:mod:`dfil.cluster.timelimit`; a preemption then is requeued by SLURM and resumes). A
failure that a retry repeats (a non-finite loss, a gated repo whose fetch was refused,
out of memory with no remedy left) is recorded on any attempt, so Snakemake does not run
it again. Otherwise, and without keep-going, a failure is an exit status: 143 preempted
(state saved), 4 diverged (a non-finite loss), 3 out of memory (the memory plan names
what the retry changes), 2 bad input (a gated repo among them), 1 a bug.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import sys
import traceback
from pathlib import Path

from dfil.util.errors import (
    GatedRepo,
    InputError,
    MissingInputError,
    NonFiniteLoss,
    OutOfMemory,
    Preempted,
)

#: The exit status of a training that ran out of GPU memory and will retry differently.
EXIT_OOM = 3
#: The exit status of a training whose loss became non-finite (not recorded: no keep-going).
EXIT_DIVERGED = 4
#: The variable naming Snakemake's last attempt (set only with keep-going).
LAST = "DFIL_LAST_ATTEMPT"


def set_last_attempt(keep_going: bool, retries: int) -> None:
    """With keep-going, name Snakemake's last attempt (``retries`` + 1) for the jobs it
    starts, local or SLURM's (they inherit the environment); a job's own Snakemake keeps
    the value it inherited."""
    if keep_going and LAST not in os.environ:
        os.environ[LAST] = str(retries + 1)


def last_try(attempt: int | None) -> bool:
    """Whether ``attempt`` (Snakemake's, 1-based) is the workflow's last one."""
    return attempt is not None and recording() and attempt >= int(os.environ[LAST])


def recording() -> bool:
    """Whether the workflow turns last attempts' failures into records (keep-going)."""
    return os.environ.get(LAST, "").isdigit()


def _record(args, stage: str, reason: str, err: BaseException) -> int:
    """Write the failure record in place of the job's output; exit status 0."""
    from dfil.config.cell import config_hash, load_cell
    from dfil.contracts.failure import DETERMINISTIC, GATED, failure_record, write_failure
    from dfil.contracts.rundir import CELL, SUMMARY

    run = Path(args.out if stage == "train" else args.run)
    cell = load_cell(args.cell if stage == "train" else run / CELL)
    message = (f"{GATED}: {err}; then run the workflow again with `--forcerun hub_fetch`"
               if reason == "gated" else str(err) if reason in DETERMINISTIC
               else f"{type(err).__name__}: {err}")
    record = failure_record(cell.name, config_hash(cell), {
        "reason": reason, "stage": stage, "message": message,
        "log": args.log or "", "attempt": args.attempt})
    if stage == "train":
        write_failure(run / SUMMARY, record)
    else:
        from dfil.evaluate.run import write_failed

        write_failed(run, cell, record)
    when = "for good" if reason in DETERMINISTIC else "on the last attempt"
    print(f"dfil {stage}: gave up {when} ({reason}): {err}; recorded in {run} "
          "(dfil grid status lists it)", file=sys.stderr)
    return 0


@contextlib.contextmanager
def _sole_writer(run_dirs: list[Path], command: str):
    """Be each of ``run_dirs``' one writer (a second writer fails at once, naming this
    one) and stop when the local Snakemake that started this job is killed."""
    from dfil.cluster.dirlock import stop_with_snakemake
    from dfil.cluster.writer import hold_writer

    with contextlib.ExitStack() as stack:
        for run_dir in run_dirs:
            stack.enter_context(hold_writer(run_dir, f"dfil {command}"))
        stop_with_snakemake(lambda text: print(f"dfil {command}: {text}", file=sys.stderr,
                                               flush=True))
        yield


def _reason(err: BaseException) -> str:
    if isinstance(err, GatedRepo):
        return "gated"
    if isinstance(err, OutOfMemory) or "out of memory" in str(err):
        return "OOM"
    return "error"


def cmd_refused(args: argparse.Namespace) -> int:
    """Write the output of a job SLURM's sbatch refused, in its place (the workflow's sbatch
    sends this job): a run's training or evaluation job, its failure record (``refused``,
    sbatch's words, kept in the run directory); a frozen_features job, its stamp with
    sbatch's words, which the cells that read it record as their failure; a train_pack
    job, its record, so that its seeds' own jobs train them one by one."""
    from dfil.cluster.submit import REFUSED, read_refusal, refusal_words
    from dfil.contracts.failure import SBATCH_REFUSED

    if args.pack_record is not None:
        from dfil.contracts.pack import pack_record, write_pack_record

        words = refusal_words({"rule": "train_pack", "refused": args.words or ""})
        write_pack_record(args.pack_record, pack_record(
            [], gave_up={"reason": "refused", "message": words}))
        print(f"dfil refused: {words}; recorded in {args.pack_record} (the pack's seeds "
              "train one by one)")
        return 0
    if args.stamp is not None:
        words = refusal_words({"rule": "frozen_features", "refused": args.words or ""})
        from dfil.util.atomic import atomic_write_json

        atomic_write_json(args.stamp, {SBATCH_REFUSED: words, "files": []})
        print(f"dfil refused: {words}; recorded in {args.stamp} (the next run submits it "
              "again)")
        return 0
    if args.run is None or args.stage is None:
        raise InputError("dfil refused: give --run and --stage, or --stamp")
    refusal = read_refusal(args.run)
    if refusal is None:
        raise MissingInputError(f"{args.run / REFUSED}: no refused submission recorded")
    words = refusal_words(refusal)
    _write_refused(args.run, args.stage, words)
    print(f"dfil refused: {words}; recorded in {args.run} as its {args.stage} failure (the "
          "next run submits it again)")
    return 0


def _write_refused(run: Path, stage: str, words: str, log: str = "", attempt: int = 1) -> None:
    """The failure record of ``run``'s ``stage`` job refused by SLURM (``words``)."""
    from dfil.config.cell import config_hash, load_cell
    from dfil.contracts.failure import failure_record, write_failure
    from dfil.contracts.rundir import CELL, SUMMARY

    cell = load_cell(run / CELL)
    record = failure_record(cell.name, config_hash(cell), {
        "reason": "refused", "stage": stage, "message": words, "log": log,
        "attempt": attempt})
    if stage == "train":
        write_failure(run / SUMMARY, record)
    else:
        from dfil.evaluate.run import write_failed

        write_failed(run, cell, record)


def _refused_features(args: argparse.Namespace, stage: str, run: Path) -> int | None:
    """Record the cell's ``stage`` job as refused when a frozen-feature stamp it reads was
    written for a refused job (exit 0); None when none was."""
    from dfil.contracts.failure import refused_stamp

    words = refused_stamp(args.features or [])
    if words is None:
        return None
    if not recording():
        raise MissingInputError(f"{run}: its frozen features were not computed: {words}")
    _write_refused(run, stage, words, args.log or "", args.attempt or 1)
    print(f"dfil {stage}: not run: {words}; recorded in {run} (dfil grid status lists it)",
          file=sys.stderr)
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    if len(args.cell) != len(args.out):
        raise InputError(f"dfil train: {len(args.cell)} --cell but {len(args.out)} --out; "
                         "give one run directory for each cell")
    seeds = [argparse.Namespace(**{**vars(args), "cell": cell, "out": out})
             for cell, out in zip(args.cell, args.out, strict=True)]
    with _sole_writer([Path(one.out) for one in seeds], "train"):
        if args.pack_record is not None:  # the workflow's pack job
            return _pack_job(seeds, args.pack_record, args.features or [])
        left = [one for one in seeds
                if _refused_features(one, "train", Path(one.out)) is None]
        if len(left) > 1 and (status := _train_together(left, None)) is not None:
            return status
        return _one_by_one(left)


def _pack_job(seeds: list[argparse.Namespace], record: Path, features: list[Path]) -> int:
    """The workflow's ``train_pack`` job: attempt 1 of its seeds together, and its record
    (:mod:`dfil.contracts.pack`); each seed's own job does the rest."""
    from dfil.contracts.failure import refused_stamp

    if (words := refused_stamp(features)) is not None:
        return _pack_failed(record, [str(s.out) for s in seeds], "refused",
                            MissingInputError(words))
    status = _train_together(seeds, record)
    return 0 if status is None else status


def cmd_died(args: argparse.Namespace) -> int:
    """The workflow's ``train_pack`` job after its ``dfil train`` exited non-zero
    (``--status``): a process killed from outside (the kernel's out-of-memory killer,
    ``kill -9``) or crashed records nothing itself. On Snakemake's last attempt the pack's
    record then says it gave up, so each seed's own job trains it alone from its last
    saved state (exit 0); on an earlier attempt, or without keep-going, the status stands
    and Snakemake tries again. A preemption (143: the states are saved, for the requeue
    or the next run to resume) and the record this job's pack wrote before it died are
    kept as they are."""
    from dfil.contracts.pack import read_pack_record

    status, runs = args.status, [str(out) for out in args.out]
    written = read_pack_record(args.pack_record)
    if written is not None and written["runs"] == runs:
        print(f"dfil died: exit status {status} after the pack wrote {args.pack_record}; "
              "the record stands", file=sys.stderr)
        return 0
    if status == 143 or not last_try(args.attempt):
        return status
    how = (f"was killed ({_status_words(status)}): by the kernel's out-of-memory killer, "
           "kill -9 or a crash" if status > 128 else f"exited with status {status}")
    return _pack_failed(args.pack_record, runs, "error", RuntimeError(
        f"the pack's process {how}, before it recorded why; its log: "
        f"{args.log or 'none named'}"))


def _status_words(status: int) -> str:
    """``exit status 137 (SIGKILL)``: a shell's ``$?`` over 128, with its signal."""
    import signal

    try:
        return f"exit status {status} ({signal.Signals(status - 128).name})"
    except ValueError:
        return f"exit status {status}"


def _one_by_one(seeds: list[argparse.Namespace]) -> int:
    """Each seed's own run (:func:`_train`), in order; a preemption stops them all (exit
    143), and so does the time limit on the last attempt, which records the seeds not
    yet run as TIMEOUT."""
    from dfil.cluster.timelimit import at_time_limit

    status = 0
    for i, one in enumerate(seeds):
        code = _train(one)
        if code == 143:
            return code
        status = max(status, code)
        rest = seeds[i + 1:]
        if rest and last_try(one.attempt) and at_time_limit():
            _timed_out(rest, Preempted("the job's time limit came before this seed's turn"))
            return status
    return status


def _timed_out(seeds: list[argparse.Namespace], stop: BaseException) -> None:
    """Record each of ``seeds`` not yet trained as TIMEOUT (the job's last attempt)."""
    for one in seeds:
        if not _trained(Path(one.out)):
            _record(one, "train", "TIMEOUT", stop)


def _trained(run: Path) -> bool:
    """Whether ``run`` holds a finished training's summary (not a failure record)."""
    from dfil.contracts.failure import is_failure, read_record
    from dfil.contracts.rundir import SUMMARY

    record = read_record(run / SUMMARY)
    return isinstance(record, dict) and not is_failure(record)


def _train_together(seeds: list[argparse.Namespace], record: Path | None) -> int | None:
    """Attempt 1 of a pack's seeds (:func:`dfil.train.driver.train_together`), what
    became of it written to ``record`` (the workflow's pack job). None to go on (to each
    seed's own run, when there is no record), else the command's exit status: 143
    preempted, or 0 with the pack's failure on its last attempt (or a deterministic one)
    in ``record``. Without a record a failed pack leaves each seed to its own run, which
    records its own failure."""
    from dfil.contracts.pack import pack_record, write_pack_record
    from dfil.train.driver import train_together

    first = seeds[0]
    last = last_try(first.attempt)
    now = first.attempt is not None and recording()
    runs = [str(s.out) for s in seeds]
    try:
        together = train_together([s.cell for s in seeds], [s.out for s in seeds],
                                  log=functools.partial(print, flush=True))
    except Preempted as stop:
        from dfil.cluster.timelimit import at_time_limit

        if last and at_time_limit():  # no retry follows, and SLURM requeues no timeout
            return _given_up(record, runs, "TIMEOUT", stop, seeds)
        print(f"dfil train: preempted: {stop}; rerun the same command to resume",
              file=sys.stderr)
        return 143
    except Exception as err:
        # a gated repo refuses every retry the same way; anything else on the last attempt
        if not (last or (now and isinstance(err, GatedRepo))):
            raise
        traceback.print_exc()
        return _given_up(record, runs, _reason(err), err, seeds)
    if record is not None:
        write_pack_record(record, pack_record(
            runs, [runs[i] for i in together.trained], [runs[i] for i in together.finished],
            summaries={runs[i]: summary for i, summary in together.summaries.items()}))
    return None


def _given_up(record: Path | None, runs: list[str], reason: str, err: BaseException,
              seeds: list[argparse.Namespace]) -> int | None:
    """A pack given up on: in the workflow's ``record``, else (a command line's pack)
    nothing: each seed's own run goes on, except at the time limit, where the seeds not
    yet finished are recorded as TIMEOUT."""
    if record is not None:
        return _pack_failed(record, runs, reason, err)
    if reason != "TIMEOUT":
        return None
    _timed_out(seeds, err)
    return 0


def _pack_failed(record: Path, runs: list[str], reason: str, err: BaseException) -> int:
    """The pack's failure in its ``record``: each seed's own job then trains it alone,
    from its last saved state."""
    from dfil.contracts.pack import pack_record, write_pack_record

    write_pack_record(record, pack_record(runs, gave_up={"reason": reason,
                                                         "message": str(err)}))
    print(f"dfil train: the pack gave up ({reason}): {err}; each seed's own job trains it "
          f"alone (recorded in {record})", file=sys.stderr)
    return 0


def _train(args: argparse.Namespace) -> int:
    if _summarised_by_pack(args):
        return 0
    from dfil.train.driver import train_cell

    last = last_try(args.attempt)
    # a failure no retry can mend is recorded on the first attempt (keep-going only)
    now = args.attempt is not None and recording()
    try:
        # Flushed per line: a job killed before it exits keeps what it logged.
        train_cell(args.cell, args.out, log=functools.partial(print, flush=True))
    except Preempted as stop:
        from dfil.cluster.timelimit import at_time_limit

        if last and at_time_limit():  # no retry follows, and SLURM requeues no timeout
            return _record(args, "train", "TIMEOUT", stop)
        print(f"dfil train: preempted: {stop}; rerun the same command to resume",
              file=sys.stderr)
        return 143
    except NonFiniteLoss as err:  # deterministic: a retry diverges the same way
        if now:
            return _record(args, "train", "non-finite loss", err)
        print(f"dfil train: {err}", file=sys.stderr)
        return EXIT_DIVERGED
    except GatedRepo as err:  # its fetch was refused: a retry is refused the same way
        if now:
            return _record(args, "train", "gated", err)
        raise
    except OutOfMemory as err:  # nothing left to try: a retry would fail the same way
        if last or (not err.retry and now):
            return _record(args, "train", "OOM", err)
        print(f"dfil train: {err}", file=sys.stderr)
        return EXIT_OOM
    except Exception as err:  # any failure on the last attempt becomes the cell's record
        if not last:
            raise
        traceback.print_exc()
        return _record(args, "train", "error", err)
    return 0


def _summarised_by_pack(args: argparse.Namespace) -> bool:
    """Write the seed's ``train_summary.json`` from the pack record that sealed it
    (``--packed-by``, :func:`dfil.train.sealed.sealed_summary`), with no torch loaded.
    False otherwise: the seed's training, or its summary, is then :func:`_train`'s, which
    meets any error where a last attempt records it."""
    from dfil.contracts.rundir import SUMMARY
    from dfil.train.sealed import sealed_summary
    from dfil.util.atomic import atomic_write_json

    run = Path(args.out)
    summary, why = sealed_summary(args.packed_by, args.cell, run)
    if why:
        print(f"dfil train: {run}: its pack's summary is not taken ({'; '.join(why)}): "
              "the run's own files decide", flush=True)
    if summary is None:
        return False
    atomic_write_json(run / SUMMARY, summary)
    print(f"dfil train: {run}: finished in its pack; summary written from "
          f"{args.packed_by[0]}", flush=True)
    return True


def _failed_training(run: Path) -> bool:
    """Whether ``run``'s training summary is a failure record (its evaluation copies it)."""
    from dfil.contracts.failure import is_failure, read_record
    from dfil.contracts.rundir import SUMMARY

    return is_failure(read_record(run / SUMMARY))


def cmd_evaluate(args: argparse.Namespace) -> int:
    from dfil.evaluate.run import evaluate_run

    if not args.run.is_dir():
        raise MissingInputError(f"{args.run}: no such run directory; train it first "
                                "(`dfil train --cell <cell.yaml> --out <run>`)")
    try:
        with _sole_writer([args.run], "evaluate"):
            if not _failed_training(args.run) and (
                    refused := _refused_features(args, "evaluate", args.run)) is not None:
                return refused
            metrics = evaluate_run(args.run)
    except Exception as err:
        gated = isinstance(err, GatedRepo) and args.attempt is not None and recording()
        if not (last_try(args.attempt) or gated):  # a zero-shot cell reads it here first
            raise
        if not isinstance(err, InputError):
            traceback.print_exc()
        return _record(args, "evaluate", _reason(err), err)
    if "failed" in metrics:
        print(f"failed cell ({metrics['failed']['reason']}): recorded, nothing to evaluate")
        return 0
    test = metrics["test"]
    print(" ".join(f"{path}_acc={block['acc']:.4f}" for path, block in test.items()))
    return 0
