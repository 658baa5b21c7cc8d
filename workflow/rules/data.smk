# Data stage: the paper's probe sets, and (embedded configs only) the synthetic FRoG-format
# stand-in and the embedded backbone.

rule probes:
    output:
        manifest=f"{RES}/probes/manifest.json",
    log:
        f"{RES}/logs/probes.log",
    benchmark:
        f"{RES}/benchmarks/probes/probes.tsv"
    params:
        seed=config.get("probe_seed", 0),
    resources:
        **GRID.config["resources"]["cpu"],
    shell:
        "dfil probes --out {RES}/probes --seed {params.seed} > {log} 2>&1"


rule synth_frog:
    output:
        easy=f"{RES}/data/frog/easy.jsonl",
        hard=f"{RES}/data/frog/hard.jsonl",
    log:
        f"{RES}/logs/synth_frog.log",
    benchmark:
        f"{RES}/benchmarks/synth_frog/frog.tsv"
    params:
        **config.get("embedded_data", {}).get("frog", {}),
    resources:
        **GRID.config["resources"]["cpu"],
    shell:
        "dfil synth-frog --out {RES}/data/frog --seed {params.seed} "
        "--n-easy {params.n_easy} --n-hard {params.n_hard} > {log} 2>&1"


rule fetch_backbone:
    output:
        stamp=f"{RES}/backbones/{{name}}.path",
    log:
        f"{RES}/logs/fetch_backbone_{{name}}.log",
    benchmark:
        f"{RES}/benchmarks/fetch_backbone/{{name}}.tsv"
    resources:
        **GRID.config["resources"]["cpu"],
    shell:
        "dfil fetch-backbone {wildcards.name} --stamp {output.stamp} > {log} 2>&1"


def data_inputs(wildcards):
    """What a cell reads besides its YAML: probes, embedded data and backbones."""
    cell = GRID.cell(wildcards.key)
    inputs = []
    if cell.config["data"]["task"] == "frog" and cell.config["eval"]["probes"]:
        inputs.append(f"{RES}/probes/manifest.json")
    if "embedded_data" in config and cell.config["data"]["task"] == "frog":
        inputs.append(f"{RES}/data/frog/easy.jsonl")
    model_id = cell.config["model"]["backbone"]["model_id"]
    if model_id.startswith("embedded:"):
        inputs.append(f"{RES}/backbones/{model_id.split(':', 1)[1]}.path")
    return inputs
