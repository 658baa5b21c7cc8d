# Training stage: one job per cell (with the grid's `pack`, a job per configuration's seeds
# first), GPU resources scaled by the backbone's size class.
# The resolved grid and each cell's config reach their jobs as parameters: a config edit
# reruns exactly the cells whose resolved config it changes (and what depends on them).


rule grid_config:
    output:
        f"{RES}/grid.yaml",
    log:
        f"{RES}/logs/grid_config.log",
    # Light (the resolved grid as YAML): runs where Snakemake runs.
    localrule: True
    resources:
        **CPU_RESOURCES,
    params:
        grid=lambda wildcards: json.dumps(GRID.config, sort_keys=True),
    shell:
        "dfil grid resolve --json {params.grid:q} --out {output} > {log} 2>&1"


rule cell_config:
    output:
        f"{RES}/runs/{{key}}/cell.yaml",
    log:
        f"{RES}/logs/cells/{{key}}.log",
    benchmark:
        f"{RES}/benchmarks/cell_config/{{key}}.tsv"
    # Light (a YAML from the grid): runs where Snakemake runs, never queued on the cluster.
    localrule: True
    resources:
        **CPU_RESOURCES,
    params:
        cell=lambda wildcards: GRID.cell_json(wildcards.key),
    shell:
        "dfil grid cell --json {params.cell:q} --out {output} > {log} 2>&1"


# With the grid's `pack`: one job trains the first attempt of a configuration's seeds at
# once (one pass of the shared base for all) and records which it trained, with each
# finished seed's summary; each seed's train_cell job then finishes its own run (that
# summary copied from the record, collapse remediation, or the seed alone where the pack
# left it out or gave up). A pack killed from outside on its last attempt (out of memory,
# kill -9) records nothing itself: `dfil died` then writes that it gave up.
rule train_pack:
    input:
        cells=lambda wildcards: [
            f"{RES}/runs/{key}/cell.yaml" for key in PACKS[wildcards.pack]
        ],
        data=pack_first(data_inputs),
        features=pack_first(feature_stamps("train")),
    output:
        f"{RES}/packs/{{pack}}.json",
    log:
        f"{RES}/logs/train_pack/{{pack}}.log",
    benchmark:
        f"{RES}/benchmarks/train_pack/{{pack}}.tsv"
    wildcard_constraints:
        pack=keys_pattern(PACKS),
    resources:
        **PACK_RESOURCES,
        dfil_attempt=lambda wildcards, attempt: attempt,
    params:
        runs=lambda wildcards: [f"{RES}/runs/{key}" for key in PACKS[wildcards.pack]],
    shell:
        "OMP_NUM_THREADS={resources.cpus_per_task} DFIL_FEATURES_CACHED=1 dfil train --cell {input.cells} --out {params.runs} "
        "--pack-record {output} --attempt {resources.dfil_attempt} --log {log} --features {input.features} >> {log} 2>&1 "
        "|| dfil died --pack-record {output} --out {params.runs} --status $? --attempt {resources.dfil_attempt} --log {log} >> {log} 2>&1"


rule train_cell:
    input:
        cell=f"{RES}/runs/{{key}}/cell.yaml",
        data=data_inputs,
        features=feature_stamps("train"),
        pack=pack_record,
    output:
        summary=f"{RES}/runs/{{key}}/train_summary.json",
    log:
        f"{RES}/logs/train/{{key}}.log",
    benchmark:
        f"{RES}/benchmarks/train_cell/{{key}}.tsv"
    wildcard_constraints:
        key=keys_pattern(GRID.cells.keys() - UNTRAINED),
    resources:
        **CELL_RESOURCES["train"],
        # Snakemake's attempt, passed on: the last one records a failure (keep-going)
        dfil_attempt=lambda wildcards, attempt: attempt,
    params:
        run=lambda wildcards: f"{RES}/runs/{wildcards.key}",
    shell:
        "OMP_NUM_THREADS={resources.cpus_per_task} DFIL_FEATURES_CACHED=1 dfil train --cell {input.cell} --out {params.run} "
        "--attempt {resources.dfil_attempt} --log {log} --features {input.features} --packed-by {input.pack} >> {log} 2>&1"


# A cell whose method trains nothing (zero_shot) only records that in its summary: it runs
# where Snakemake runs, never queued on the GPU partition.
use rule train_cell as untrained_cell with:
    benchmark:
        f"{RES}/benchmarks/untrained_cell/{{key}}.tsv"
    wildcard_constraints:
        key=keys_pattern(UNTRAINED),
    localrule: True
    resources:
        **CPU_RESOURCES,
        dfil_attempt=lambda wildcards, attempt: attempt,
