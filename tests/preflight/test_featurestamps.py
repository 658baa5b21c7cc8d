"""Frozen-feature stamps whose cache files are gone are removed before the DAG is built."""

import json

from dfil.preflight.featurestamps import missing_file, stale_stamps


def _stamp(features, group, items, files):
    path = features / group / f"{items}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"item_set": items, "files": [str(f) for f in files]}))
    return path


def test_a_stamp_whose_cache_files_are_gone_is_removed_and_named(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    kept_file = cache / "a.safetensors"
    kept_file.write_bytes(b"x")
    features = tmp_path / "results" / "features"
    kept = _stamp(features, "tiny-1", "train", [kept_file])
    gone = _stamp(features, "tiny-1", "val", [kept_file, cache / "b.safetensors"])
    assert missing_file(kept) is None and missing_file(gone) == str(cache / "b.safetensors")
    notes = stale_stamps(features, apply=False)
    assert notes == [f"dfil: {gone}: its frozen features are not in the cache "
                     f"({cache / 'b.safetensors'}); a run that builds the DAG removes it"]
    assert gone.exists()
    notes = stale_stamps(features, apply=True)
    assert len(notes) == 1 and notes[0].endswith(
        "removed, so a cell that runs again has them computed first")
    assert not gone.exists() and kept.exists()
    assert stale_stamps(features, apply=True) == []


def test_a_stamp_without_full_paths_or_unreadable_is_stale(tmp_path):
    features = tmp_path / "features"
    old = _stamp(features, "g", "test", ["d4e1.safetensors"])
    bad = features / "g" / "probes.json"
    bad.write_text("{")
    assert missing_file(old) == "d4e1.safetensors (a record without the cache's path)"
    assert missing_file(bad) == "its record does not read"
    assert len(stale_stamps(features, apply=True)) == 2 and not old.exists()


def test_no_features_directory_gives_nothing(tmp_path):
    assert stale_stamps(tmp_path / "none", apply=True) == []
