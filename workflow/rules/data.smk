# Data stage: the paper's probe sets, and (embedded configs only) the synthetic FRoG-format
# stand-in and the embedded backbone.


rule probes:
    output:
        manifest=f"{RES}/probes/manifest.json",
    log:
        f"{RES}/logs/probes.log",
    benchmark:
        f"{RES}/benchmarks/probes/probes.tsv"
    # Light (seconds on a CPU): runs where Snakemake runs, never queued on the cluster.
    localrule: True
    resources:
        **CPU_RESOURCES,
    params:
        out=lambda wildcards, output: os.path.dirname(output.manifest),
        seed=GRID.spec.probe_seed,
    shell:
        "dfil probes --out {params.out} --seed {params.seed} > {log} 2>&1"


#: The synthetic FRoG stand-in's settings, defaults filled in (embedded grids only).
FROG_STANDIN = (
    GRID.spec.embedded_data.frog.model_dump() if GRID.spec.embedded_data else {}
)


rule synth_frog:
    output:
        easy=f"{RES}/data/frog/easy.jsonl",
        hard=f"{RES}/data/frog/hard.jsonl",
    log:
        f"{RES}/logs/synth_frog.log",
    benchmark:
        f"{RES}/benchmarks/synth_frog/frog.tsv"
    resources:
        **CPU_RESOURCES,
    params:
        **FROG_STANDIN,
        out=lambda wildcards, output: os.path.dirname(output.easy),
    shell:
        "dfil synth-frog --out {params.out} --seed {params.seed} "
        "--n-easy {params.n_easy} --n-hard {params.n_hard} --hard-form {params.hard_form} "
        "> {log} 2>&1"


rule fetch_backbone:
    output:
        stamp=f"{RES}/backbones/{{name}}.path",
    log:
        f"{RES}/logs/fetch_backbone_{{name}}.log",
    benchmark:
        f"{RES}/benchmarks/fetch_backbone/{{name}}.tsv"
    resources:
        **CPU_RESOURCES,
    shell:
        "dfil fetch-backbone {wildcards.name} --stamp {output.stamp} > {log} 2>&1"


# One job per hub backbone or dataset (however many cells read it), at the commit the grid's
# lock file pins, into the one cache (DFIL_HUB_CACHE); cells wait for its stamp. Runs where
# Snakemake runs (grid key fetch: local, a login node with the network) or as a CPU job
# (fetch: job). A dataset's splits are prepared as parquet here, so GPU jobs only read.
rule hub_fetch:
    output:
        stamp=f"{RES}/hub/{{kind}}/{{name}}.json",
    log:
        f"{RES}/logs/hub_fetch/{{kind}}/{{name}}.log",
    benchmark:
        f"{RES}/benchmarks/hub_fetch/{{kind}}/{{name}}.tsv"
    wildcard_constraints:
        kind="model|dataset",
        name=HUB_NAMES,
    localrule: GRID.spec.fetch == "local"
    resources:
        **CPU_RESOURCES,
    params:
        args=fetch_args,
    shell:
        "dfil hub fetch {params.args} --stamp {output.stamp} > {log} 2>&1"
