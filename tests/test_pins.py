"""Revisions and the grid's lock file (dfil.config.pins, dfil.config.grid): a branch becomes the
commit its lock entry names, a grid without one is refused naming `dfil grid lock`, and
the commit is part of the cell's config hash (an unpinned backbone's hash is unchanged)."""

from __future__ import annotations

import copy

import pytest
import yaml

from dfil.config.cell import CellConfig, config_hash
from dfil.config.grid import Grid, grid_of
from dfil.config.pins import Pin, lock_pins, named_pins, read_lock, write_lock
from dfil.util.errors import ConfigError
from test_grid import smoke

COMMIT_A = "a" * 40
COMMIT_B = "b" * 40
KEY = "frog/tiny-llama/dfil/lam0.5/nfull/qure/seed42"


def hub_grid(revision: str, lock: str = "") -> dict:
    """The smoke grid with its backbone a hub repo at ``revision`` (arch dropped)."""
    config = copy.deepcopy(smoke())
    backbone = config["backbones"]["tiny-llama"]
    for key in ("arch", "tokenizer"):
        backbone.pop(key)
    backbone.update(model_id="org/tiny", revision=revision)
    config["lock"] = lock
    return config


def test_lock_file_round_trip(tmp_path):
    path = tmp_path / "smoke.lock.yaml"
    commits = {("model", "org/tiny", "main"): COMMIT_A,
               ("dataset", "org/data", "refs/convert/parquet"): COMMIT_B}
    write_lock(path, commits, "smoke", "2026-11-25 04:00 UTC")
    assert read_lock(path) == commits
    text = path.read_text()
    assert text.startswith("# Lock file of smoke")
    assert yaml.safe_load(text) == {"models": {"org/tiny": {"main": COMMIT_A}},
                                    "datasets": {"org/data": {"refs/convert/parquet": COMMIT_B}}}
    assert read_lock(tmp_path / "absent.yaml") == {}


def test_a_malformed_lock_entry_is_named(tmp_path):
    path = tmp_path / "bad.lock.yaml"
    path.write_text("models:\n  org/tiny: {main: abc}\n")
    with pytest.raises(ConfigError, match=r"bad.lock.yaml: models.org/tiny.main: expected a "
                                          r"commit of 40 hex digits, got 'abc'"):
        read_lock(path)


def test_a_branch_becomes_its_locked_commit(tmp_path):
    lock = tmp_path / "smoke.lock.yaml"
    write_lock(lock, {("model", "org/tiny", "main"): COMMIT_A}, "smoke", "now")
    grid = grid_of(hub_grid("main", str(lock)), [])
    backbone = grid.cell(KEY).config["model"]["backbone"]
    assert backbone["revision"] == COMMIT_A
    assert ("model", "tiny-llama") in grid.cell(KEY).fetches
    pin, commit = grid.fetch_target("model", "tiny-llama")
    assert (pin.repo, pin.revision, commit) == ("org/tiny", "main", COMMIT_A)


def test_a_branch_without_a_lock_entry_is_refused_naming_the_command(tmp_path):
    config = hub_grid("main", str(tmp_path / "smoke.lock.yaml"))
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError, match=r"backbones.tiny-llama.revision: 'main' is a branch "
                                          r"or tag.*dfil grid lock --config .*grid.yaml"):
        grid_of(config, [path])
    Grid(config)  # unlocked, the grid still expands (to be listed, costed and locked)


def test_the_commit_is_in_the_config_hash_and_unpinned_hashes_are_unchanged():
    pinned_a = Grid(hub_grid(COMMIT_A)).cell(KEY).config
    pinned_b = Grid(hub_grid(COMMIT_B)).cell(KEY).config
    assert config_hash(CellConfig.model_validate(pinned_a)) != \
        config_hash(CellConfig.model_validate(pinned_b))
    plain = Grid(smoke()).cell(KEY).config
    assert "revision" not in plain["model"]["backbone"]


def test_job_resources_by_stage():
    config = copy.deepcopy(smoke())
    config["resources"]["tiny"]["eval_runtime"] = 10
    grid = Grid(config)
    zero_shot = "frog/tiny-llama/zero_shot/lamna/nfull/na/seedna"
    assert grid.job_resources(zero_shot, "train")["gpu"] == 0  # no GPU for no training
    assert grid.job_resources(zero_shot, "evaluate")["gpu"] == 1
    assert grid.job_resources(KEY, "train")["runtime"] == 30
    assert grid.job_resources(KEY, "evaluate")["runtime"] == 10
    assert "eval_runtime" not in grid.job_resources(KEY, "evaluate")


def test_a_job_with_nothing_to_compute_on_a_gpu_asks_for_the_cpu_class():
    """smoke.yaml: tiny is gpu 1 (h100), 4000 MB, 30 min; cpu is gpu 0, 4000 MB, 30 min,
    1 CPU, no gpu_model. A gated cell's training, a failed training's evaluation or a
    seed's summary after its pack gets the cpu class whatever its size; with no reason,
    its own class."""
    grid = Grid(smoke())
    cpu = {"gpu": 0, "mem_mb": 4000, "runtime": 30, "cpus_per_task": 1}
    assert grid.job_resources(KEY, "train", "gated") == cpu
    assert grid.job_resources(KEY, "evaluate", "OOM") == cpu
    assert grid.job_resources(KEY, "train", "finished in its pack") == cpu
    assert grid.job_resources(KEY, "train", None)["gpu"] == 1
    assert grid.job_resources(KEY, "evaluate")["gpu_model"] == "h100"


def test_a_dry_runs_plan_shows_an_unlocked_branch_as_named(tmp_path):
    """Unlocked (no lock file): a real run is refused, a dry run's fetch target keeps
    the branch, and its note names the command that writes the lock."""
    from dfil.config.pins import unlocked_note

    grid = Grid(hub_grid("main", lock=str(tmp_path / "grid.lock.yaml")), files=["g.yaml"])
    with pytest.raises(ConfigError, match="dfil grid lock --config g.yaml"):
        grid.fetch_target("model", "tiny-llama")
    pin, revision = grid.fetch_target("model", "tiny-llama", locked=False)
    assert (pin.repo, revision) == ("org/tiny", "main")
    note = unlocked_note(grid.unlocked(), grid.spec.lock, grid.files)
    assert "org/tiny@main" in note and "`dfil grid lock --config g.yaml`" in note


COMMIT_C = "c" * 40
PINS = [Pin("model", "tiny-llama", "org/tiny", "main", "backbones.tiny-llama.revision"),
        Pin("dataset", "sts22", "org/sts22", "refs/convert/parquet",
            "datasets.sts22.revision")]


@pytest.fixture
def hub_moved(monkeypatch):
    """The hub, where every branch now names COMMIT_C; the repos asked, in order."""
    import dfil.hub

    asked = []

    def resolve(repo, revision, **_):
        asked.append(repo)
        return COMMIT_C
    monkeypatch.setattr(dfil.hub, "resolve_revision", resolve)
    return asked


def locked(tmp_path):
    path = tmp_path / "grid.lock.yaml"
    write_lock(path, {("model", "org/tiny", "main"): COMMIT_A,
                      ("dataset", "org/sts22", "refs/convert/parquet"): COMMIT_B}, "g", "then")
    return path


@pytest.mark.parametrize("name", ["sts22", "org/sts22"])
def test_update_name_renews_that_entry_alone(tmp_path, hub_moved, name):
    path = locked(tmp_path)
    lines = lock_pins(PINS, path, "g", update=named_pins(PINS, [name], "grid.yaml"))
    assert read_lock(path) == {("model", "org/tiny", "main"): COMMIT_A,
                               ("dataset", "org/sts22", "refs/convert/parquet"): COMMIT_C}
    assert hub_moved == ["org/sts22"]
    assert lines == [f"dataset sts22 (org/sts22): refs/convert/parquet -> {COMMIT_C}",
                     f"model tiny-llama (org/tiny): main -> {COMMIT_A} (kept)"]


def test_update_renews_every_entry_and_no_update_keeps_them(tmp_path, hub_moved):
    path = locked(tmp_path)
    lock_pins(PINS, path, "g")
    assert set(read_lock(path).values()) == {COMMIT_A, COMMIT_B} and hub_moved == []
    lock_pins(PINS, path, "g", update=True)
    assert set(read_lock(path).values()) == {COMMIT_C}


def test_update_of_an_unknown_name_names_the_grid_file_and_close_matches():
    with pytest.raises(ConfigError, match=r"^config/paper.yaml: no hub backbone or dataset "
                                          r"named 'sts-22' to renew \(did you mean 'sts22', "
                                          r"'org/sts22'\? "
                                          r"its entries: sts22, tiny-llama\)$"):
        named_pins(PINS, ["sts-22"], "config/paper.yaml")
    pinned = [Pin("model", "q", "org/q", COMMIT_A, "backbones.q.revision")]
    with pytest.raises(ConfigError, match="backbones.q.revision names commit a{40}, not a "
                                          "branch or tag: there is no lock entry to renew"):
        named_pins(pinned, ["q"], "grid.yaml")


def test_dfil_grid_lock_update_name(tmp_path, hub_moved, capsys):
    from dfil.cli import main

    lock = tmp_path / "grid.lock.yaml"
    write_lock(lock, {("model", "org/tiny", "main"): COMMIT_A}, "g", "then")
    grid = tmp_path / "grid.yaml"
    grid.write_text(yaml.safe_dump(hub_grid("main", str(lock))))
    assert main(["grid", "lock", "--config", str(grid), "--update", "tiny-lama"]) == 2
    err = capsys.readouterr().err
    assert f"{grid}: no hub backbone or dataset named 'tiny-lama'" in err
    assert "did you mean 'tiny-llama'?" in err and read_lock(lock)[
        ("model", "org/tiny", "main")] == COMMIT_A
    assert main(["grid", "lock", "--config", str(grid), "--update", "tiny-llama"]) == 0
    assert read_lock(lock) == {("model", "org/tiny", "main"): COMMIT_C}
    write_lock(lock, {("model", "org/tiny", "main"): COMMIT_A}, "g", "then")
    assert main(["grid", "lock", "--config", str(grid), "--update"]) == 0
    assert read_lock(lock) == {("model", "org/tiny", "main"): COMMIT_C}
