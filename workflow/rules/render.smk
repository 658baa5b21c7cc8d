# Rendering stage (CPU only): every table of the paper (config/tables.yaml) from one rule,
# each job waiting for exactly the cells its table prints, then the report (paper diff,
# figures, PDF). The table names (TABLES) and each one's inputs (table_metrics) are in
# common.smk.

TABLES_OUT = f"paper_tables/{GRID.name}"
TABLE_FILES = [f"{TABLES_OUT}/{stem}.tex" for stem in TABLES]
REPORT_FILES = [
    f"{TABLES_OUT}/{f}"
    for f in (
        "diff.md",
        "diff.html",
        "tables.pdf",
        "figures/membership_functions.png",
        "figures/center_drift.png",
        "figures/fewshot_curves.png",
        "figures/compositional_depth.png",
    )
]


rule render_table:
    input:
        metrics=table_metrics,
        tables="config/tables.yaml",
        grid=f"{RES}/grid.yaml",
    output:
        f"{TABLES_OUT}/{{table}}.tex",
    log:
        f"{RES}/logs/render/{{table}}.log",
    benchmark:
        f"{RES}/benchmarks/render/{{table}}.tsv"
    wildcard_constraints:
        table="|".join(map(re.escape, TABLES)),
    localrule: True  # seconds of CPU: not worth queueing behind training
    resources:
        **CPU_RESOURCES,
    params:
        name=lambda wildcards: TABLES[wildcards.table],
        runs=lambda wildcards: f"{RES}/runs",
    shell:
        "dfil render --config {input.grid} --tables {input.tables} --runs {params.runs} "
        "--table {params.name} --out {output} > {log} 2>&1"


rule render_report:
    input:
        tex=TABLE_FILES,
        aggregate=f"{RES}/aggregate/metrics.parquet",
        tables="config/tables.yaml",
        grid=f"{RES}/grid.yaml",
    output:
        REPORT_FILES,
    log:
        f"{RES}/logs/report.log",
    benchmark:
        f"{RES}/benchmarks/report/report.tsv"
    localrule: True
    resources:
        **CPU_RESOURCES,
    params:
        tex_dir=lambda wildcards: TABLES_OUT,
    shell:
        "dfil report --config {input.grid} --tables {input.tables} "
        "--aggregate {input.aggregate} --tex-dir {params.tex_dir} > {log} 2>&1"
