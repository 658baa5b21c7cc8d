# Before the real run: `snakemake preflight --profile slurm` checks, on the machine that
# runs Snakemake (a local rule: nothing is submitted), that every hub backbone and dataset
# is locked and reachable at its commit or already fetched (a gated one needs a token),
# that the cache has room for what is left to download, and that SLURM has the profile's
# partitions, each size class's gpu_model and the account; then it prints the grid's
# projected GPU-hours (`dfil grid preflight`, one line per check). It fails when a check
# finds a problem, and writes no output, so it runs whenever it is asked for.


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
        profiles=shlex.join(f"--profile={path}" for path in PREFLIGHT_PROFILES or []),
    shell:
        "dfil grid preflight --config {params.config} {params.profiles} 2>&1 | tee {log}"
