# Helpers of the rules (input and resource functions), kept apart from the rules.
import shlex
from types import SimpleNamespace

from dfil.core.methods import method_spec
from dfil.cost.packs import grid_packs
from dfil.cluster.partitions import GPU_PARTITION, job_partition, profile_text
from dfil.contracts.failure import failure_ahead
from dfil.engine.featuresets import (
    FEATURE_CACHE_FORMAT,
    feature_group,
    feature_jobs,
    item_sets,
    reads_features,
)
from dfil.contracts.stale import NAME as STALE_NAME
from dfil.contracts.stale import published_before, stale_note, update_stale
from dfil.render import file_stem, load_specs, table_keys, table_names
from dfil.render.coordinates import check_coordinates
from dfil.render.figure_spec import check_figures
from dfil.render.pdf import pdflatex, skipped_note
from dfil.render.stale import show_stale
from dfil.train.sealed import sealed_summary

#: What a size class may leave out (or set to null), as a job then gets it: no GPU, no
#: stated memory or time (the site's defaults), and one CPU (SLURM's own default).
CLASS_DEFAULTS = {
    "gpu": 0,
    "gpu_model": "",
    "mem_mb": 0,
    "runtime": 0,
    "cpus_per_task": 1,
}

#: The light jobs' resources: the grid's `cpu` class (validation requires it), one CPU
#: where it names none (their commands set OMP_NUM_THREADS from it).
CPU_RESOURCES = {"cpus_per_task": CLASS_DEFAULTS["cpus_per_task"]} | {
    name: value
    for name, value in GRID.config["resources"]["cpu"].items()
    if value is not None
}

# Tables, the report and the aggregate are written here first, and published (copied to
# where they are read) only once made: Snakemake removes a job's outputs before the job
# runs, so a rebuild that fails never deletes the last good ones (publish.smk).
STAGE = f"{RES}/staging"


def staged(path):
    """Where a rule writes ``path`` (below results/<grid>/ or paper_tables/) before it is
    published."""
    return f"{STAGE}/{path.removeprefix(f'{RES}/')}"


def light_ahead(wildcards, input, stage):
    """Why cell ``wildcards.key``'s ``stage`` job will compute nothing on a GPU, or None:
    it will only record a failure (a gated repo's refused fetch, a failed training among
    its inputs), or, a training job, only write the summary of what its pack trained."""
    failure = failure_ahead(input)
    if failure is None and stage == "train" and input.get("pack"):
        summary, _ = sealed_summary(
            input.pack, input.cell, f"{RES}/runs/{wildcards.key}"
        )
        if summary is not None:
            return "finished in its pack"
    return failure


def cell_request(wildcards, input, stage):
    """What cell ``wildcards.key``'s ``stage`` job (train, evaluate) asks for: its
    backbone's size class (the grid config's ``resources:``), the same on every attempt
    (a job stopped at its time limit continues from its checkpoint in a job of the same
    size). Snakemake asks again once the job's inputs exist: a job with nothing to
    compute on a GPU (:func:`light_ahead`) gets the ``cpu`` class."""
    return GRID.job_resources(
        wildcards.key, stage, light_ahead(wildcards, input, stage)
    )


def profile_resource(name):
    """A default resource as the profiles (or --default-resources) give it, as text; None
    where none is set (a local run)."""
    given = workflow.resource_settings.default_resources
    found = given.get(name) if given is not None else None
    if found is None:
        return None
    return profile_text(found.raw if isinstance(found.raw, str) else found.value)


#: The profile's partitions: the CPU one (every job without a GPU) and the GPU one.
PARTITIONS = {
    "cpu": profile_resource("slurm_partition"),
    "gpu": profile_resource(GPU_PARTITION),
}


def class_resources(request):
    """A model job's ``resources:`` from ``request(wildcards, input)``, the size class it
    asks for (:meth:`Grid.job_resources`): each of :data:`CLASS_DEFAULTS`, and the
    partition that goes with it (the GPU partition where it asks a GPU, the CPU one where
    it asks none). Snakemake asks again once the job's inputs exist."""

    def resource(name, default):
        def value(wildcards, input):
            given = request(wildcards, input).get(name)
            return default if given is None else given

        return value

    def partition(wildcards, input):
        return job_partition(
            request(wildcards, input), PARTITIONS["cpu"], PARTITIONS["gpu"]
        )

    return {
        name: resource(name, default) for name, default in CLASS_DEFAULTS.items()
    } | {"slurm_partition": partition}


#: A model job's resources per stage (training, evaluation): its cell's size class
#: (:func:`cell_request`), and the partition that class goes to.
CELL_RESOURCES = {
    stage: class_resources(
        lambda wildcards, input, stage=stage: cell_request(wildcards, input, stage)
    )
    for stage in ("train", "evaluate")
}


def keys_pattern(keys):
    """A regex matching exactly ``keys`` (one that matches nothing when there are none)."""
    return "|".join(re.escape(k) for k in sorted(keys)) or "(?!x)x"


#: Cells whose method trains nothing (zero_shot): their "training" writes a summary.
UNTRAINED = {
    key
    for key, cell in GRID.cells.items()
    if not method_spec(cell.config["model"]["method"]).trains
}


#: With the grid's ``pack``: each configuration's seeds that train together, by pack name
#: (its configuration), and the pack each run key trains in.
PACKS = grid_packs(GRID)
PACK_OF = {key: name for name, keys in PACKS.items() for key in keys}


def pack_first(function):
    """An input function of a cell's wildcards, for a pack: that of its first seed (its
    seeds share everything but the seed)."""
    return lambda wildcards: function(SimpleNamespace(key=PACKS[wildcards.pack][0]))


def pack_record(wildcards):
    """The record of the pack a cell trains in ([] for a cell trained alone); ancient():
    a pack trained again for one seed's sake (its config edited, its run deleted) reruns
    that seed's own job through its own inputs, never its siblings'."""
    name = PACK_OF.get(wildcards.key)
    return [] if name is None else [ancient(f"{RES}/packs/{name}.json")]


def pack_request(wildcards, input):
    """What a pack's training job asks: its first seed's training job's request, the
    same on every attempt (a pack stopped at its time limit resumes every seed from its
    checkpoint in a job of the same size; on the last attempt it leaves them to their own
    jobs, which resume them)."""
    return GRID.job_resources(PACKS[wildcards.pack][0], "train", failure_ahead(input))


#: A pack's training job's resources, as a cell's (:data:`CELL_RESOURCES`).
PACK_RESOURCES = class_resources(pack_request)


def data_inputs(wildcards):
    """What a cell reads besides its YAML: probes, embedded data and backbones, and the
    stamps of the hub backbone and datasets it reads (fetched once each)."""
    cell = GRID.cell(wildcards.key)
    inputs = []
    if cell.config["data"]["task"] == "frog" and cell.config["eval"]["probes"]:
        inputs.append(f"{RES}/probes/manifest.json")
    if GRID.spec.embedded_data is not None and cell.config["data"]["task"] == "frog":
        inputs.append(f"{RES}/data/frog/easy.jsonl")
    inputs += [f"{RES}/hub/{kind}/{name}.json" for kind, name in cell.fetches]
    model_id = cell.config["model"]["backbone"]["model_id"]
    if model_id.startswith("embedded:"):
        inputs.append(f"{RES}/backbones/{model_id.split(':', 1)[1]}.path")
    return inputs


#: The declared tables; a table's file stem (T05-scaling) -> its name there (scaling).
#: Every name they give a cell must be known to this grid or the paper's (a typo is an
#: error here, never a row with no runs), every metric to metrics.json's schema.
TABLE_SPECS = or_exit(load_specs, "config/tables.yaml")
or_exit(check_coordinates, TABLE_SPECS, GRID.config, "config/tables.yaml")
# The declared figures likewise: their cells and paper tables, before the DAG is built.
or_exit(
    check_figures, "config/figures.yaml", TABLE_SPECS, GRID.config, "config/tables.yaml"
)
TABLES = {file_stem(TABLE_SPECS, name): name for name in table_names(TABLE_SPECS)}


def table_metrics(wildcards):
    """The metrics.json of every cell the table prints (tables it refers to included)."""
    keys = table_keys(TABLE_SPECS, GRID, TABLES[wildcards.table])
    return expand(f"{RES}/runs/{{key}}/metrics.json", key=keys)


def mark_stale(log=None):
    """After a run: files it was to publish and did not are stale, those it published or
    found up to date are not (so a good run clears every mark its targets cover); the
    marker and the published report's banner say so."""
    if isinstance(log, (list, tuple)):  # onerror's `log`: Snakemake's log files
        log = ", ".join(map(str, log))
    dag = workflow.dag
    failed, published = set(), set()
    for job in dag.jobs:
        if job.rule.name in ("publish", "publish_run_pages"):
            done = not dag.needrun(job) or dag.finished(job)
            (published if done else failed).update(map(str, job.output))
    marker = update_stale(
        f"{TABLES_OUT}/{STALE_NAME}", published_before(failed), published, log
    )
    show_stale(TABLES_OUT)
    if failed:
        where = (
            f" ({TABLES_OUT}/{STALE_NAME}, and a banner in {TABLES_OUT}/index.html, "
            "diff.md and diff.html)"
            if marker
            else ""
        )
        print(stale_note(len(failed), marker) + where, file=sys.stderr)


#: The grid's hub backbones and datasets by name (the fetch rule's wildcard); a pattern
#: that matches nothing when the grid reads none.
HUB_NAMES = "|".join(re.escape(name) for _, name in sorted(GRID.pins)) or "(?!x)x"


def fetch_args(wildcards):
    """``dfil hub fetch``'s arguments for one hub entry: repo, locked commit, its configs."""
    pin, commit = GRID.fetch_target(wildcards.kind, wildcards.name, LOCKED)
    args = [
        "--kind",
        pin.kind,
        "--repo",
        pin.repo,
        "--revision",
        commit,
        "--label",
        pin.label,
    ]
    if pin.kind == "dataset":
        for name in GRID.spec.datasets[pin.label].configs:
            args += ["--config", name]
    return shlex.join(args)


#: The frozen-feature jobs: "<feature group>/<item set>" -> the cell (the group's first)
#: whose config computes them (dfil.engine.featuresets).
FEATURE_JOBS = feature_jobs({key: cell.config for key, cell in GRID.cells.items()})


def feature_stamps(stage):
    """The stamps of the frozen-feature item sets a cell's ``stage`` job (train,
    evaluate) reads. ancient(): a stamp rewritten for the same cached features reruns no
    cell (what the features are is part of each cell's own config)."""

    def stamps(wildcards):
        config = GRID.cell(wildcards.key).config
        group = feature_group(config) if reads_features(config) else None
        return [
            ancient(f"{RES}/features/{group}/{name}.json")
            for name in item_sets(config, stage)
        ]

    return stamps


def feature_data_inputs(wildcards):
    """What a frozen-feature job reads: its group's first cell's data inputs."""
    return data_inputs(SimpleNamespace(key=FEATURE_JOBS[wildcards.fset]))


#: A frozen-feature job's resources: its cell's evaluation job's (a forward pass).
FEATURE_RESOURCES = class_resources(
    lambda wildcards, input: GRID.job_resources(
        FEATURE_JOBS[wildcards.fset], "evaluate"
    )
)


def acceptance_key(wildcards):
    """The run key of an acceptance job's cell (acceptance.smk's ``ACCEPTANCE``)."""
    return ACCEPTANCE[wildcards.kind][0]


#: An acceptance job's resources: the training job's of its cell (a GPU of its size
#: class).
ACCEPTANCE_RESOURCES = class_resources(
    lambda wildcards, input: GRID.job_resources(acceptance_key(wildcards), "train")
)
