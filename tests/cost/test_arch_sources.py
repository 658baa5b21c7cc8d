"""Where `dfil grid cost`, `dfil grid preflight` and `dfil grid plan` find each backbone's
architecture: the grid's `arch:`, the config.json of the fetched snapshot (AutoConfig), or
the offline catalogue only when asked; a backbone with none is one line with its fix, its
cells left out (never counted as 0) and the totals saying how many."""

import copy
import json
from pathlib import Path

import pytest
import yaml

from dfil.cli import main
from dfil.cli.archs import backbone_arch, grid_archs
from dfil.cli.preflight import grid_preflight
from dfil.cluster.checks import Check
from dfil.config.grid import load_grid_files
from dfil.cost.archs import ARCHS
from dfil.hub.store import file_sizes, snapshot_dir, write_stamp

ROOT = Path(__file__).resolve().parents[2]
COMMIT = "c0ffee" * 6 + "c0ff"
PAPER = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())


def fetched(cache: Path, repo: str, config: dict) -> Path:
    """A finished fetch of ``repo`` at COMMIT holding only ``config`` as config.json."""
    snap = snapshot_dir(cache, "model", repo, COMMIT)
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps(config))
    write_stamp(cache, {"kind": "model", "repo": repo, "revision": COMMIT, "commit": COMMIT,
                        "path": str(snap), "files": file_sizes(snap)})
    return snap


@pytest.fixture
def grid_file(tmp_path, monkeypatch):
    """The paper grid with qwen2.5-1.5b fetched at COMMIT, phi-3.5-mini declaring its arch,
    and every other backbone neither."""
    monkeypatch.setenv("DFIL_HUB_CACHE", str(tmp_path / "cache"))
    config = copy.deepcopy(PAPER)
    config["lock"] = ""
    config["backbones"]["qwen2.5-1.5b"]["revision"] = COMMIT
    config["backbones"]["phi-3.5-mini"]["arch"] = dict(ARCHS["phi-3.5-mini"])
    fetched(tmp_path / "cache", "Qwen/Qwen2.5-1.5B", ARCHS["qwen2.5-1.5b"])
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def cells_of(grid, names) -> int:
    return sum(c.config["model"]["backbone"]["name"] in names for c in grid.cells.values())


def test_each_source_in_order(grid_file, tmp_path):
    grid = load_grid_files([grid_file])
    archs = grid_archs(grid)
    small = archs["qwen2.5-1.5b"]
    assert small.source.startswith("config.json of the fetched ") and small.source.endswith(
        f"models--Qwen--Qwen2.5-1.5B/snapshots/{COMMIT}")
    for field in ("hidden_size", "num_hidden_layers", "intermediate_size", "vocab_size"):
        assert small.config[field] == ARCHS["qwen2.5-1.5b"][field]
    assert archs["phi-3.5-mini"].source == "the grid's backbones.phi-3.5-mini.arch"
    assert archs["qwen2.5-7b"].config is None
    assert archs["qwen2.5-7b"].source == (
        "no architecture for backbone qwen2.5-7b (Qwen/Qwen2.5-7B), its cells left out: fetch "
        "its config.json (snakemake results/paper/hub/model/qwen2.5-7b.json) or give "
        "backbones.qwen2.5-7b.arch its fields (or --catalogue: the offline shapes)")
    offline = grid_archs(grid, catalogue=True)["qwen2.5-7b"]
    assert offline.config == ARCHS["qwen2.5-7b"]
    assert offline.source == ("the offline catalogue (dfil.cost.archs), not a fetched "
                              "config.json")


def test_an_unknown_backbone_never_falls_back_and_a_broken_config_is_named(tmp_path,
                                                                            monkeypatch):
    monkeypatch.setenv("DFIL_HUB_CACHE", str(tmp_path))
    new = {"name": "new-7b", "model_id": "acme/new-7b", "revision": COMMIT}
    found = backbone_arch(new, "results/g", catalogue=True)
    assert found.config is None and "--catalogue" not in found.source
    snap = fetched(tmp_path, "acme/new-7b", {"model_type": "llama"})
    (snap / "config.json").write_text("{not json")
    write_stamp(tmp_path, {"kind": "model", "repo": "acme/new-7b", "revision": COMMIT,
                           "commit": COMMIT, "path": str(snap), "files": file_sizes(snap)})
    broken = backbone_arch(new, "results/g")
    assert broken.config is None and "its fetched config.json does not load" in broken.source


def test_cost_leaves_out_the_cells_without_an_architecture_and_says_so(grid_file, capsys):
    grid = load_grid_files([grid_file])
    known = cells_of(grid, {"qwen2.5-1.5b", "phi-3.5-mini"})
    excluded = len(grid.cells) - known
    assert 0 < known < len(grid.cells)
    assert main(["grid", "cost", "--config", str(grid_file)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    missing = [line for line in lines if line.startswith("no architecture for backbone")]
    assert len(missing) == 9  # one line per backbone, with its fix
    assert "architecture of phi-3.5-mini: the grid's backbones.phi-3.5-mini.arch" in lines
    total = next(line for line in lines if line.startswith("total"))
    assert total.startswith(f"total (excluding {excluded} cells)")
    assert int(total.split()[4]) == known  # cells: only those projected
    float(total.split()[-1])  # the GPU-hours stay its last field
    assert f"excluding {excluded} cells" in next(
        line for line in lines if line.startswith("the table above:"))


def test_preflight_names_each_missing_architecture_as_a_skipped_check(grid_file, capsys,
                                                                      monkeypatch):
    import dfil.cluster.slurm as cluster
    import dfil.preflight.hubcheck as hubcheck

    # The hub and SLURM checks have their own tests: stubbed, as a reachable site's.
    monkeypatch.setattr(hubcheck, "hub_checks", lambda *a: ([Check("hub", "ok", "stub")], 0))
    monkeypatch.setattr(hubcheck, "disk_check", lambda *a: Check("disk", "ok", "stub"))
    monkeypatch.setattr(cluster, "slurm_checks", lambda *a: [Check("slurm", "ok", "stub")])
    grid = load_grid_files([grid_file])
    assert grid_preflight(grid, []) == 0
    out = capsys.readouterr().out
    assert "Traceback" not in out
    assert out.count("skipped  cost   no architecture for backbone") == 9
    assert out.count("no architecture for backbone qwen2.5-7b ") == 1  # not again below
    assert "total (excluding" in out


def test_plan_needs_every_architecture(grid_file, capsys):
    assert main(["grid", "plan", "--config", str(grid_file), "--gpu-hours", "10"]) == 2
    err = capsys.readouterr().err
    assert "dfil grid plan: every backbone needs an architecture to price its runs: " in err
    assert "no architecture for backbone qwen2.5-7b (Qwen/Qwen2.5-7B)" in err
