# Rendering stage (CPU only): every table of the paper (config/tables.yaml) from one rule,
# each job waiting for exactly the cells its table prints, then the report (pages, paper
# diff, figures, tables.tex) and, where pdflatex is on PATH, tables.pdf. Without TeX the
# targets leave tables.pdf out and the run says so in one line as the Snakefile is read;
# asking for the PDF itself then fails naming how to get TeX. The table names (TABLES)
# and each one's inputs (table_metrics) are in common.smk.

TABLES_OUT = f"paper_tables/{GRID.name}"
TABLE_FILES = [f"{TABLES_OUT}/{stem}.tex" for stem in TABLES]
REPORT_FILES = [
    f"{TABLES_OUT}/{f}"
    for f in (
        "index.html",
        "tables.html",
        "numbers.csv",
        "claims.csv",
        "diff.md",
        "diff.html",
        "tables.tex",
        "figures/membership_functions.png",
        "figures/center_drift.png",
        "figures/fewshot_curves.png",
        "figures/compositional_depth.png",
    )
]
PDF_FILE = f"{TABLES_OUT}/tables.pdf"
#: Whether the targets build tables.pdf (the report's pages link tables.tex otherwise).
TEX = pdflatex() is not None
PDF_FILES = [PDF_FILE] if TEX else []
#: The report's page per run (a directory: its files are known once the tables are).
RUN_PAGES = f"{TABLES_OUT}/runs"


rule render_table:
    input:
        metrics=table_metrics,
        tables="config/tables.yaml",
        grid=f"{RES}/grid.yaml",
    output:
        staged(f"{TABLES_OUT}/{{table}}.tex"),
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
        tex=[staged(tex) for tex in TABLE_FILES],
        aggregate=staged(AGGREGATE_FILES[0]),
        tables="config/tables.yaml",
        figures="config/figures.yaml",
        grid=f"{RES}/grid.yaml",
    output:
        [staged(path) for path in REPORT_FILES],
        directory(staged(RUN_PAGES)),
    log:
        f"{RES}/logs/report.log",
    benchmark:
        f"{RES}/benchmarks/report/report.tsv"
    localrule: True
    resources:
        **CPU_RESOURCES,
    params:
        tex_dir=lambda wildcards: staged(TABLES_OUT),
        pdf="" if TEX else "--no-pdf",
    shell:
        "dfil report --config {input.grid} --tables {input.tables} --figures {input.figures} "
        "--aggregate {input.aggregate} --tex-dir {params.tex_dir} {params.pdf} > {log} 2>&1"


rule render_pdf:
    input:
        staged(f"{TABLES_OUT}/tables.tex"),
    output:
        staged(PDF_FILE),
    log:
        f"{RES}/logs/pdf.log",
    benchmark:
        f"{RES}/benchmarks/report/pdf.tsv"
    localrule: True
    resources:
        **CPU_RESOURCES,
    shell:
        "dfil pdf {input} --out {output} > {log} 2>&1"
