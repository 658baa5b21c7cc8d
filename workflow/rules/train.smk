# Training stage: one job per cell, GPU resources scaled by the backbone's size class.

rule cell_config:
    # Light (a YAML from the grid): runs where Snakemake runs, never queued on the cluster.
    localrule: True
    output:
        f"{RES}/runs/{{key}}/cell.yaml",
    log:
        f"{RES}/logs/cells/{{key}}.log",
    benchmark:
        f"{RES}/benchmarks/cell_config/{{key}}.tsv"
    resources:
        **GRID.config["resources"]["cpu"],
    shell:
        "dfil grid cell --config {CONFIG_FILES} --key {wildcards.key} --out {output} > {log} 2>&1"


def cell_resource(name, default=0):
    """A resource of the cell's backbone size class (the grid config's ``resources:``)."""
    return lambda wildcards: GRID.resources(wildcards.key).get(name, default)


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
        gpu_model=cell_resource("gpu_model", ""),
        mem_mb=cell_resource("mem_mb"),
        runtime=cell_resource("runtime"),
        cpus_per_task=cell_resource("cpus_per_task"),
    shell:
        "OMP_NUM_THREADS={resources.cpus_per_task} dfil train --cell {input.cell} --out {RES}/runs/{wildcards.key} >> {log} 2>&1"
