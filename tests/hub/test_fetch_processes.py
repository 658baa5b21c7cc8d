"""Fetches as jobs run them, in separate processes with the offline flags exported: a
download killed half-way is never loaded and is redone, a transfer cut half-way is
resumed, and two jobs fetching one backbone at once download it once."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from hubids import BIG, FROG, TINY

from dfil.hub import HubError, fetch_model, fetched_path, snapshot_dir, stamp_path

# Real processes (training, Snakemake, the hub mirror): `pytest -m "not slow"` skips them.
pytestmark = pytest.mark.slow

FETCH = ("import json, sys; from dfil.hub import fetch_model; "
         "print(json.dumps(fetch_model(sys.argv[1], 'main', sys.argv[2], endpoint=sys.argv[3])))")


class Fetcher:
    """``fetch_model`` in a child process; its stderr lines collected as they come."""

    def __init__(self, repo: str, cache, endpoint: str):
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                   HF_DATASETS_OFFLINE="1", HF_HUB_DISABLE_PROGRESS_BARS="1")
        self.proc = subprocess.Popen([sys.executable, "-c", FETCH, repo, str(cache), endpoint],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=env)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.append(line)

    def finish(self, timeout: float = 120) -> str:
        out, _ = self.proc.communicate(timeout=timeout)
        self.reader.join(5)
        assert self.proc.returncode == 0, "".join(self.lines)[-2000:]
        return out


def wait_for(condition, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def written(blobs: Path, at_least: int) -> bool:
    """Whether a partial download under ``blobs`` holds ``at_least`` bytes; one renamed
    or removed between listing and reading (huggingface_hub names each try's file anew)
    is not it."""
    for partial in blobs.glob("*.incomplete"):
        try:
            if partial.stat().st_size >= at_least:
                return True
        except FileNotFoundError:
            continue
    return False


def weights_sent(proxy, repo: str) -> int:
    with proxy.lock:
        return sum(n for p, n in proxy.sent.items()
                   if p.startswith(f"/{repo}/resolve/") and p.endswith("/model.safetensors"))


def big_weights(hub) -> tuple[str, int]:
    """sha256 and size of the big repo's weights (its LFS pointer in the mirror)."""
    pointer = (hub.mirrors / "models" / BIG / "model.safetensors").read_text()
    return pointer.split("sha256:")[1].split()[0], int(pointer.split("size ")[1])


def weights_ranges(proxy) -> list[str | None]:
    """The Range header of each GET of a weights file, in order (None: the whole file)."""
    with proxy.lock:
        return [r for m, p, r in proxy.requests
                if m == "GET" and p.endswith("/model.safetensors")]


def test_a_download_killed_half_way_is_never_loaded_and_is_redone(hub, tmp_path):
    from huggingface_hub import constants
    from transformers import AutoModel

    chunk = constants.DOWNLOAD_CHUNK_SIZE  # huggingface_hub writes the file in such chunks
    oid, size = big_weights(hub)
    assert size > chunk + 512 * 1024, "the weights must outlast one written chunk"
    hub.proxy.stall["model.safetensors"] = chunk + 512 * 1024
    blobs = tmp_path / "hub" / f"models--{BIG.replace('/', '--')}" / "blobs"

    job = Fetcher(BIG, tmp_path, hub.endpoint)
    wait_for(lambda: written(blobs, chunk), "the first 10 MiB on disk")
    job.proc.kill()  # SIGKILL mid-transfer: nothing of the fetch runs after it
    job.proc.wait()
    hub.proxy.release.set()

    commit = hub.commits[BIG]
    assert not stamp_path(tmp_path, "model", BIG, commit).exists()
    assert not (snapshot_dir(tmp_path, "model", BIG, commit) / "model.safetensors").exists()
    with pytest.raises(HubError, match="no stamp"):
        fetched_path(tmp_path, "model", BIG, commit)
    (partial,) = blobs.glob("*.incomplete")
    assert partial.stat().st_size == chunk  # half-written, under a name nothing loads

    hub.proxy.stall.clear()
    fetch_model(BIG, "main", tmp_path, endpoint=hub.endpoint)
    # huggingface_hub 2.x gives each download its own temporary file, so a new process
    # starts the file again; the fetch removed the killed one's partial file.
    assert weights_ranges(hub.proxy) == [None, None]
    assert not any(blobs.glob("*.incomplete"))
    path = fetched_path(tmp_path, "model", BIG, commit)
    assert hashlib.sha256((path / "model.safetensors").read_bytes()).hexdigest() == oid
    assert AutoModel.from_pretrained(path).config.vocab_size == 49152


def test_a_transfer_cut_half_way_is_resumed_where_it_stopped(hub, tmp_path):
    from huggingface_hub import constants

    chunk = constants.DOWNLOAD_CHUNK_SIZE
    oid, _ = big_weights(hub)
    hub.proxy.cut["model.safetensors"] = chunk + 512 * 1024  # the connection drops, once
    fetch_model(BIG, "main", tmp_path, endpoint=hub.endpoint)
    first, *resumed = weights_ranges(hub.proxy)
    # Resumed where the cut left it, never from the start; on a loaded machine the client's
    # read timeout may resume there more than once.
    assert first is None and resumed and set(resumed) == {f"bytes={chunk}-"}
    path = fetched_path(tmp_path, "model", BIG, hub.commits[BIG])
    assert hashlib.sha256((path / "model.safetensors").read_bytes()).hexdigest() == oid


def test_two_jobs_fetching_one_backbone_download_it_once(hub, tmp_path):
    hub.proxy.stall["model.safetensors"] = 1  # the first job holds the lock mid-download
    first = Fetcher(TINY, tmp_path, hub.endpoint)
    wait_for(lambda: weights_sent(hub.proxy, TINY) > 0, "the first job's download")
    second = Fetcher(TINY, tmp_path, hub.endpoint)
    wait_for(lambda: any("waiting for another fetch" in x for x in second.lines),
             "the second job to wait on the lock")
    hub.proxy.release.set()
    assert json.loads(first.finish()) == json.loads(second.finish())  # the first's stamp
    assert hub.proxy.count("GET", "/model.safetensors") == 1


def dfil_hub(*args: str, endpoint: str, **env: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_ENDPOINT=endpoint, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               HF_DATASETS_OFFLINE="1", HF_HUB_DISABLE_PROGRESS_BARS="1", **env)
    return subprocess.run([sys.executable, "-m", "dfil.cli", "hub", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_fetch_command_goes_through_hf_endpoint_and_says_the_fix(hub, tmp_path):
    out = dfil_hub("fetch", "--kind", "dataset", "--repo", FROG, "--revision", "main",
                   "--cache", str(tmp_path), "--config", "mask_quant", "--label", "frog",
                   "--stamp", str(tmp_path / "frog.json"), endpoint=hub.endpoint)
    assert out.returncode == 0, out.stderr[-2000:]
    stamp = json.loads((tmp_path / "frog.json").read_text())
    assert stamp["commit"] == hub.commits[FROG] == json.loads(out.stdout)["commit"]
    assert stamp["rows"] == {"mask_quant/easy.parquet": 40, "mask_quant/hard.parquet": 40}

    hub.proxy.gated.add(TINY)
    out = dfil_hub("fetch", "--kind", "model", "--repo", TINY, "--revision", "main",
                   "--cache", str(tmp_path), "--label", "llama-3.1-8b", endpoint=hub.endpoint)
    assert out.returncode == 2
    assert out.stderr.startswith("dfil hub: error: backbone llama-3.1-8b (dfil-test/tiny-llama)"
                                 " is gated") and "HF_TOKEN" in out.stderr


def test_a_gated_fetch_in_a_keep_going_run_is_an_outcome_its_cells_record(
        hub, tmp_path, monkeypatch, capsys):
    """With keep-going (DFIL_LAST_ATTEMPT set) the fetch rule's job, refused a gated
    backbone, writes its stamp as the refusal and exits 0; a cell that reads the backbone
    then records itself on its first attempt as not run (gated), naming the licence step,
    and `dfil grid status` gives that reason."""
    from cells import tiny_cell
    from dfil.cli import main
    from dfil.data.synthetic import write_frog_like
    from dfil.results.status import cell_status

    hub.proxy.gated.add(TINY)
    cache, stamp = tmp_path / "cache", tmp_path / "tiny.json"
    args = ("fetch", "--kind", "model", "--repo", TINY, "--revision", hub.commits[TINY],
            "--cache", str(cache), "--label", "tiny-llama", "--stamp", str(stamp))
    out = dfil_hub(*args, endpoint=hub.endpoint)  # without keep-going: an error, no stamp
    assert out.returncode == 2 and not stamp.exists()
    out = dfil_hub(*args, endpoint=hub.endpoint, DFIL_LAST_ATTEMPT="3")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "the run goes on" in out.stderr
    assert json.loads(stamp.read_text())["gated"].startswith(
        "backbone tiny-llama (dfil-test/tiny-llama) is gated")

    write_frog_like(tmp_path / "frog", seed=0, n_easy=24, n_hard=8)
    cell = tiny_cell(tmp_path, tmp_path / "frog", "gated")
    data = yaml.safe_load(cell.read_text())
    data["model"]["backbone"] = {"name": "tiny-llama", "model_id": TINY,
                                 "revision": hub.commits[TINY]}
    cell.write_text(yaml.safe_dump(data))
    monkeypatch.setenv("DFIL_HUB_CACHE", str(cache))
    monkeypatch.setenv("DFIL_LAST_ATTEMPT", "3")
    run = tmp_path / "run"
    assert main(["train", "--cell", str(cell), "--out", str(run), "--attempt", "1",
                 "--log", "t.log"]) == 0
    failed = json.loads((run / "train_summary.json").read_text())["failed"]
    assert (failed["reason"], failed["attempt"]) == ("gated", 1)
    assert failed["message"].startswith("not run: gated (needs HF_TOKEN and the licence): "
                                        "backbone tiny-llama (dfil-test/tiny-llama) is gated")
    assert "accept its licence at" in failed["message"]
    assert failed["message"].endswith("then run the workflow again with `--forcerun hub_fetch`")
    assert main(["evaluate", "--run", str(run), "--attempt", "1"]) == 0
    assert cell_status(run, "t.log", "e.log") == (failed["message"], "t.log")
    # A zero-shot cell trains nothing: its evaluation is what reads the backbone.
    data["model"]["method"] = "zero_shot"
    cell.write_text(yaml.safe_dump(data))
    zero = tmp_path / "zero"
    for command in (["train", "--cell", str(cell), "--out", str(zero)],
                    ["evaluate", "--run", str(zero)]):
        assert main([*command, "--attempt", "1"]) == 0
    assert json.loads((zero / "metrics.json").read_text())["failed"]["reason"] == "gated"
