# DFIL reproduction DAG. Named targets, each publishing what its name promises:
#   all_tables (default): every table of the paper in paper_tables/<name>/ with every
#     run's metrics.json, the report and the audit (as below);
#   report: paper_tables/<name>/index.html, tables.html, runs/, numbers.csv, claims.csv,
#     diff.md, diff.html, figures/, tables.tex, tables.pdf (where pdflatex is), audit.md, audit.html;
#   paper_audit: paper_tables/<name>/audit.md and audit.html (no runs needed);
#   all_runs: every cell trained and evaluated, then the tidy table
#     results/<name>/aggregate/metrics.parquet;
#   preflight: checks the site and the hub before a real run (writes nothing).
#   acceptance: before the grid, the grid's acceptance cell trained, evaluated and timed,
#     and its 4-bit backbone timed: results/<name>/acceptance/<kind>/<backbone>.json.
# One cell by asking for results/<name>/runs/<key>/metrics.json, one table by asking for
# its .tex. The grid
# comes from the config (config/config.yaml by default; the slurm profile selects
# config/paper.yaml).
import json
import os
import re
import sys
from pathlib import Path

from snakemake.utils import min_version

from dfil.util.errors import or_exit
from dfil.cli.jobs import set_last_attempt
from dfil.config.grid import grid_of
from dfil.config.pins import unlocked_note
from dfil.cluster.dirlock import lock_hint, other_snakemakes, takes_lock
from dfil.preflight.targets import asks_for, preflight_profiles

min_version("8.20")  # pyproject's requirement

# After a hard kill, say how to unlock before Snakemake's LockException (which --quiet hides).
if _hint := lock_hint(os.getcwd(), sys.argv):
    print(_hint, file=sys.stderr)

# The embedded default unless --configfile (or a profile) names another grid; a grid file
# is never merged with the default's groups.
if not workflow.configfiles:

    configfile: "config/config.yaml"


# `snakemake preflight` (its only target, no dry run): the checks run here, in this
# process, on the grid of the config, and Snakemake ends with their status (3: a
# problem); no DAG is built, nothing is submitted, the lines are kept in
# results/<grid>/logs/preflight.log too.
PREFLIGHT_PROFILES = preflight_profiles(sys.argv)
if PREFLIGHT_PROFILES is not None and workflow.is_main_process:
    from dfil.cli.preflight import preflight_here

    sys.exit(preflight_here(config, workflow.configfiles, PREFLIGHT_PROFILES))

from dfil.preflight import preflight
from dfil.render.publish import ALLOW_FLAG, ALLOW_KEY, repair_staged, republish

# `--config allow_fewer=1` lets publishing replace a file with one holding fewer entries
# from the same runs (publish.smk); it is a setting of this run, not of the grid.
ALLOW_FEWER = bool(config.pop(ALLOW_KEY, False))

# Each config file read strictly (duplicate keys), then validated; errors name the files.
# A run that runs jobs refuses hub branches without a commit in the grid's lock file; a
# dry run (or --unlock, --list-rules...) shows its plan with the branches and says so;
# `snakemake preflight` (above) runs no job that reads them, and reports them.
LOCKED = takes_lock(sys.argv)
GRID = or_exit(grid_of, config, workflow.configfiles, LOCKED)
if not LOCKED and workflow.is_main_process and (_unlocked := GRID.unlocked()):
    print(unlocked_note(_unlocked, GRID.spec.lock, GRID.files), file=sys.stderr)
RES = GRID.results


wildcard_constraints:
    key=GRID.key_pattern(),


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/features.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/render.smk"
include: "workflow/rules/audit.smk"
include: "workflow/rules/publish.smk"
include: "workflow/rules/preflight.smk"
include: "workflow/rules/submit.smk"
include: "workflow/rules/acceptance.smk"


# Before the DAG is built (the main process only; cluster job steps skip it): targets the
# grid does not make, budgets beyond their data, dfil jobs of a killed run still running,
# damaged run files and staged files (moved aside, so the DAG re-creates them before
# publishing), incomplete files.
if workflow.is_main_process:
    for _note in or_exit(
        preflight, GRID, sys.argv, os.getcwd(), workflow.configfiles, PUBLISHED
    ):
        print(_note, file=sys.stderr)
    # With another Snakemake here the lock hint has named it: its staged files are its own.
    if not other_snakemakes(Path(os.getcwd())):
        for _note in repair_staged(map(staged, PUBLISHED), STAGE, takes_lock(sys.argv)):
            print(_note, file=sys.stderr)
        # A published file damaged or edited since it was published: copied again.
        for _note in republish(
            ((staged(path), path) for path in PUBLISHED), takes_lock(sys.argv)
        ):
            print(_note, file=sys.stderr)


# Without pdflatex the report targets leave tables.pdf out: one line says so and how to get TeX.
if (
    workflow.is_main_process
    and not TEX
    and asks_for(sys.argv, ("all_tables", "report"), "all_tables")
):
    print(skipped_note(TABLES_OUT), file=sys.stderr)


onsuccess:
    mark_stale()


onerror:
    mark_stale(log)


rule all_tables:
    default_target: True
    input:
        TABLE_FILES,
        # Every run's metrics.json as a direct input (the tables need them all anyway): a
        # run file that preflight moved aside is then made again, and the tables follow.
        expand(f"{RES}/runs/{{key}}/metrics.json", key=sorted(GRID.cells)),
        REPORT_FILES,
        PDF_FILES,
        RUN_PAGES,
        AUDIT_FILES,
        # The staged files too: one that preflight moved aside is made again and published.
        [
            staged(path)
            for path in [*TABLE_FILES, *REPORT_FILES, *PDF_FILES, *AUDIT_FILES]
        ],


rule all_runs:
    input:
        expand(f"{RES}/runs/{{key}}/metrics.json", key=sorted(GRID.cells)),
        f"{RES}/aggregate/metrics.parquet",


rule report:
    input:
        REPORT_FILES,
        PDF_FILES,
        RUN_PAGES,
        AUDIT_FILES,


rule paper_audit:
    input:
        AUDIT_FILES,


# With keep-going (the slurm profile's), a cell's last attempt records its failure in place
# of its outputs and the tables are built from the cells that finished (dfil.cli.jobs);
# jobs, local or SLURM's, inherit the variable. Execution settings exist from onstart on.
# A SLURM run's jobs are submitted through the workflow's sbatch (submit.smk).
onstart:
    set_last_attempt(
        workflow.execution_settings.keep_going, workflow.execution_settings.retries
    )
    submit_through_workflow_sbatch()
