"""Dry runs of the Snakemake DAG: the paper grid through the slurm profile (no SLURM
needed for -n), the embedded default, and one cell's chain."""

import re

import pytest

from dfil.render import load_specs, table_names
from snakemake_cli import ROOT, snakemake

# Real processes (training, Snakemake, the hub mirror): `pytest -m "not slow"` skips them.
pytestmark = pytest.mark.slow

#: The tables config/tables.yaml declares: one render_table job and one published file each.
N_TABLES = len(table_names(load_specs(ROOT / "config/tables.yaml")))


def dry(*args) -> str:
    """A dry run of every job of the target, whatever is already built (``--forceall``)."""
    out = snakemake("-n", "--forceall", *args)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout + out.stderr


def counts(text: str) -> dict:
    table = text[text.index("Job stats:"):]
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.MULTILINE)}


@pytest.fixture(scope="module")
def paper_dry():
    return dry("--profile", "slurm", "all_tables")


def test_paper_grid_through_slurm_profile(paper_dry):
    c = counts(paper_dry)
    assert c["train_cell"] >= 250
    assert c["evaluate_cell"] == c["train_cell"] + c["untrained_cell"]
    assert c["render_table"] == N_TABLES and c["render_report"] == 1
    assert c["aggregate"] == 1
    assert "config/paper.yaml" in paper_dry


def test_paper_dry_run_fetches_each_hub_repo_once_upstream_of_training(paper_dry):
    """One hub_fetch job per backbone (11) and dataset (4), at the revision the grid
    names (branches: no lock file here, so the plan says a real run is refused)."""
    assert counts(paper_dry)["hub_fetch"] == 15
    assert "dfil hub fetch --kind model --repo Qwen/Qwen2.5-7B --revision main" in paper_dry
    assert "--repo mteb/sts22-crosslingual-sts --revision refs/convert/parquet" in paper_dry
    assert "a real run is refused until `dfil grid lock --config" in paper_dry
    train = next(b for b in paper_dry.split("\nrule train_cell:")[1:]
                 if "frog/qwen2.5-7b/" in b.split("\n", 2)[1])
    inputs = train.split("\n    output:")[0]
    assert "results/paper/hub/model/qwen2.5-7b.json" in inputs
    assert "results/paper/hub/dataset/frog.json" in inputs


def test_a_real_run_of_an_unlocked_grid_is_refused_naming_the_lock_command():
    out = snakemake("--configfile", "config/paper.yaml", "--cores", "1", "all_tables")
    assert out.returncode != 0
    err = out.stdout + out.stderr
    assert "is a branch or tag, not a commit" in err and "dfil grid lock --config" in err
    assert "Building DAG" not in err  # refused before any job is planned


def test_all_tables_includes_the_paper_audit(paper_dry):
    assert counts(paper_dry)["render_audit"] == 1
    assert "paper_tables/paper/audit.md" in paper_dry
    assert "paper_tables/paper/audit.html" in paper_dry


SMOKE_OUT = "paper_tables/smoke"
REPORT = [f"{SMOKE_OUT}/{f}" for f in (
    "index.html", "tables.html", "runs", "numbers.csv", "claims.csv", "diff.md", "diff.html",
    "tables.tex",
    "figures/membership_functions.png", "figures/center_drift.png",
    "figures/fewshot_curves.png", "figures/compositional_depth.png", "audit.md",
    "audit.html")]


def _smoke_runs() -> list[str]:
    from dfil.config.grid import load_grid_files

    cells = load_grid_files([ROOT / "config/smoke.yaml"]).cells
    return [f"results/smoke/runs/{key}/metrics.json" for key in cells]


#: What each named target promises (the Snakefile's header and the README say the same),
#: published where it is read, never only staged.
PROMISES = {
    "paper_audit": lambda: [f"{SMOKE_OUT}/audit.md", f"{SMOKE_OUT}/audit.html"],
    "report": lambda: REPORT,
    "all_tables": lambda: [*REPORT, f"{SMOKE_OUT}/T05-scaling.tex",
                           f"{SMOKE_OUT}/T29-attnpool.tex", *_smoke_runs()],
    "all_runs": lambda: [*_smoke_runs(), "results/smoke/aggregate/metrics.parquet"],
    "acceptance": lambda: ["results/smoke/acceptance/cell/tiny-llama.json",
                           "results/smoke/acceptance/qlora/tiny-llama.json"],
}


@pytest.mark.parametrize("target", sorted(PROMISES))
def test_each_named_target_publishes_what_its_name_promises(target):
    import shutil

    text = dry(target, "--cores", "1", "--configfile", "config/smoke.yaml")
    block = text.split(f"\nrule {target}:\n", 1)[1]
    inputs = set(block.split("\n", 1)[0].removeprefix("    input: ").split(", "))
    assert set(PROMISES[target]()) <= inputs, sorted(set(PROMISES[target]()) - inputs)
    # a staged file only beside its published one (all_tables: so one moved aside is remade)
    staged = {path.split("/staging/", 1)[1] for path in inputs if "/staging/" in path}
    assert staged <= inputs and (target == "all_tables") == bool(staged)
    if target in ("report", "all_tables"):  # the PDF where TeX is, and only there
        assert (f"{SMOKE_OUT}/tables.pdf" in inputs) == (shutil.which("pdflatex") is not None)


def test_gpu_only_on_model_jobs(paper_dry):
    blocks = paper_dry.split("\nrule ")
    for block in blocks[1:]:
        rule = block.split(":", 1)[0]
        res = re.search(r"resources: (.*)", block)
        if not res:
            continue
        gpu = re.search(r"\bgpu=(\d+)", res.group(1))
        if rule in ("train_pack", "train_cell", "evaluate_cell"):
            assert gpu and int(gpu.group(1)) >= 1, block[:300]
        else:
            assert not gpu or gpu.group(1) == "0", block[:300]


def test_zero_shot_cells_queue_no_training_job(paper_dry):
    """The paper's two zero_shot cells "train" with a local rule (a summary saying they
    train nothing), never a GPU job; their evaluation is a model job as any other."""
    assert counts(paper_dry)["untrained_cell"] == 2
    for block in paper_dry.split("\nrule untrained_cell:")[1:]:
        assert "zero_shot" in block.split("\n", 3)[2]  # its output line
        assert "gpu=0" in block.split("Shell command")[0], block[:600]


def test_embedded_default_dry_run():
    c = counts(dry("--cores", "2", "all_tables"))
    assert c["train_cell"] > 40 and c["fetch_backbone"] == 1 and c["synth_frog"] == 1
    # Its 75 trained cells are 25 configurations of 3 seeds, each trained in one pack.
    assert (c["train_cell"], c["train_pack"], c["untrained_cell"]) == (75, 25, 1)
    assert c["render_report"] == 1 and c["render_table"] == N_TABLES and c["render_audit"] == 1
    # Frozen features once per item set: FRoG's train, val, test and probes, the ordinal
    # stand-in's train, val and test (no QuRe source on the embedded grid).
    assert c["frozen_features"] == 7


def test_one_frozen_cell_schedules_its_feature_jobs():
    key = "frog/smollm2-135m/dfil/lam0.5/nfull/qure/seed42"
    text = dry("--cores", "2", f"results/embedded/runs/{key}/metrics.json")
    assert counts(text)["frozen_features"] == 4
    stamps = set(re.findall(r"results/embedded/features/smollm2-135m-[0-9a-f]{12}/(\w+)\.json",
                            text))
    assert stamps == {"train", "val", "test", "probes"}


def test_one_table_schedules_only_its_cells():
    """Its 5 cells' chains; two of them train in packs (the paper grid's ``pack``), whose
    other seeds' configs are made and trained with them, as a pack trains its seeds."""
    c = counts(dry("--profile", "slurm", "paper_tables/paper/T16-lambda-sweep.tex"))
    assert c == {"cell_config": 11, "probes": 1, "train_pack": 2, "train_cell": 5,
                 "evaluate_cell": 5, "grid_config": 1, "render_table": 1, "publish": 1,
                 "hub_fetch": 3, "total": 30}


def test_one_cell_schedules_only_its_chain():
    key = "frog/qwen2.5-7b/coral/lamna/nfull/na/seed42"
    c = counts(dry("--profile", "slurm", f"results/paper/runs/{key}/metrics.json"))
    # its backbone, FRoG and QuRe (the QuRe-based evaluation) fetched once each; its pack
    # (the paper grid's ``pack``) trains its configuration's three seeds, so their three
    # configs are made
    assert c == {"cell_config": 3, "probes": 1, "train_pack": 1, "train_cell": 1,
                 "evaluate_cell": 1, "hub_fetch": 3, "total": 10}


def test_cell_outside_the_grid_cannot_be_built():
    out = snakemake("-n", "--profile", "slurm",
                    "results/paper/runs/frog/qwen2.5-7b/coral/lamna/nfull/na/seed7/metrics.json")
    assert out.returncode != 0
    assert "MissingRuleException" in out.stdout + out.stderr or "No rule" in (
        out.stdout + out.stderr)


def test_config_edits_rerun_exactly_the_cells_they_change(tmp_path):
    """Built cell configs, then edits: a group's ``cell:`` override reruns that group's
    cells only, a default reruns every cell, an unrelated key none."""
    import shutil

    import yaml

    work = tmp_path / "wf"
    work.mkdir()
    shutil.copy(ROOT / "Snakefile", work)
    for d in ("workflow", "config"):
        shutil.copytree(ROOT / d, work / d)
    keys = {"uniform_init": "frog/tiny-llama/ft_compose/lam0/nfull/uniform/seed42",
            "fewshot": "frog/tiny-llama/finetune+fewshot/lamna/n16/na/seed42",
            "crosstask": "ordinal_standin/tiny-llama/dfil/lam0.5/nfull/uniform/seed42"}
    targets = [f"results/smoke/runs/{k}/cell.yaml" for k in keys.values()]

    def build(*args) -> str:
        # targets first: --configfile takes a list and would swallow them
        out = snakemake(*targets, *args, "--cores", "2", "--configfile", "config/smoke.yaml",
                        cwd=work)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
        return out.stdout + out.stderr

    def rerun(edit) -> int:
        path = work / "config" / "smoke.yaml"
        original = path.read_text()
        cfg = yaml.safe_load(original)
        edit(cfg)
        path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        text = build("-n")
        path.write_text(original)
        return 0 if "Nothing to be done" in text else counts(text).get("cell_config", 0)

    build()
    assert rerun(lambda c: None) == 0
    assert rerun(lambda c: c["groups"]["fewshot"].update(
        cell={"train": {"lr_heads": 0.005}})) == 1
    assert rerun(lambda c: c["defaults"]["train"].update(epochs=2)) == 3
    assert rerun(lambda c: c.update(description="edited")) == 0


@pytest.mark.parametrize("edit,message", [
    (lambda c: c["groups"]["all_methods"].update(lambdas=[-0.5]),
     "config groups.all_methods.lambdas[0]: must be >= 0, got -0.5"),
    (lambda c: c["resources"].pop("cpu"), "config resources: no class 'cpu'"),
    (lambda c: c.update(groups={}), "config groups: none declared, so the grid has no cells"),
])
def test_a_bad_grid_value_stops_the_dag_build_naming_file_and_key(tmp_path, edit, message):
    import yaml

    cfg = yaml.safe_load((ROOT / "config" / "smoke.yaml").read_text())
    edit(cfg)
    grid = tmp_path / "bad.yaml"
    grid.write_text(yaml.safe_dump(cfg, sort_keys=False))
    out = snakemake("-n", "all_tables", "--configfile", str(grid))
    assert out.returncode != 0
    assert f"{grid}: {message}" in out.stdout + out.stderr


def test_a_typo_in_the_tables_stops_the_dag_build_naming_file_table_and_key(tmp_path):
    import shutil

    import yaml

    shutil.copy(ROOT / "Snakefile", tmp_path)
    for d in ("workflow", "config"):
        shutil.copytree(ROOT / d, tmp_path / d)
    path = tmp_path / "config" / "tables.yaml"
    specs = yaml.safe_load(path.read_text())
    specs["scaling"]["rows"][0]["backbone"] = "qwen2.5-7bb"
    path.write_text(yaml.safe_dump(specs, sort_keys=False))
    out = snakemake("-n", "all_tables", "--configfile", "config/smoke.yaml", cwd=tmp_path)
    assert out.returncode == 2  # as dfil's own input errors
    assert ("dfil: error: config/tables.yaml: scaling.rows[0].backbone: 'qwen2.5-7bb' is not "
            "a backbone of any grid (did you mean 'qwen2.5-7b'?") in out.stdout + out.stderr


def test_a_refused_publish_keeps_the_published_file(paper_dry):
    """Publishing's outputs are flagged update(): Snakemake removes none before the job
    (dfil publish compares the staged file with it) and restores it if the job fails."""
    published = re.findall(r"^\s+output: (paper_tables/paper/\S+)(.*)$", paper_dry, re.M)
    assert len(published) >= N_TABLES + 2
    assert all("(update)" in flags for _, flags in published), published[:3]
