"""``dfil acceptance``: the acceptance run's record of one backbone, a few timed training
steps of a cell's model on this machine (:mod:`dfil.train.timing`), written where
``dfil grid cost`` reads it (:mod:`dfil.contracts.acceptance`)."""

from __future__ import annotations

import argparse
from datetime import datetime, timezone
from pathlib import Path

#: The architecture fields the cost model reads (dfil.cost.flops.shape).
ARCH_KEYS = ("model_type", "hidden_size", "num_hidden_layers", "num_attention_heads",
             "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size",
             "tie_word_embeddings")
NO_CUDA = "no CUDA: 4-bit weights (bitsandbytes) need a CUDA GPU"


def add_acceptance_parser(command, sub) -> None:
    p = command(sub, "acceptance",
                "time a few training steps of a cell's model on this machine's device "
                "(kind cell: the acceptance cell, after the grid's jobs trained and evaluated "
                "it; kind qlora: its backbone loaded in 4-bit) and record throughput, peak "
                "memory, the device, the trainer's commit and the date for `dfil grid cost`",
                cmd_acceptance)
    p.add_argument("--cell", type=Path, required=True, help="cell YAML")
    p.add_argument("--kind", choices=("cell", "qlora"), required=True,
                   help="cell: as configured; qlora: the backbone loaded in 4-bit")
    p.add_argument("--steps", type=int, default=10, help="timed training steps")
    p.add_argument("--run", type=Path, help="kind cell: the run directory the grid's jobs "
                   "trained and evaluated (its training time is recorded)")
    p.add_argument("--out", type=Path, required=True, help="the record (JSON)")


def _run_info(run: Path) -> dict:
    """The run the grid's jobs made: its training's wall seconds, whether it evaluated (a
    failure record in place of its metrics is not); a damaged file is a one-line error."""
    from dfil.contracts.failure import is_failure
    from dfil.contracts.rundir import read_run_json

    fix = "run `snakemake acceptance` again, which remakes it"
    summary, metrics = run / "train_summary.json", run / "metrics.json"
    seconds = None
    if summary.is_file():
        seconds = (read_run_json(summary, fix).get("provenance") or {}).get("wall_seconds")
    evaluated = metrics.is_file() and not is_failure(read_run_json(metrics, fix))
    return {"dir": str(run), "train_seconds": seconds, "evaluated": evaluated}


def cmd_acceptance(args: argparse.Namespace) -> int:
    from dfil import __version__
    from dfil.config.cell import load_cell
    from dfil.contracts.acceptance import write_acceptance
    from dfil.cost.rates import gpu_of
    from dfil.engine.device import deterministic, pick_device
    from dfil.engine.provenance import device_name, peak_memory_mb
    from dfil.util.commit import git_commit
    from dfil.util.errors import UsageError

    if args.steps < 1:
        raise UsageError(f"--steps {args.steps}: time at least one step")
    cell = load_cell(args.cell)
    if args.kind == "qlora":
        backbone = cell.model.backbone.model_copy(update={"quantized": True})
        cell = cell.model_copy(update={"model": cell.model.model_copy(
            update={"backbone": backbone})})
    device = pick_device()
    name = device_name(device)
    record = {"kind": args.kind, "backbone": cell.model.backbone.name, "cell": cell.name,
              "device": name, "gpu": gpu_of(name) if device.type == "cuda" else None,
              "trainer_commit": git_commit(), "package_version": __version__,
              "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "steps": args.steps, "batch": cell.train.batch_size,
              "quantized": cell.model.backbone.quantized}
    if args.run is not None:
        record["run"] = _run_info(args.run)
    if cell.model.backbone.quantized and device.type != "cuda":
        record.update(status="skipped", reason=NO_CUDA)
        write_acceptance(args.out, record)
        print(f"acceptance {args.kind} {record['backbone']}: skipped: {NO_CUDA}")
        return 0
    from dfil.train.timing import prompt_tokens, time_steps

    with deterministic(cell.train.deterministic):
        timing, arch = time_steps(cell, args.steps, device)
    record.update(status="measured", reason=None, layout=timing.layout,
                  prompt_tokens=prompt_tokens(cell), seconds=timing.seconds,
                  tokens_per_s=timing.tokens_per_s, steps_per_s=timing.steps_per_s,
                  peak_gpu_gib=timing.peak_gpu_gib,
                  peak_rss_gib=peak_memory_mb(device)["peak_rss_mb"] / 1024,
                  arch={k: arch[k] for k in ARCH_KEYS if arch.get(k) is not None})
    write_acceptance(args.out, record)
    peak = (f"{timing.peak_gpu_gib:.1f} GiB GPU" if timing.peak_gpu_gib is not None
            else f"{record['peak_rss_gib']:.1f} GiB RSS")
    print(f"acceptance {args.kind} {record['backbone']} on {name}: {timing.tokens_per_s:,.0f} "
          f"tokens/s, {timing.steps_per_s:.2f} steps/s, peak {peak} ({args.out})")
    return 0
