"""Wall time, job seconds, import time and the critical path of the embedded default.

Runs ``snakemake all_tables`` on a grid config (default: the embedded one) with
``PYTHONPROFILEIMPORTTIME`` set, so every job's log holds its Python imports, and then
summarises the per-job benchmark files every rule writes
(``results/<grid>/benchmarks/<rule>/...tsv``: wall seconds and peak RSS of the job's
process tree, measured by Snakemake). Prints, per stage and for the whole DAG: jobs,
summed job seconds, the longest job, peak RSS, the seconds spent importing (the
top-level imports of every ``dfil`` process in the stage's logs), each stage's span
(first job's start to last job's end, from the benchmark files' times); the end-to-end
wall time; and the critical path: the chain of dependent jobs (``snakemake --dag``)
with the most job seconds, each job named with its seconds.

    python benchmarks/embedded_stages.py                 # run, then report
    python benchmarks/embedded_stages.py --fresh         # cold: as on a new machine
    python benchmarks/embedded_stages.py --report-only   # report an earlier run
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
STAGES = {"fetch_backbone": "data", "synth_frog": "data", "probes": "data",
          "hub_fetch": "data", "frozen_features": "features", "cell_config": "train",
          "train_cell": "train", "untrained_cell": "train", "evaluate_cell": "evaluate",
          "aggregate": "aggregate", "render": "render", "report": "report", "pdf": "report"}
#: Which stage a job's log (below results/<grid>/logs/) belongs to, by its first part.
LOG_STAGES = {"features": "features", "cells": "train", "train": "train",
              "evaluate": "evaluate", "render": "render", "publish": "report"}


def summarise(bench_dir: Path) -> pd.DataFrame:
    rows = []
    for tsv in sorted(bench_dir.rglob("*.tsv")):
        rule = tsv.relative_to(bench_dir).parts[0]
        b = pd.read_csv(tsv, sep="\t")
        rows.append({"rule": rule, "stage": STAGES.get(rule, rule), "s": float(b["s"].iloc[0]),
                     "max_rss_mb": float(pd.to_numeric(b["max_rss"], errors="coerce").iloc[0]),
                     "end": tsv.stat().st_mtime,
                     "job": str(tsv.relative_to(bench_dir).with_suffix(""))})
    return pd.DataFrame(rows)


def per_stage(jobs: pd.DataFrame, imports: dict[str, float]) -> pd.DataFrame:
    """Per stage and rule: jobs, job seconds, longest job, peak RSS; per stage: its span
    (first start to last end) and import seconds; and a row for the whole DAG."""
    jobs = jobs.assign(start=jobs["end"] - jobs["s"])
    table = jobs.groupby(["stage", "rule"], sort=False).agg(
        jobs=("s", "size"), job_seconds=("s", "sum"), longest_s=("s", "max"),
        peak_rss_mb=("max_rss_mb", "max"), start=("start", "min"), end=("end", "max"))
    span = table.groupby(level="stage", sort=False).agg(start=("start", "min"), end=("end", "max"))
    table["stage_span_s"] = [span.loc[st, "end"] - span.loc[st, "start"] for st, _ in table.index]
    table["stage_import_s"] = [imports.get(st, 0.0) for st, _ in table.index]
    table.loc[("all", "DAG"), :] = [len(jobs), jobs["s"].sum(), jobs["s"].max(),
                                    jobs["max_rss_mb"].max(), jobs["start"].min(),
                                    jobs["end"].max(), jobs["end"].max() - jobs["start"].min(),
                                    sum(imports.values())]
    return table.drop(columns=["start", "end"]).round(1)


def import_seconds(log_dir: Path) -> dict[str, float]:
    """Seconds of top-level Python imports (``-X importtime``'s cumulative column) in the
    jobs' logs, by stage."""
    out: dict[str, float] = {}
    for log in log_dir.rglob("*.log"):
        rel = log.relative_to(log_dir).parts
        stage = LOG_STAGES.get(rel[0], "data" if len(rel) == 1 else rel[0])
        if len(rel) == 1 and rel[0][:-4] in ("aggregate", "report", "pdf", "audit"):
            stage = "report" if rel[0] != "aggregate.log" else "aggregate"
        micro = 0
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("import time:") and line.count("|") == 2:
                _, cumulative, name = line.split("|")
                top = name.startswith(" ") and not name.startswith("  ")
                if top and cumulative.strip().isdigit():
                    micro += int(cumulative)
        out[stage] = out.get(stage, 0.0) + micro / 1e6
    return out


#: Where a rule's benchmark files are (below results/<grid>/benchmarks/), where that is not
#: ``<rule>/<wildcard values>.tsv``; publishing jobs write none.
BENCH_NAMES = {"render_table": "render", "render_report": "report/report",
               "render_pdf": "report/pdf", "render_audit": "audit/audit",
               "aggregate": "aggregate/aggregate", "probes": "probes/probes",
               "synth_frog": "synth_frog/frog"}
#: Rules whose jobs take the cell key of the job upstream of them that carries it
#: (``snakemake --dag`` labels a job only with wildcards its inputs' jobs do not have).
KEYED = {"train_cell": ("cell_config",), "untrained_cell": ("cell_config",),
         "evaluate_cell": ("train_cell", "untrained_cell")}


def dag_edges(args, env) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The DAG of ``all_tables`` (every job, done or not): node id -> job name (as its
    benchmark file is named, ``<dir>/<wildcard values>``), and (upstream, downstream)
    edges."""
    snakemake = Path(sys.executable).with_name("snakemake")
    dot = subprocess.run([str(snakemake), "all_tables", "--forceall", "--dag", "--configfile",
                          args.configfile, "--quiet", "all"], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True).stdout
    edges = re.findall(r"^\s*(\d+) -> (\d+)", dot, re.M)
    upstream: dict[str, list[str]] = {}
    for up, down in edges:
        upstream.setdefault(down, []).append(up)
    rules, values = {}, {}
    for node, label in re.findall(r'^\s*(\d+)\[label = "([^"]*)"', dot, re.M):
        rule, *wild = label.split("\\n")
        rules[node] = rule
        values[node] = "/".join(w.split(": ", 1)[1] for w in wild if ": " in w)

    def resolved(node):
        if not values[node] and rules[node] in KEYED:
            values[node] = next((resolved(up) for up in upstream.get(node, [])
                                 if rules[up] in KEYED[rules[node]]), "")
        return values[node]

    names = {node: "/".join(x for x in (BENCH_NAMES.get(rules[node], rules[node]),
                                         resolved(node)) if x) for node in rules}
    return names, edges


def critical_path(jobs: pd.DataFrame, names: dict, edges: list) -> tuple[float, list]:
    """The chain of dependent jobs with the most summed seconds: (seconds, [(job, s)])."""
    seconds = dict(zip(jobs["job"], jobs["s"], strict=True))
    upstream: dict[str, list[str]] = {node: [] for node in names}
    for up, down in edges:
        upstream[down].append(up)
    best: dict[str, tuple[float, list]] = {}

    def longest(node):
        if node not in best:
            before = max((longest(up) for up in upstream[node]), default=(0.0, []))
            s = seconds.get(names[node], 0.0)
            best[node] = (before[0] + s, [*before[1], (names[node], s)])
        return best[node]

    return max((longest(node) for node in names), default=(0.0, []))


def machine_gflops(seconds: float = 2.0) -> float:
    """One core's fp32 matrix-product rate now (GFLOP/s, 512x512 products for about
    ``seconds``): printed before and after a run, so runs on a shared machine whose
    speed drifted can be told apart."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a = torch.randn(512, 512, generator=torch.Generator().manual_seed(0))
        done, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            a @ a
            done += 1
        return done * 2 * 512**3 / (time.perf_counter() - started) / 1e9
    finally:
        torch.set_num_threads(threads)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configfile", default="config/config.yaml")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--fresh", action="store_true",
                    help="a cold run, as on a new machine: delete the grid's results and "
                         "tables first, and use an empty DFIL_CACHE (backbone conversion "
                         "and frozen features included)")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    from dfil.config.grid import load_grid_files

    grid = load_grid_files([ROOT / args.configfile])
    results = ROOT / grid.results
    # Rules call `dfil`: put this interpreter's environment first on PATH.
    bindir = str(Path(sys.executable).parent)
    env = dict(os.environ, PATH=os.pathsep.join([bindir, os.environ.get("PATH", "")]))
    wall = None
    if not args.report_only:
        before = machine_gflops()
        wall = run(args, grid, results, env)
        if wall is None:
            return 1
        print(f"machine: one core {before:.1f} GFLOP/s before the run, "
              f"{machine_gflops():.1f} after (fp32 512x512 products)")
    jobs = summarise(results / "benchmarks")
    pd.set_option("display.width", 140)
    print(f"grid {grid.name}: {len(grid.cells)} cells, {args.cores} cores")
    if jobs.empty:
        print("no benchmark files: run it first")
        return 1
    imports = import_seconds(results / "logs")
    table = per_stage(jobs, imports)
    print(table.to_string())
    if wall is not None:
        print(f"end-to-end wall time {wall:.0f} s ({wall / 60:.1f} min)")
    total, chain = critical_path(jobs, *dag_edges(args, env))
    print(f"critical path {total:.0f} s of job time, {len(chain)} jobs:")
    for name, seconds in chain:
        print(f"  {seconds:7.1f} s  {name}")
    return 0


def run(args, grid, results: Path, env: dict) -> float | None:
    """Run the DAG (cold with ``--fresh``), every job's imports timed into its log;
    the end-to-end seconds, or None if it failed."""
    if args.fresh:
        shutil.rmtree(results, ignore_errors=True)
        shutil.rmtree(ROOT / "paper_tables" / grid.name, ignore_errors=True)
        cold = ROOT / ".cache" / "cold-benchmark"
        shutil.rmtree(cold, ignore_errors=True)
        env = dict(env, DFIL_CACHE=str(cold))
    snakemake = Path(sys.executable).with_name("snakemake")
    results.mkdir(parents=True, exist_ok=True)
    own_log = results / "benchmarks-snakemake.log"  # its own import lines go here too
    started = time.perf_counter()
    with open(own_log, "w") as log:
        proc = subprocess.run([str(snakemake), "all_tables", "--cores", str(args.cores),
                               "--configfile", args.configfile, "--quiet", "rules"],
                              cwd=ROOT, env=dict(env, PYTHONPROFILEIMPORTTIME="1"),
                              stdout=log, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - started
    if proc.returncode:
        lines = [x for x in own_log.read_text().splitlines() if not x.startswith("import time")]
        print("\n".join(lines[-30:]))
        print(f"snakemake failed ({proc.returncode}) after {wall:.0f} s (log: {own_log})")
        return None
    return wall


if __name__ == "__main__":
    sys.exit(main())
