# Rendering stage (CPU only): one rule per table of the paper (config/tables.yaml), each
# waiting for exactly the cells it prints, then the report (paper diff, figures, PDF).
from dfil.render import file_stem, load_specs, table_keys, table_names

TABLE_SPECS = load_specs("config/tables.yaml")
TABLES_OUT = f"paper_tables/{GRID.name}"
TABLE_FILES = {name: f"{TABLES_OUT}/{file_stem(TABLE_SPECS, name)}.tex"
               for name in table_names(TABLE_SPECS)}
REPORT_FILES = [f"{TABLES_OUT}/{f}" for f in
                ("diff.md", "diff.html", "tables.pdf", "figures/membership_functions.png",
                 "figures/center_drift.png", "figures/fewshot_curves.png",
                 "figures/compositional_depth.png")]

for _name, _tex in TABLE_FILES.items():

    rule:
        name:
            f"render_{_name}"
        localrule: True  # seconds of CPU: not worth queueing behind training
        input:
            metrics=expand(f"{RES}/runs/{{key}}/metrics.json",
                           key=table_keys(TABLE_SPECS, GRID, _name)),
            tables="config/tables.yaml",
        output:
            _tex,
        params:
            table=_name,
        log:
            f"{RES}/logs/render/{_name}.log",
        benchmark:
            f"{RES}/benchmarks/render/{_name}.tsv"
        resources:
            **GRID.config["resources"]["cpu"],
        shell:
            "dfil render --config {CONFIG_FILES} --tables {input.tables} --runs {RES}/runs "
            "--table {params.table} --out {output} > {log} 2>&1"


rule render_report:
    localrule: True
    input:
        tex=list(TABLE_FILES.values()),
        aggregate=f"{RES}/aggregate/metrics.parquet",
        tables="config/tables.yaml",
    output:
        REPORT_FILES,
    log:
        f"{RES}/logs/report.log",
    benchmark:
        f"{RES}/benchmarks/report/report.tsv"
    resources:
        **GRID.config["resources"]["cpu"],
    shell:
        "dfil report --config {CONFIG_FILES} --tables {input.tables} "
        "--aggregate {input.aggregate} --tex-dir {TABLES_OUT} > {log} 2>&1"
