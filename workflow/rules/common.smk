# Helpers of the rules (input and resource functions), kept apart from the rules.

# Tables, the report and the aggregate are written here first, and published (copied to
# where they are read) only once made: Snakemake removes a job's outputs before the job
# runs, so a rebuild that fails never deletes the last good ones (publish.smk).
STAGE = f"{RES}/staging"


def staged(path):
    """Where a rule writes ``path`` (below results/<grid>/ or paper_tables/) before it is
    published."""
    return f"{STAGE}/{path.removeprefix(RES + '/')}"


def cell_resource(name, default=0):
    """A resource of the cell's backbone size class (the grid config's ``resources:``)."""
    return lambda wildcards: GRID.resources(wildcards.key).get(name, default)


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
