# The acceptance run before the grid: `snakemake acceptance --profile slurm`. The grid's
# `acceptance:` cell is trained and evaluated by its own jobs, then a few of its training
# steps are timed on a GPU of its class; its `qlora` backbone is loaded in 4-bit and timed
# the same way (without CUDA its record says "skipped: no CUDA"). Each record,
# results/<grid>/acceptance/<kind>/<backbone>.json, holds tokens/s, steps/s, peak memory,
# the device, the trainer's commit and the date; `dfil grid cost` projects from it. Not
# part of all_tables.

#: kind (cell, qlora) -> (the cell whose config builds the model, its backbone).
ACCEPTANCE = GRID.acceptance()
NO_ACCEPTANCE = (
    f"dfil: grid {GRID.name} has no acceptance: section: name the cell "
    "(acceptance.cell) and the 4-bit backbone (acceptance.qlora) to run"
)
# Asked for on a grid without the section: one line, exit 2, before any job.
if (
    not ACCEPTANCE
    and workflow.is_main_process
    and "acceptance" in sys.argv[1:]
    and asks_for(sys.argv, ("acceptance",), "all_tables")
):
    print(NO_ACCEPTANCE, file=sys.stderr)
    sys.exit(2)
ACCEPTANCE_FILES = [
    f"{RES}/acceptance/{kind}/{backbone}.json"
    for kind, (_, backbone) in sorted(ACCEPTANCE.items())
]


rule acceptance_run:
    input:
        cell=lambda wildcards: f"{RES}/runs/{acceptance_key(wildcards)}/cell.yaml",
        # The acceptance cell is trained and evaluated by the grid's own jobs first.
        metrics=lambda wildcards: (
            [f"{RES}/runs/{acceptance_key(wildcards)}/metrics.json"]
            if wildcards.kind == "cell"
            else []
        ),
        data=lambda wildcards: data_inputs(
            SimpleNamespace(key=acceptance_key(wildcards))
        ),
    output:
        f"{RES}/acceptance/{{kind}}/{{backbone}}.json",
    log:
        f"{RES}/logs/acceptance/{{kind}}/{{backbone}}.log",
    wildcard_constraints:
        kind="cell|qlora",
    resources:
        **ACCEPTANCE_RESOURCES,
    params:
        steps=GRID.spec.acceptance.steps if GRID.spec.acceptance else 0,
        run=lambda wildcards: (
            f"--run {RES}/runs/{acceptance_key(wildcards)}"
            if wildcards.kind == "cell"
            else ""
        ),
    shell:
        "OMP_NUM_THREADS={resources.cpus_per_task} dfil acceptance --cell {input.cell} "
        "--kind {wildcards.kind} --steps {params.steps} {params.run} --out {output} "
        "> {log} 2>&1"


if ACCEPTANCE:

    rule acceptance:
        input:
            ACCEPTANCE_FILES,

else:

    rule acceptance:
        log:
            f"{RES}/logs/acceptance/no-section.log",
        localrule: True
        params:
            note=NO_ACCEPTANCE,
        shell:
            "echo {params.note:q} | tee {log} >&2; exit 2"
