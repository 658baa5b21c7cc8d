"""The subcommands of ``dfil``: each a thin call into the library (imports on use, so a
command loads only what it needs). Paths come from the parsed arguments."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dfil.util.errors import ConfigError, MissingInputError, RefusedError, UsageError


def cmd_probes(args: argparse.Namespace) -> int:
    from dfil.data.probes import ProbeConfig, write_probes

    manifest = write_probes(args.out, ProbeConfig(seed=args.seed))
    print(json.dumps(manifest, indent=2, sort_keys=True))
    return 0


def cmd_synth_frog(args: argparse.Namespace) -> int:
    from dfil.data.synthetic import write_frog_like

    digests = write_frog_like(args.out, seed=args.seed, n_easy=args.n_easy, n_hard=args.n_hard,
                              hard_form=args.hard_form)
    print(json.dumps(digests, indent=2, sort_keys=True))
    return 0


def _lock(grid, args: argparse.Namespace) -> None:
    """``dfil grid lock``: every branch or tag the grid's hub entries name, resolved on the
    hub (HF_ENDPOINT) and written to the grid's lock file."""
    from dfil.config.pins import lock_pins, named_pins

    files = ' '.join(map(str, args.config))
    _require(grid.spec.lock, f"{files}: the grid names no lock file (key lock:, e.g. "
             "config/<name>.lock.yaml)")
    pins = [pin for pin, _ in grid.pins.values()]
    names = [n for n in args.update or () if n]
    update = named_pins(pins, names, files) if names else bool(args.update)
    for line in lock_pins(pins, grid.spec.lock, grid.name, update=update):
        print(line)
    print(f"wrote {grid.spec.lock}: commit it with the grid")


def cmd_fetch_backbone(args: argparse.Namespace) -> int:
    from dfil.model.embedded import fetch_backbone

    path = fetch_backbone(args.name, force=args.force)
    if args.stamp:
        from dfil.util.atomic import atomic_write_bytes

        atomic_write_bytes(args.stamp, f"{path}\n".encode())
    print(path)
    return 0


def cmd_grid(args: argparse.Namespace) -> int:
    import yaml

    from dfil.config.grid import Grid, load_grid_files
    from dfil.config.gridfile import grid_schema
    from dfil.util.atomic import atomic_write_bytes

    if args.action == "schema":
        print(json.dumps(grid_schema(), indent=2))
        return 0
    if args.action == "cell" and args.json:
        _cell_from_json(args)
        return 0
    if args.action == "resolve" and args.json:
        grid = Grid(_json_object(args.json, "--json"))
    else:
        grid = load_grid_files(args.config)
    if args.action == "list":
        for key in sorted(grid.cells):
            print(key)
    elif args.action == "lock":
        _lock(grid, args)
    elif args.action == "status":
        from dfil.results.status import status_lines

        print("\n".join(status_lines(grid)))
    elif args.action == "preflight":
        from dfil.cli.preflight import grid_preflight

        return grid_preflight(grid, args.profile or [], args.trainer, args.catalogue)
    elif args.action == "cost":
        from dfil.cli.cost import grid_cost

        pack = args.pack or ("on" if grid.config.get("pack") else "off")
        print(grid_cost(grid, args.gpu, args.trainer, args.catalogue, pack=pack))
    elif args.action == "plan":
        from dfil.cli.plan import grid_plan

        _require(args.gpu_hours is not None, "dfil grid plan needs --gpu-hours")
        try:
            print(grid_plan(grid, args))
        except ValueError as err:  # a budget, power or claim id the user gave
            raise UsageError(f"dfil grid plan: {err}") from None
    elif args.action == "resolve":
        _require(args.out, "dfil grid resolve needs --out")
        atomic_write_bytes(args.out, yaml.safe_dump(grid.config, sort_keys=False).encode())
    else:
        _require(args.key and args.out, "dfil grid cell needs --key and --out (or --json)")
        cell = grid.cell(args.key)
        atomic_write_bytes(args.out, yaml.safe_dump(cell.config, sort_keys=False).encode())
    return 0


def _json_object(text: str, where: str) -> dict:
    """``text`` parsed as a JSON object; a UsageError naming ``where`` otherwise."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise UsageError(f"{where}: not JSON ({err})") from None
    if not isinstance(value, dict):
        raise UsageError(f"{where}: expected a JSON object (the grid's mapping), got "
                         f"{type(value).__name__} {text[:60]!r}")
    return value


def _cell_from_json(args: argparse.Namespace) -> None:
    """``dfil grid cell --json``: the cell exactly as the DAG resolved it (Snakemake passes
    it as a parameter, so a config edit that changes it reruns this job and everything
    downstream), written to ``--out``."""
    from dfil.config.cell import dump_cell
    from dfil.util.atomic import atomic_write_bytes

    cell = cell_of_json(args.json)
    _require(args.out, "dfil grid cell --json needs --out")
    atomic_write_bytes(args.out, dump_cell(cell).encode())


def cell_of_json(text: str):
    """The resolved :class:`CellConfig` of a cell given as JSON (``--json``)."""
    from dfil.config.cell import cell_of

    try:
        return cell_of(json.loads(text))
    except json.JSONDecodeError as err:
        raise ConfigError(f"--json: not a JSON cell ({err})") from None
    except ConfigError as err:
        raise ConfigError(f"--json: {err}") from None


def _require(ok, message: str) -> None:
    if not ok:
        raise UsageError(message)


def cmd_aggregate(args: argparse.Namespace) -> int:
    from dfil.config.grid import load_grid_files
    from dfil.results.aggregate import aggregate, check_replaceable, metrics_files
    from dfil.util.atomic import atomic_path

    grid = load_grid_files(args.config) if args.config else None
    grid_keys = grid.cells if grid else None
    hashes = {key: grid.config_hash(key) for key in grid.cells} if grid else None
    table = aggregate(metrics_files(args.runs, args.metrics), args.runs, hashes)
    dropped = check_replaceable(table, args.out, grid_keys, args.drop_unlisted_runs)
    with atomic_path(args.out) as tmp:
        table.to_parquet(tmp, index=False)
    with atomic_path(args.out.with_suffix(".csv")) as tmp:
        table.to_csv(tmp, index=False)
    print(f"{len(table)} rows from {table['run_dir'].nunique()} runs -> {args.out}")
    if dropped:
        print(f"dropped {len(dropped)} runs the old table held: {', '.join(dropped)}")
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    import shutil

    from dfil.render.publish import check_replace, check_staged
    from dfil.util.atomic import atomic_copytree, atomic_path

    if not args.staged.exists():
        raise MissingInputError(f"{args.staged}: nothing staged to publish")
    note = check_replace(check_staged(args.staged, args.out), args.staged, args.out,
                         args.allow_fewer)
    if args.staged.is_dir():
        atomic_copytree(args.staged, args.out)
    else:
        with atomic_path(args.out) as tmp:
            shutil.copyfile(args.staged, tmp)
    if note:
        print(note)
    print(f"{args.staged} -> {args.out}")
    return 0


def cmd_publish_check(args: argparse.Namespace) -> int:
    from dfil.render.publish import check_all
    from dfil.util.atomic import atomic_write_text

    problems = check_all(args.pair, args.allow_fewer)
    if problems:
        for line in problems[:-1]:
            print(line, file=sys.stderr)
        raise RefusedError(f"{problems[-1]} (nothing was published: {len(problems)} staged "
                           "file(s) refused)")
    atomic_write_text(args.stamp, "".join(f"{staged} -> {out}\n" for staged, out in args.pair))
    print(f"{len(args.pair)} staged file(s) may be published")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    from dfil.claims.degenerate import check
    from dfil.config.grid import load_grid_files
    from dfil.render import file_stem, load_specs, table_names
    from dfil.render.build import render_to
    from dfil.render.coordinates import check_coordinates

    grid = load_grid_files(args.config)
    specs = load_specs(args.tables)
    check_coordinates(specs, grid.config, args.tables)
    runs = args.runs or Path(grid.results) / "runs"
    names = [args.table] if args.table else table_names(specs)
    if args.table and args.out:
        print(render_to(specs, grid, args.table, runs, args.out, (args.config, check)))
        return 0
    out_dir = args.out_dir or Path("paper_tables") / grid.name
    for name in names:
        print(render_to(specs, grid, name, runs, out_dir / f"{file_stem(specs, name)}.tex",
                        (args.config, check)))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    import pandas as pd

    from dfil.claims.degenerate import check
    from dfil.config.grid import load_grid_files
    from dfil.plan.achieved import standings
    from dfil.plan.claims import ran_claims
    from dfil.render import load_specs
    from dfil.render.build import report, resolve_tables
    from dfil.render.coordinates import check_coordinates
    from dfil.render.figure_spec import check_figures
    from dfil.report.build import Findings, control_results, write_site

    grid = load_grid_files(args.config)
    if not args.aggregate.is_file():
        raise MissingInputError(f"{args.aggregate}: no aggregate table; build it with "
                                "`dfil aggregate` (Snakemake target all_runs)")
    frame = pd.read_parquet(args.aggregate)
    specs = load_specs(args.tables)
    check_coordinates(specs, grid.config, args.tables)
    figs = check_figures(args.figures or args.tables.parent / "figures.yaml", specs,
                         grid.config, args.tables)
    tables = resolve_tables(specs, grid, frame, check)
    out, captions = report(specs, grid, frame, tables, args.tex_dir, figs)
    power = standings(ran_claims(tables, specs), grid.spec.plan)
    out.update(write_site(tables, grid, Path(args.tex_dir), captions, pdf=not args.no_pdf,
                          found=Findings(power, tuple(control_results(grid, frame)))))
    for path in out.values():
        print(path)
    from dfil.render.stale import show_stale

    show_stale(args.tex_dir)  # a stale.json beside the tables: the report says so
    return 0


def cmd_pdf(args: argparse.Namespace) -> int:
    from dfil.render.pdf import compile_pdf

    print(compile_pdf(args.tex, args.out))
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from dfil.audit import evaluate_all, read_checks_file, summary
    from dfil.audit import report as audit_report
    from dfil.audit.checks import severity_counts
    from dfil.util.atomic import atomic_write_text

    doc = read_checks_file(args.checks)
    outcomes = evaluate_all(doc["checks"])
    meta = {"title": args.title, "source": doc["source"], "checks_file": str(args.checks)}
    for out, render in ((args.out_md, audit_report.markdown), (args.out_html, audit_report.html)):
        atomic_write_text(out, render(outcomes, **meta))
    counts, levels = summary(outcomes), severity_counts(outcomes)
    print(f"{counts['total']} checks: {counts['consistent']} consistent, {counts['conditional']} "
          f"consistent only under an assumption, {counts['inconsistent']} inconsistent, "
          f"{counts['not-recomputable']} not recomputable; findings "
          + ", ".join(f"{n} {lv}" for lv, n in levels.items())
          + f" -> {args.out_md}, {args.out_html}")
    return 0
