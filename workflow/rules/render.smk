# Rendering stage (CPU only): one rule per table of the paper (config/tables.yaml), each
# waiting for exactly the cells it prints, then the report (paper diff, figures, PDF);
# all written to the staging area, then published (publish.smk).
from dfil.render import file_stem, load_specs, table_keys, table_names

TABLE_SPECS = one_line(load_specs, "config/tables.yaml")
TABLES_OUT = f"paper_tables/{GRID.name}"
TABLE_FILES = {
    name: f"{TABLES_OUT}/{file_stem(TABLE_SPECS, name)}.tex"
    for name in table_names(TABLE_SPECS)
}
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

for _name, _tex in TABLE_FILES.items():

    rule:
        name:
            f"render_{_name}"
        input:
            metrics=expand(
                f"{RES}/runs/{{key}}/metrics.json",
                key=table_keys(TABLE_SPECS, GRID, _name),
            ),
            tables="config/tables.yaml",
            grid=f"{RES}/grid.yaml",
        output:
            staged(_tex),
        log:
            f"{RES}/logs/render/{_name}.log",
        benchmark:
            f"{RES}/benchmarks/render/{_name}.tsv"
        localrule: True  # seconds of CPU: not worth queueing behind training
        resources:
            **GRID.config["resources"]["cpu"],
        params:
            table=_name,
            runs=lambda wildcards: f"{RES}/runs",
        shell:
            "dfil render --config {input.grid} --tables {input.tables} --runs {params.runs} "
            "--table {params.table} --out {output} > {log} 2>&1"


rule render_report:
    input:
        tex=[staged(tex) for tex in TABLE_FILES.values()],
        aggregate=staged(AGGREGATE_FILES[0]),
        tables="config/tables.yaml",
        grid=f"{RES}/grid.yaml",
    output:
        [staged(path) for path in REPORT_FILES],
    log:
        f"{RES}/logs/report.log",
    benchmark:
        f"{RES}/benchmarks/report/report.tsv"
    localrule: True
    resources:
        **GRID.config["resources"]["cpu"],
    params:
        tex_dir=lambda wildcards: staged(TABLES_OUT),
    shell:
        "dfil report --config {input.grid} --tables {input.tables} "
        "--aggregate {input.aggregate} --tex-dir {params.tex_dir} > {log} 2>&1"
