# Data stage: the paper's probe sets, and (embedded configs only) the synthetic FRoG-format
# stand-in and the embedded backbone.


rule probes:
    output:
        manifest=f"{RES}/probes/manifest.json",
    log:
        f"{RES}/logs/probes.log",
    benchmark:
        f"{RES}/benchmarks/probes/probes.tsv"
    # Half a second of CPU that every FRoG job waits for: runs where Snakemake runs.
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
