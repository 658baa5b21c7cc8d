# Training stage: one job per cell, GPU resources scaled by the backbone's size class.
# The resolved grid and each cell's config reach their jobs as parameters: a config edit
# reruns exactly the cells whose resolved config it changes (and what depends on them).

rule grid_config:
    output:
        f"{RES}/grid.yaml",
    params:
        grid=lambda wildcards: json.dumps(GRID.config, sort_keys=True),
    log:
        f"{RES}/logs/grid_config.log",
    resources:
        **GRID.config["resources"]["cpu"],
    shell:
        "dfil grid resolve --json {params.grid:q} --out {output} > {log} 2>&1"


rule cell_config:
    output:
        f"{RES}/runs/{{key}}/cell.yaml",
    params:
        cell=lambda wildcards: GRID.cell_json(wildcards.key),
    log:
        f"{RES}/logs/cells/{{key}}.log",
    benchmark:
        f"{RES}/benchmarks/cell_config/{{key}}.tsv"
    resources:
        **GRID.config["resources"]["cpu"],
    shell:
        "dfil grid cell --json {params.cell:q} --out {output} > {log} 2>&1"


def cell_resource(name):
    return lambda wildcards: GRID.resources(wildcards.key).get(name, 0)


rule train_cell:
    input:
        cell=f"{RES}/runs/{{key}}/cell.yaml",
        data=data_inputs,
    output:
        summary=f"{RES}/runs/{{key}}/train_summary.json",
    log:
        f"{RES}/logs/train/{{key}}.log",
    benchmark:
        f"{RES}/benchmarks/train_cell/{{key}}.tsv"
    resources:
        gpu=cell_resource("gpu"),
        mem_mb=cell_resource("mem_mb"),
        runtime=cell_resource("runtime"),
        cpus_per_task=cell_resource("cpus_per_task"),
    shell:
        "OMP_NUM_THREADS={resources.cpus_per_task} dfil train --cell {input.cell} --out {RES}/runs/{wildcards.key} >> {log} 2>&1"
