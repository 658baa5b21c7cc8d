"""Wall time and peak memory of the embedded default, per stage.

Runs ``snakemake all_tables`` on a grid config (default: the embedded one) and then
summarises the per-job benchmark files every rule writes
(``results/<grid>/benchmarks/<rule>/...tsv``: wall seconds and peak RSS of the job's
process tree, measured by Snakemake). Prints, per stage: jobs, summed job seconds, the
longest job, peak RSS; and the end-to-end wall time of the run.

    python benchmarks/embedded_stages.py                 # run, then report
    python benchmarks/embedded_stages.py --fresh         # cold: as on a new machine
    python benchmarks/embedded_stages.py --report-only   # report an earlier run
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
STAGES = {"fetch_backbone": "data", "synth_frog": "data", "probes": "data",
          "cell_config": "train", "train_cell": "train", "evaluate_cell": "evaluate",
          "aggregate": "aggregate", "render": "render", "report": "report"}


def summarise(bench_dir: Path) -> pd.DataFrame:
    rows = []
    for tsv in sorted(bench_dir.rglob("*.tsv")):
        rule = tsv.relative_to(bench_dir).parts[0]
        b = pd.read_csv(tsv, sep="\t")
        rows.append({"rule": rule, "stage": STAGES.get(rule, rule), "s": float(b["s"].iloc[0]),
                     "max_rss_mb": float(pd.to_numeric(b["max_rss"], errors="coerce").iloc[0])})
    jobs = pd.DataFrame(rows)
    if jobs.empty:
        return jobs
    return jobs.groupby(["stage", "rule"], sort=False).agg(
        jobs=("s", "size"), job_seconds=("s", "sum"), longest_s=("s", "max"),
        peak_rss_mb=("max_rss_mb", "max")).round(1)


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
    from dfil.grid import load_grid_files

    grid = load_grid_files([ROOT / args.configfile])
    results = ROOT / grid.results
    wall = None
    if not args.report_only:
        # Rules call `dfil`: put this interpreter's environment first on PATH.
        bindir = str(Path(sys.executable).parent)
        env = dict(os.environ, PATH=os.pathsep.join([bindir, os.environ.get("PATH", "")]))
        if args.fresh:
            shutil.rmtree(results, ignore_errors=True)
            shutil.rmtree(ROOT / "paper_tables" / grid.name, ignore_errors=True)
            cold = ROOT / ".cache" / "cold-benchmark"
            shutil.rmtree(cold, ignore_errors=True)
            env["DFIL_CACHE"] = str(cold)
        snakemake = Path(sys.executable).with_name("snakemake")
        started = time.perf_counter()
        proc = subprocess.run([str(snakemake), "all_tables", "--cores", str(args.cores),
                               "--configfile", args.configfile, "--quiet", "rules"],
                              cwd=ROOT, env=env)
        wall = time.perf_counter() - started
        if proc.returncode:
            print(f"snakemake failed ({proc.returncode}) after {wall:.0f} s")
            return proc.returncode
    table = summarise(results / "benchmarks")
    pd.set_option("display.width", 120)
    print(f"grid {grid.name}: {len(grid.cells)} cells, {args.cores} cores")
    print(table.to_string())
    if not table.empty:
        print(f"summed job time {table['job_seconds'].sum():.0f} s; "
              f"peak RSS of any job {table['peak_rss_mb'].max():.0f} MB")
    if wall is not None:
        print(f"end-to-end wall time {wall:.0f} s ({wall / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
