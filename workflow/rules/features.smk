# Frozen features: one job per feature group (cells whose prompts and backbone settings
# agree) and item set (train, val, test, probes, qure), upstream of every train and
# evaluate job of the group, which then only read the cache (DFIL_FEATURES_CACHED=1).


rule frozen_features:
    input:
        data=feature_data_inputs,
    output:
        stamp=f"{RES}/features/{{fset}}.json",
    log:
        f"{RES}/logs/features/{{fset}}.log",
    benchmark:
        f"{RES}/benchmarks/frozen_features/{{fset}}.tsv"
    wildcard_constraints:
        fset=keys_pattern(FEATURE_JOBS),
    resources:
        **FEATURE_RESOURCES,
    params:
        # The cache's key format: a new one computes every feature set again.
        cache_format=FEATURE_CACHE_FORMAT,
        cell=lambda wildcards: GRID.cell_json(FEATURE_JOBS[wildcards.fset]),
        item_set=lambda wildcards: wildcards.fset.rsplit("/", 1)[1],
    shell:
        "OMP_NUM_THREADS={resources.cpus_per_task} dfil features --json {params.cell:q} "
        "--items {params.item_set} --stamp {output.stamp} > {log} 2>&1"
