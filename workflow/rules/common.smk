# Helpers of the rules (input and resource functions), kept apart from the rules.
from dfil.methods import method_spec
from dfil.render import file_stem, load_specs, table_keys, table_names

#: The light jobs' resources: the grid's `cpu` class (validation requires it).
CPU_RESOURCES = GRID.config["resources"]["cpu"]


def cell_resource(name, default=0):
    """A resource of the cell's backbone size class (the grid config's ``resources:``)."""
    return lambda wildcards: GRID.resources(wildcards.key).get(name, default)


def cell_runtime(wildcards, attempt):
    """The size class's ``runtime`` times the attempt: a job that hit its time limit is
    retried with a longer one (it resumes from its checkpoint, so nothing is redone)."""
    return GRID.resources(wildcards.key).get("runtime", 0) * attempt


#: A model job's resources (training, evaluation): its cell's backbone size class.
CELL_RESOURCES = {
    name: cell_resource(name, default)
    for name, default in (
        ("gpu", 0),
        ("gpu_model", ""),
        ("mem_mb", 0),
        ("cpus_per_task", 0),
    )
} | {"runtime": cell_runtime}


def keys_pattern(keys):
    """A regex matching exactly ``keys`` (one that matches nothing when there are none)."""
    return "|".join(re.escape(k) for k in sorted(keys)) or "(?!)"


#: Cells whose method trains nothing (zero_shot): their "training" writes a summary.
UNTRAINED = {
    key
    for key, cell in GRID.cells.items()
    if not method_spec(cell.config["model"]["method"]).trains
}


def data_inputs(wildcards):
    """What a cell reads besides its YAML: probes, embedded data and backbones."""
    cell = GRID.cell(wildcards.key)
    inputs = []
    if cell.config["data"]["task"] == "frog" and cell.config["eval"]["probes"]:
        inputs.append(f"{RES}/probes/manifest.json")
    if GRID.spec.embedded_data is not None and cell.config["data"]["task"] == "frog":
        inputs.append(f"{RES}/data/frog/easy.jsonl")
    model_id = cell.config["model"]["backbone"]["model_id"]
    if model_id.startswith("embedded:"):
        inputs.append(f"{RES}/backbones/{model_id.split(':', 1)[1]}.path")
    return inputs


#: The declared tables; a table's file stem (T05-scaling) -> its name there (scaling).
TABLE_SPECS = load_specs("config/tables.yaml")
TABLES = {file_stem(TABLE_SPECS, name): name for name in table_names(TABLE_SPECS)}


def table_metrics(wildcards):
    """The metrics.json of every cell the table prints (tables it refers to included)."""
    keys = table_keys(TABLE_SPECS, GRID, TABLES[wildcards.table])
    return expand(f"{RES}/runs/{{key}}/metrics.json", key=keys)
