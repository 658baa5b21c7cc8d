# Aggregation stage: every evaluated cell -> one tidy table of numbers (CPU only).


AGGREGATE_FILES = [f"{RES}/aggregate/metrics.parquet", f"{RES}/aggregate/metrics.csv"]


rule aggregate:
    input:
        metrics=expand(f"{RES}/runs/{{key}}/metrics.json", key=sorted(GRID.cells)),
        grid=f"{RES}/grid.yaml",
    output:
        table=staged(AGGREGATE_FILES[0]),
        csv=staged(AGGREGATE_FILES[1]),
    log:
        f"{RES}/logs/aggregate.log",
    benchmark:
        f"{RES}/benchmarks/aggregate/aggregate.tsv"
    localrule: True  # reads small JSON files: not worth a cluster job
    resources:
        **CPU_RESOURCES,
    params:
        runs=lambda wildcards: f"{RES}/runs",
    shell:
        "dfil aggregate --runs {params.runs} --metrics {input.metrics} --config {input.grid} "
        "--out {output.table} > {log} 2>&1"
