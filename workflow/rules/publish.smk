# Publishing (CPU only): each table, report file (and the report's run pages) and aggregate
# file is copied from the
# staging area to where it is read, once its rule has made it. A rule whose job fails
# (or never runs, because one upstream failed) publishes nothing, so the last good file
# stays; the onerror hook of the Snakefile (mark_stale, common.smk) marks it stale (paper_tables/<grid>/stale.json,
# and a banner in the published diff.md and diff.html), and a later run that publishes it
# again takes the mark off. A staged file that does not read as what it is, or that holds
# fewer entries than the published one from the same runs and config hashes, is refused
# (dfil.render.publish); `--config allow_fewer=1` lets the smaller one through.
import re

PUBLISHED = [*TABLE_FILES, *REPORT_FILES, PDF_FILE, *AUDIT_FILES, *AGGREGATE_FILES]


rule publish:
    input:
        lambda wildcards: staged(wildcards.published),
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
        "dfil publish {input} {output} {params.allow} > {log} 2>&1"


rule publish_run_pages:
    input:
        staged(RUN_PAGES),
    output:
        update(directory(RUN_PAGES)),
    log:
        f"{RES}/logs/publish/{RUN_PAGES}.log",
    localrule: True  # a directory copy
    resources:
        **CPU_RESOURCES,
    shell:
        "dfil publish {input} {output} > {log} 2>&1"
