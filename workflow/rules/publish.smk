# Publishing (CPU only): each table, report file and aggregate file is copied from the
# staging area to where it is read, once its rule has made it. A rule whose job fails
# (or never runs, because one upstream failed) publishes nothing, so the last good file
# stays; the onerror hook of the Snakefile marks it stale (paper_tables/<grid>/stale.json,
# and a banner in the published diff.md and diff.html), and a later run that publishes it
# again takes the mark off.
import re

from dfil.contracts.stale import NAME as STALE_NAME
from dfil.contracts.stale import update_stale
from dfil.render.stale import show_stale

PUBLISHED = [*TABLE_FILES, *REPORT_FILES, *AUDIT_FILES, *AGGREGATE_FILES]


rule publish:
    input:
        lambda wildcards: staged(wildcards.published),
    output:
        "{published}",
    log:
        f"{RES}/logs/publish/{{published}}.log",
    wildcard_constraints:
        published="|".join(re.escape(path) for path in PUBLISHED),
    localrule: True  # a file copy
    resources:
        **CPU_RESOURCES,
    shell:
        "dfil publish {input} {output} > {log} 2>&1"


def mark_stale(log=None):
    """After a run: files it was to publish and did not are stale, those it published are
    not; the marker and the published report's banner say so."""
    dag = workflow.dag
    failed, published = set(), set()
    for job in dag.needrun_jobs(exclude_finished=False):
        if job.rule.name == "publish":
            (published if dag.finished(job) else failed).update(map(str, job.output))
    marker = update_stale(f"{TABLES_OUT}/{STALE_NAME}", failed, published, log)
    show_stale(TABLES_OUT)
    if marker and failed:
        print(
            f"dfil: the rebuild failed before publishing {len(failed)} file(s); "
            f"{len(marker['stale'])} published file(s) are from the last good build and "
            f"marked stale ({TABLES_OUT}/{STALE_NAME}, and a banner in "
            f"{TABLES_OUT}/diff.md and diff.html)",
            file=sys.stderr,
        )
