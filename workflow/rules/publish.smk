# Publishing (CPU only): each table, report file (and the report's run pages) and aggregate
# file is copied from the
# staging area to where it is read, once its rule has made it. A rule whose job fails
# (or never runs, because one upstream failed) publishes nothing, so the last good file
# stays; the onerror hook of the Snakefile (mark_stale, common.smk) marks it stale (paper_tables/<grid>/stale.json,
# and a banner in the published diff.md and diff.html), and a later run that publishes it
# again takes the mark off. A staged file that does not read as what it is, or that holds
# fewer entries than the published one where no run it reads is new or retrained, is
# refused (dfil.render.publish), and then nothing is published; `--config allow_fewer=1`
# lets the smaller one through.
import re

PUBLISHED = [*TABLE_FILES, *REPORT_FILES, PDF_FILE, *AUDIT_FILES, *AGGREGATE_FILES]


# A build of every table (all_tables, report) checks the tables, the report, its run pages
# and tables.pdf together before any of them is published (dfil publish-check): one
# that does not read as what it is, or that would replace its published file with less,
# refuses them all, so an edit never publishes some tables before another is refused. A
# single table asked for is checked alone, as it is published, and needs only its cells;
# the aggregate and the paper audit are published on their own (all_runs, paper_audit).
PUBLISH_CHECK = f"{STAGE}/publish-check.txt"
CHECKED = [*TABLE_FILES, *REPORT_FILES, *PDF_FILES]
CHECKED_DIRS = [RUN_PAGES]  # counted in run pages
CHECK_ALL = asks_for(sys.argv, ("all_tables", "report"), "all_tables")


rule publish_check:
    input:
        [staged(path) for path in [*CHECKED, *CHECKED_DIRS]],
    output:
        PUBLISH_CHECK,
    log:
        f"{RES}/logs/publish/check.log",
    localrule: True
    resources:
        **CPU_RESOURCES,
    params:
        pairs=" ".join(
            f"--pair {staged(path)} {path}" for path in [*CHECKED, *CHECKED_DIRS]
        ),
        allow=ALLOW_FLAG if ALLOW_FEWER else "",
    shell:
        # the refusals on the terminal too: one line for each file refused
        "dfil publish-check --stamp {output} {params.pairs} {params.allow} > {log} 2>&1 "
        "|| {{ cat {log} >&2; exit 2; }}"


rule publish:
    input:
        staged=lambda wildcards: staged(wildcards.published),
        # ancient: the check orders the copies after it; its stamp's time reruns none
        checked=lambda wildcards: (
            ancient(PUBLISH_CHECK)
            if CHECK_ALL and wildcards.published in CHECKED
            else []
        ),
    output:
        # update(): Snakemake neither removes the published file before the job (dfil
        # publish compares the staged file with it) nor after a refusal (it restores it).
        update("{published}"),
    log:
        f"{RES}/logs/publish/{{published}}.log",
    wildcard_constraints:
        published="|".join(re.escape(path) for path in PUBLISHED),
    localrule: True  # a file copy
    resources:
        **CPU_RESOURCES,
    params:
        allow=ALLOW_FLAG if ALLOW_FEWER else "",
    shell:
        "dfil publish {input.staged} {output} {params.allow} > {log} 2>&1"


rule publish_run_pages:
    input:
        staged=staged(RUN_PAGES),
        checked=[ancient(PUBLISH_CHECK)] if CHECK_ALL else [],
    output:
        update(directory(RUN_PAGES)),
    log:
        f"{RES}/logs/publish/{RUN_PAGES}.log",
    localrule: True  # a directory copy
    resources:
        **CPU_RESOURCES,
    shell:
        "dfil publish {input.staged} {output} > {log} 2>&1"
