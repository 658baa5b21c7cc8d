"""dfil.hub against a real endpoint (olah on 127.0.0.1) with the real huggingface_hub and
datasets clients: a fetch at a branch records its commit, downloads only what a backbone
needs, prepares a dataset's splits, and reads back offline."""

from __future__ import annotations

import pandas as pd
import pytest
from hubids import FROG, TINY

from dfil.hub import (
    HubError,
    fetch_dataset,
    fetch_model,
    fetched_path,
    read_stamp,
    resolve_revision,
    stamp_path,
)
from dfil.hub.errors import Target
from dfil.hub.online import is_offline
from dfil.util.errors import GatedRepo


def test_branch_resolves_to_the_repos_commit(hub):
    assert resolve_revision(TINY, "main", endpoint=hub.endpoint) == hub.commits[TINY]


def test_fetch_stamps_the_commit_and_keeps_only_a_backbones_files(hub, tmp_path):
    stamp = fetch_model(TINY, "main", tmp_path, label="tiny", endpoint=hub.endpoint)
    commit = hub.commits[TINY]
    assert (stamp["repo"], stamp["revision"], stamp["commit"]) == (TINY, "main", commit)
    assert stamp_path(tmp_path, "model", TINY, commit).is_file()
    assert set(stamp["files"]) == {"config.json", "generation_config.json",
                                   "model.safetensors", "tokenizer.json",
                                   "tokenizer_config.json"}
    assert hub.proxy.count("GET", "/consolidated.safetensors") == 0
    assert hub.proxy.count("GET", "/pytorch_model.bin") == 0


def test_a_pinned_commit_already_fetched_asks_the_network_nothing(hub, tmp_path):
    commit = hub.commits[TINY]
    fetch_model(TINY, commit, tmp_path, endpoint=hub.endpoint)
    before = len(hub.proxy.requests)
    again = fetch_model(TINY, commit, tmp_path, endpoint=hub.endpoint)
    assert len(hub.proxy.requests) == before
    assert again["commit"] == commit


def test_jobs_load_the_fetched_model_offline(hub, tmp_path):
    from transformers import AutoModel, AutoTokenizer

    assert is_offline(), "the tests run with HF_HUB_OFFLINE=1, as CI and the quickstart do"
    fetch_model(TINY, "main", tmp_path, endpoint=hub.endpoint)
    assert is_offline(), "the fetch lifts the offline flags for itself only"
    path = fetched_path(tmp_path, "model", TINY, hub.commits[TINY])
    before = len(hub.proxy.requests)
    model = AutoModel.from_pretrained(path)
    tokenizer = AutoTokenizer.from_pretrained(path)
    assert model.config.hidden_size == 32 and tokenizer("ab")["input_ids"] == [4, 5]
    assert len(hub.proxy.requests) == before


@pytest.mark.slow
def test_dataset_splits_are_prepared_once_as_the_frog_loader_reads_them(hub, tmp_path,
                                                                         mirror):
    from dfil.data import load_frog

    stamp = fetch_dataset(FROG, "main", tmp_path, label="frog", configs=["mask_quant"],
                          endpoint=hub.endpoint)
    assert stamp["rows"] == {"mask_quant/easy.parquet": 40, "mask_quant/hard.parquet": 40}
    path = fetched_path(tmp_path, "dataset", FROG, hub.commits[FROG])
    # The prepared splits' digests, taken once here, are what runs copy into provenance.
    assert stamp["sha256"] == {rel: _sha256(path / rel) for rel in stamp["rows"]}
    source = mirror.mirrors / "datasets" / FROG / "mask_quant"
    for split in ("easy", "hard"):
        got = load_frog(path, split)
        want = load_frog(source / f"{split}.jsonl", split)
        cols = ["id", "question", "label", "p"]
        pd.testing.assert_frame_equal(got[cols].reset_index(drop=True),
                                      want[cols].reset_index(drop=True))


def test_an_unfetched_or_damaged_repo_is_refused_with_the_fetch_command(hub, tmp_path):
    commit = hub.commits[TINY]
    with pytest.raises(HubError, match=r"backbone tiny \(dfil-test/tiny-llama\).*no stamp"
                                       r".*dfil hub fetch"):
        fetched_path(tmp_path, "model", TINY, commit, label="tiny")
    stamp = fetch_model(TINY, "main", tmp_path, endpoint=hub.endpoint)
    weights = fetched_path(tmp_path, "model", TINY, commit) / "model.safetensors"
    weights.resolve().write_bytes(b"truncated")
    with pytest.raises(HubError, match=f"has 9 bytes, the fetch wrote "
                                       f"{stamp['files']['model.safetensors']}"):
        fetched_path(tmp_path, "model", TINY, commit)


def test_gated_repo_without_a_token_names_the_backbone_and_the_fix(hub, tmp_path,
                                                                    monkeypatch):
    hub.proxy.gated.add(TINY)
    with pytest.raises(HubError) as err:
        fetch_model(TINY, "main", tmp_path, label="llama-3.1-8b", endpoint=hub.endpoint)
    message = str(err.value)
    for part in ("backbone llama-3.1-8b (dfil-test/tiny-llama) is gated", "HF_TOKEN",
                 "hf auth login", f"{hub.endpoint}/{TINY}"):
        assert part in message
    assert not stamp_path(tmp_path, "model", TINY, hub.commits[TINY]).exists()
    # The job that reads it is told it is gated, not that it was never fetched.
    with pytest.raises(GatedRepo, match="is gated .* accept its licence"):
        fetched_path(tmp_path, "model", TINY, hub.commits[TINY])
    # A token without the licence accepted: the hub's 403, the same line.
    monkeypatch.setenv("HF_TOKEN", "hf_no_licence")
    hub.proxy.no_access.add("hf_no_licence")
    with pytest.raises(GatedRepo, match="is gated"):
        fetch_model(TINY, "main", tmp_path, label="llama-3.1-8b", endpoint=hub.endpoint)
    # With a token that has access (the proxy, like the hub, then serves the files) the
    # fetch goes through, and its stamp replaces the refusal.
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    stamp = fetch_model(TINY, "main", tmp_path, label="llama-3.1-8b", endpoint=hub.endpoint)
    assert stamp["commit"] == hub.commits[TINY]
    assert fetched_path(tmp_path, "model", TINY, hub.commits[TINY]).is_dir()


def test_a_gated_repos_metadata_answers_anyone_so_it_can_be_locked(hub):
    """As on huggingface.co: the lock step resolves a gated repo's branch without a
    token; only its files are refused."""
    hub.proxy.gated.add(TINY)
    assert resolve_revision(TINY, "main", endpoint=hub.endpoint) == hub.commits[TINY]


@pytest.mark.parametrize("repo, revision, expected", [
    ("dfil-test/no-such-model", "main",
     r"backbone bb \(dfil-test/no-such-model\): the hub at .* shows no such repo.*HF_TOKEN"),
    # Asked for a commit of a repo it lacks, olah answers a bare 404 (no error code).
    ("dfil-test/no-such-model", "1" * 40,
     r"backbone bb \(dfil-test/no-such-model\): the hub at .* shows no such repo.*HF_TOKEN"),
    (TINY, "no-such-branch", r"backbone bb \(dfil-test/tiny-llama\) has no revision "
                             r"'no-such-branch' \(its branches and tags: main\)"),
    (TINY, "0" * 40, r"has no revision '0{40}'"),
])
def test_missing_repo_or_revision_fails_at_fetch_time(hub, tmp_path, repo, revision,
                                                     expected):
    with pytest.raises(HubError, match=expected):
        fetch_model(repo, revision, tmp_path, label="bb", endpoint=hub.endpoint)
    assert not any(tmp_path.glob("stamps/**/*.json"))


def test_an_unreachable_endpoint_says_where_to_fetch(tmp_path):
    with pytest.raises(HubError, match=r"dataset frog \(GAIR/FRoG\): cannot reach the hub"):
        fetch_dataset("GAIR/FRoG", "main", tmp_path, label="frog",
                      endpoint="http://127.0.0.1:9")
    assert is_offline()


def test_read_stamp_names_the_target(tmp_path):
    with pytest.raises(HubError, match=r"dataset frog \(GAIR/FRoG\) at commit c0ffee"):
        read_stamp(tmp_path, Target("dataset", "GAIR/FRoG", "main", "frog"), "c0ffee")


def test_a_repo_id_that_is_not_org_name_is_refused():
    with pytest.raises(HubError, match="not a hub id of the form org/name"):
        Target("model", "Qwen2.5-7B", "main", "qwen2.5-7b")



def _sha256(path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_stamp_records_each_files_sha256_as_the_hub_does(hub, tmp_path, mirror):
    stamp = fetch_model(TINY, "main", tmp_path, endpoint=hub.endpoint)
    snapshot = fetched_path(tmp_path, "model", TINY, hub.commits[TINY])
    assert set(stamp["sha256"]) == set(stamp["files"])
    for name, digest in stamp["sha256"].items():
        assert digest == _sha256(snapshot / name)
    # The weights' digest is the LFS oid the hub (here: the mirror's git repo) holds.
    pointer = (mirror.mirrors / "models" / TINY / "model.safetensors").read_text()
    assert f"oid sha256:{stamp['sha256']['model.safetensors']}" in pointer


def test_a_cached_file_cut_short_is_downloaded_again_not_stamped(hub, tmp_path, capfd):
    """The repair training's refusal names (a fetch of the commit) heals the cache: the
    cut file is downloaded again, and the stamp keeps the hub's size and digest."""
    from safetensors.torch import load_file

    commit = hub.commits[TINY]
    stamp = fetch_model(TINY, commit, tmp_path, endpoint=hub.endpoint)
    size = stamp["files"]["model.safetensors"]
    weights = fetched_path(tmp_path, "model", TINY, commit) / "model.safetensors"
    whole = weights.read_bytes()
    weights.resolve().write_bytes(whole[:50_000])
    with pytest.raises(HubError, match=f"has 50000 bytes, the fetch wrote {size}.*dfil hub "
                                       f"fetch --kind model --repo {TINY} --revision {commit}"):
        fetched_path(tmp_path, "model", TINY, commit)
    gets = hub.proxy.count("GET", "/model.safetensors")
    healed = fetch_model(TINY, commit, tmp_path, endpoint=hub.endpoint)
    assert hub.proxy.count("GET", "/model.safetensors") == gets + 1
    assert "model.safetensors has 50,000 bytes, the hub has 101,048: downloading it " \
           "again" in capfd.readouterr().err
    assert healed["files"] == stamp["files"] and healed["sha256"] == stamp["sha256"]
    assert weights.read_bytes() == whole
    assert load_file(fetched_path(tmp_path, "model", TINY, commit) / "model.safetensors")


@pytest.mark.parametrize("name", ["model.safetensors", "config.json"])
def test_a_damaged_file_of_the_right_size_fails_its_digest_and_is_redone(hub, tmp_path,
                                                                         name):
    """An LFS file is checked by sha256, a small one by its git blob id."""
    commit = hub.commits[TINY]
    stamp = fetch_model(TINY, commit, tmp_path, endpoint=hub.endpoint)
    file = fetched_path(tmp_path, "model", TINY, commit) / name
    whole = file.read_bytes()
    file.resolve().write_bytes(bytes([whole[0] ^ 1]) + whole[1:])
    stamp_path(tmp_path, "model", TINY, commit).unlink()  # as a fetch killed before it
    again = fetch_model(TINY, commit, tmp_path, endpoint=hub.endpoint)
    assert file.read_bytes() == whole and again["sha256"] == stamp["sha256"]


def test_a_file_the_hub_itself_serves_wrong_is_refused_without_a_stamp(hub, tmp_path,
                                                                       monkeypatch):
    from dfil.hub import verify

    commit = hub.commits[TINY]
    real = verify.digests
    monkeypatch.setattr(verify, "digests", lambda path, git_blob: (
        ("0" * 64, "") if path.name == "model.safetensors" else real(path, git_blob)))
    with pytest.raises(HubError, match=r"backbone tiny \(dfil-test/tiny-llama\) at "
                                       rf"{commit}: .*model.safetensors has sha256 0{{64}}, "
                                       r"the hub's is .* after downloading it again"):
        fetch_model(TINY, commit, tmp_path, label="tiny", endpoint=hub.endpoint)
    assert not stamp_path(tmp_path, "model", TINY, commit).exists()
