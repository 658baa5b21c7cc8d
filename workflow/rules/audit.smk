# Paper audit (CPU only, no runs needed): every statistic the paper prints whose inputs it
# also prints, recomputed from the checks transcribed in config/paper_audit.yaml, rendered
# beside this grid's tables (target paper_audit, in the Snakefile). The diff report links
# to it.

AUDIT_CHECKS = "config/paper_audit.yaml"
AUDIT_FILES = [
    f"paper_tables/{GRID.name}/audit.md",
    f"paper_tables/{GRID.name}/audit.html",
]


rule render_audit:
    input:
        checks=AUDIT_CHECKS,
    output:
        md=staged(AUDIT_FILES[0]),
        html=staged(AUDIT_FILES[1]),
    log:
        f"{RES}/logs/audit.log",
    benchmark:
        f"{RES}/benchmarks/audit/audit.tsv"
    localrule: True  # a second of CPU
    resources:
        **CPU_RESOURCES,
    shell:
        "dfil audit --checks {input.checks} --out-md {output.md} --out-html {output.html} "
        "> {log} 2>&1"
