# Evaluation stage: every metric of a cell from its checkpoint (a model forward pass over
# FRoG-hard, the probe sets and QuRe, so it gets the same accelerator as training).


rule evaluate_cell:
    input:
        summary=f"{RES}/runs/{{key}}/train_summary.json",
        data=data_inputs,
        features=feature_stamps("evaluate"),
    output:
        metrics=f"{RES}/runs/{{key}}/metrics.json",
        predictions=f"{RES}/runs/{{key}}/predictions.parquet",
        mf=f"{RES}/runs/{{key}}/mf.json",
    log:
        f"{RES}/logs/evaluate/{{key}}.log",
    benchmark:
        f"{RES}/benchmarks/evaluate_cell/{{key}}.tsv"
    resources:
        **CELL_RESOURCES["evaluate"],
        # Snakemake's attempt, passed on: the last one records a failure (keep-going)
        dfil_attempt=lambda wildcards, attempt: attempt,
    params:
        run=lambda wildcards: f"{RES}/runs/{wildcards.key}",
    shell:
        "OMP_NUM_THREADS={resources.cpus_per_task} DFIL_FEATURES_CACHED=1 dfil evaluate --run {params.run} "
        "--attempt {resources.dfil_attempt} --log {log} --features {input.features} > {log} 2>&1"
