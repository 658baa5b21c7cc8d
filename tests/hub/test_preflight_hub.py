"""The preflight's hub checks against the test hub (olah behind the gating proxy,
tests/hub/conftest.py) with the real huggingface_hub client: reachable at the locked
commit with the bytes left to fetch, a wrong revision, a missing repo, a gated repo
without a token, a branch without a lock entry, and a repo already fetched while the
endpoint is down."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hubids import FROG, TINY

from dfil.config.pins import Pin
from dfil.hub import fetch_dataset, fetch_model, stamp_path
from dfil.preflight.hubcheck import hub_checks, pin_check, size

DOWN = "http://127.0.0.1:9"


def model_pin(revision="main", repo=TINY, label="tiny") -> Pin:
    return Pin("model", label, repo, revision, f"backbones.{label}.revision")


def fetched_bytes(hub, tmp_path, kind: str = "model", repo: str = TINY) -> int:
    """What a real fetch of ``repo`` downloads (its source files, as its stamp lists
    them), fetched into a cache of its own."""
    cache = tmp_path / f"reference-{kind}"
    if kind == "model":
        return sum(fetch_model(repo, hub.commits[repo], cache, endpoint=hub.endpoint)
                   ["files"].values())
    stamp = fetch_dataset(repo, hub.commits[repo], cache, endpoint=hub.endpoint)
    return sum(stamp["source_files"].values())


def test_reachable_at_the_locked_commit_with_the_bytes_to_fetch(hub, tmp_path):
    commit = hub.commits[TINY]
    cache = tmp_path / "cache"
    check, need = pin_check(model_pin(commit), commit, cache, hub.endpoint)
    assert not cache.exists(), "a preflight writes nothing into the cache"
    expected = fetched_bytes(hub, tmp_path)
    assert expected > 100_000  # the weights, not their LFS pointer
    assert (check.status, need) == ("ok", expected)
    assert check.text == (f"backbone tiny ({TINY}) at {commit[:12]}: reachable, 5 files, "
                          f"{size(expected)} to fetch")


def test_a_datasets_prepared_splits_count_too(hub, tmp_path):
    commit = hub.commits[FROG]
    pin = Pin("dataset", "frog", FROG, commit, "datasets.frog.revision")
    check, need = pin_check(pin, commit, tmp_path / "cache", hub.endpoint)
    assert check.status == "ok"
    assert need == 2 * fetched_bytes(hub, tmp_path, "dataset", FROG)  # then as parquet


@pytest.mark.parametrize("repo, commit, expected", [
    (TINY, "0" * 40, f"backbone tiny ({TINY}) has no revision '{'0' * 40}' (its branches "
                     "and tags: main)"),
    ("dfil-test/no-such-model", None, "backbone tiny (dfil-test/no-such-model): the hub at"),
])
def test_a_wrong_revision_or_missing_repo_is_a_problem(hub, tmp_path, repo, commit,
                                                       expected):
    pin = model_pin(commit or "main", repo)
    check, need = pin_check(pin, commit, tmp_path, hub.endpoint)
    assert (check.status, check.area, need) == ("problem", "hub", 0)
    assert expected in check.text


def test_a_gated_repo_without_a_token_names_the_backbone_and_the_fix(hub, tmp_path,
                                                                     monkeypatch):
    hub.proxy.gated.add(TINY)
    commit = hub.commits[TINY]
    pin = model_pin(commit, label="llama-3.1-8b")
    check, _ = pin_check(pin, commit, tmp_path, hub.endpoint)
    assert check.status == "problem"
    for part in (f"backbone llama-3.1-8b ({TINY}) is gated", "HF_TOKEN", "hf auth login",
                 f"{hub.endpoint}/{TINY}"):
        assert part in check.text
    monkeypatch.setenv("HF_TOKEN", "hf_test")  # the proxy, like the hub, then answers
    assert pin_check(pin, commit, tmp_path, hub.endpoint)[0].status == "ok"


def test_an_unlocked_branch_names_the_lock_command_and_is_still_asked(hub, tmp_path):
    checks, need = hub_checks([(model_pin("main"), None)], tmp_path, "grid.lock.yaml",
                              "grid.yaml", hub.endpoint)
    assert [(c.area, c.status) for c in checks] == [("lock", "problem"), ("hub", "ok")]
    assert "backbones.tiny.revision: 'main' is a branch or tag" in checks[0].text
    assert "Run `dfil grid lock --config grid.yaml`" in checks[0].text
    assert f"at 'main' (now {hub.commits[TINY][:12]}): reachable" in checks[1].text
    assert need == fetched_bytes(hub, tmp_path)


def test_already_fetched_needs_no_endpoint(hub, tmp_path):
    commit = hub.commits[TINY]
    fetch_model(TINY, commit, tmp_path, endpoint=hub.endpoint)
    before = len(hub.proxy.requests)
    check, need = pin_check(model_pin(commit), commit, tmp_path, DOWN)
    assert (check.status, need) == ("ok", 0)
    assert f"at {commit[:12]}: already fetched into {tmp_path}" in check.text
    assert len(hub.proxy.requests) == before
    # A fetch that lost its stamp is asked of the hub again; its files are in the cache.
    stamp_path(tmp_path, "model", TINY, commit).unlink()
    assert pin_check(model_pin(commit), commit, tmp_path, DOWN)[0].status == "problem"
    check, need = pin_check(model_pin(commit), commit, tmp_path, hub.endpoint)
    assert (check.status, need) == ("ok", 0)
    assert "0 B to fetch" in check.text


def preflight_cli(grid, hub, cache):
    """``dfil grid preflight --config grid`` as a process: HF_ENDPOINT the test hub (read
    when huggingface_hub is imported, as on a login node), and no SLURM on its PATH."""
    env = {**os.environ, "HF_ENDPOINT": hub.endpoint, "DFIL_HUB_CACHE": str(cache),
           "PATH": str(Path(sys.executable).parent)}
    return subprocess.run([sys.executable, "-m", "dfil.cli", "grid", "preflight", "--config",
                           str(grid)], env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_dfil_grid_preflight_end_to_end(hub, tmp_path):
    """The command on a grid reading the test hub's backbone at its commit: every check
    ok or skipped, exit 0; the repo gated, exit 3 naming it."""
    from test_pins import hub_grid

    config = hub_grid(hub.commits[TINY])
    config["backbones"]["tiny-llama"]["model_id"] = TINY
    grid = tmp_path / "grid.yaml"
    grid.write_text(yaml.safe_dump(config))
    done = preflight_cli(grid, hub, tmp_path / "cache")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.rstrip().splitlines()
    assert lines[0] == (f"ok       hub    backbone tiny-llama ({TINY}) at "
                        f"{hub.commits[TINY][:12]}: reachable, 5 files, "
                        f"{size(fetched_bytes(hub, tmp_path))} to fetch")
    assert lines[1].startswith("ok       disk   ")
    assert lines[2] == "skipped  slurm  not a SLURM host (no sinfo on PATH): skipped"
    assert lines[-1].startswith("preflight: all 2 checks ok")
    hub.proxy.gated.add(TINY)
    done = preflight_cli(grid, hub, tmp_path / "cache")
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"PROBLEM  hub    backbone tiny-llama ({TINY}) is gated" in done.stdout
    assert "preflight: 1 problem(s)" in done.stdout
