"""The sha256 stamps written where files are made (dfil.contracts.digests) and copied into a run's
provenance (dfil.engine.inputs.stamped_inputs)."""

from __future__ import annotations

import json

import pytest

from dfil.config.cell import CellConfig
from dfil.contracts import digests
from dfil.contracts.metrics import validate_metrics
from dfil.data.synthetic import write_frog_like
from dfil.engine import inputs as inputs_mod
from dfil.engine.inputs import HASHED_HERE, stamped_inputs

#: sha256 of b"abc" (FIPS 180-2, appendix B.1) and of b"" (the empty message).
ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_write_dir_stamp_hashes_each_file_once_and_keeps_known_digests(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"abc")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.bin").write_bytes(b"")
    known = {"sub/b.bin": "0" * 64}  # given by the maker: copied, not recomputed
    stamp = digests.write_dir_stamp(tmp_path, "test", known)
    assert stamp["sha256"] == {"a.txt": ABC, "sub/b.bin": "0" * 64}
    assert stamp["sizes"] == {"a.txt": 3, "sub/b.bin": 0}
    assert digests.read_dir_stamp(tmp_path) == stamp
    # A second stamp does not cover the first.
    assert digests.write_dir_stamp(tmp_path, "again")["sha256"]["sub/b.bin"] == EMPTY


def test_read_dir_stamp_is_none_without_a_stamp_or_for_a_foreign_file(tmp_path):
    assert digests.read_dir_stamp(tmp_path) is None
    (tmp_path / digests.NAME).write_text('{"sha256": "not a dict"}')
    assert digests.read_dir_stamp(tmp_path) is None
    (tmp_path / digests.NAME).write_text("{broken")
    assert digests.read_dir_stamp(tmp_path) is None


def test_the_synthetic_frog_is_stamped_with_the_digests_it_returns(tmp_path):
    got = write_frog_like(tmp_path, seed=0, n_easy=16, n_hard=8)
    stamp = digests.read_dir_stamp(tmp_path)
    assert stamp["sha256"] == {"easy.jsonl": got["easy"], "hard.jsonl": got["hard"]}
    assert got["easy"] == digests.sha256_of(tmp_path / "easy.jsonl")
    assert "--seed 0 --n-easy 16 --n-hard 8" in stamp["made_by"]


def _cell(**data) -> CellConfig:
    return CellConfig.model_validate({
        "model": {"backbone": {"name": "b", "model_id": "org/tiny", "revision": "a" * 40}},
        "data": data})


def test_stamped_inputs_copy_every_digest_from_the_stamps(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("DFIL_HUB_CACHE", str(cache))
    model_stamp = cache / "stamps" / "models" / "org" / "tiny" / f"{'a' * 40}.json"
    model_stamp.parent.mkdir(parents=True)
    model_stamp.write_text(json.dumps({"sha256": {"model.safetensors": "1" * 64,
                                                  "config.json": "2" * 64}}))
    data = tmp_path / "frog"
    write_frog_like(data, seed=0, n_easy=16, n_hard=8)
    probes = tmp_path / "probes"
    probes.mkdir()
    (probes / "manifest.json").write_text(json.dumps({"qure": {"count": 3,
                                                               "sha256": "3" * 64}}))
    qure = tmp_path / "qure.csv"
    qure.write_bytes(b"abc")

    def no_hashing(path):  # everything but the unstamped QuRe file comes from a stamp
        assert str(path) == str(qure), f"hashed {path}"
        return ABC

    monkeypatch.setattr(inputs_mod, "sha256_of", no_hashing)
    got = stamped_inputs(_cell(source=str(data), probes_dir=str(probes),
                               qure_source=str(qure)))
    assert got["model"] == {"repo": "org/tiny", "commit": "a" * 40, "stamp": str(model_stamp),
                            "sha256": {"model.safetensors": "1" * 64, "config.json": "2" * 64}}
    frog = digests.read_dir_stamp(data)["sha256"]
    assert got["data"]["source"] == {"path": str(data), "sha256": frog,
                                     "stamp": str(data / digests.NAME)}
    assert got["data"]["qure_source"] == {"path": str(qure), "sha256": {"qure.csv": ABC},
                                          "stamp": HASHED_HERE}
    assert got["data"]["probes"]["sha256"] == {"qure.jsonl": "3" * 64}
    validate_metrics(_metrics(got), "test")  # the schema takes the digests


def test_a_backbone_without_a_stamp_is_noted_never_hashed(tmp_path, monkeypatch):
    monkeypatch.setenv("DFIL_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(inputs_mod, "sha256_of", lambda p: pytest.fail(f"hashed {p}"))
    got = stamped_inputs(_cell(source="", task="ordinal_standin"))
    assert "sha256" not in got["model"] and "no readable fetch stamp" in got["model"]["note"]
    assert got["data"] == {}  # a task made in place reads no data file
    weights = tmp_path / "local-model"
    weights.mkdir()
    (weights / "model.safetensors").write_bytes(b"abc")
    cell = CellConfig.model_validate({"model": {"backbone": {"name": "b",
                                                             "model_id": str(weights)}}})
    note = stamped_inputs(cell)["model"]["note"]
    assert "never by a job" in note


def _metrics(inputs: dict) -> dict:
    acc = {"acc": 0.5, "per_class_acc": [0.5], "n": 2}
    return {"cell": "c", "method": "dfil", "alpha": None, "test": {"main": acc},
            "val": {"main": acc}, "data": {"counts": {}, "total": {}},
            "train": {"config_hash": "0" * 16, "trained": True}, "config_hash": "0" * 16,
            "seed": 0, "provenance": {"package_version": "0", "git_commit": "x",
                                      "device": "cpu", "wall_seconds": 1.0,
                                      "inputs": inputs}}


def test_old_metrics_without_digests_still_read():
    validate_metrics(_metrics({"model": {"id": "random"}, "data": {"source": {"path": "d"}}}),
                     "old")


def test_a_conversion_made_before_stamps_is_stamped_once_by_fetch_backbone(tmp_path,
                                                                          monkeypatch):
    from dfil.model import embedded

    monkeypatch.setenv("DFIL_CACHE", str(tmp_path))
    target = embedded.embedded_path("smollm2-135m")
    target.mkdir(parents=True)
    (target / "config.json").write_bytes(b"abc")
    (target / "model.safetensors").write_bytes(b"")
    monkeypatch.setattr(embedded, "_convert_gguf", lambda *a: pytest.fail("converted"))
    assert embedded.fetch_backbone("smollm2-135m") == target
    assert digests.read_dir_stamp(target)["sha256"] == {"config.json": ABC,
                                                        "model.safetensors": EMPTY}
    monkeypatch.setattr(digests, "sha256_of", lambda p: pytest.fail(f"hashed {p} again"))
    embedded.fetch_backbone("smollm2-135m")  # stamped: nothing hashed again
