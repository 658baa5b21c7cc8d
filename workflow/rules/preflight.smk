# Before the real run: `snakemake preflight --profile slurm` checks, on the machine that
# runs Snakemake, that every hub backbone and dataset is locked and reachable at its
# commit or already fetched (a gated one needs a token), that the cache has room for what
# is left to download, and that SLURM takes each rule's jobs as the profile sends them
# (partitions, each size class's gpu_model, the accounts, QOS and the site's limits);
# then it prints the grid's projected GPU-hours (`dfil grid preflight`, one line per
# check). As the command's only target it runs inside Snakemake before any DAG is built
# (the Snakefile), nothing submitted; this rule is what a dry run shows and what runs
# beside other targets (there without a profile: the hub checks and each class's GPU
# type and limits). It fails when a check finds a problem, and writes no output, so it
# runs whenever it is asked for.


rule preflight:
    log:
        f"{RES}/logs/preflight.log",
    # A failed check fails the same way again: no retry (the profile's retries: 2).
    retries: 0
    localrule: True
    resources:
        **CPU_RESOURCES,
    params:
        config=shlex.join(map(str, workflow.configfiles)),
    shell:
        "dfil grid preflight --config {params.config} 2>&1 | tee {log}"
