# Aggregation stage: every evaluated cell -> one tidy table of numbers (CPU only).


rule aggregate:
    input:
        metrics=expand(f"{RES}/runs/{{key}}/metrics.json", key=sorted(GRID.cells)),
    output:
        table=f"{RES}/aggregate/metrics.parquet",
        csv=f"{RES}/aggregate/metrics.csv",
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
        "dfil aggregate --runs {params.runs} --metrics {input.metrics} --out {output.table} "
        "> {log} 2>&1"
