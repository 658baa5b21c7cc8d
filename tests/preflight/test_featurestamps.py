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
    kept_file = _safetensors(cache / "a.safetensors", [1.0])
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


def _safetensors(path, values):
    import torch
    from safetensors.torch import save_file

    save_file({"features": torch.tensor(values)}, str(path))
    return path


def test_the_header_tells_a_whole_file_from_one_cut_short_or_garbled(tmp_path):
    from dfil.preflight.featurestamps import safetensors_damage

    whole = _safetensors(tmp_path / "a.safetensors", [1.0, 2.0, 3.0])
    assert safetensors_damage(whole) is None
    size = whole.stat().st_size
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(whole.read_bytes()[:-4])  # three float32s: the last one's bytes short
    assert safetensors_damage(cut) == f"{size - 4} bytes where its header needs {size}"
    short = tmp_path / "short.safetensors"
    short.write_bytes(whole.read_bytes()[:20])
    assert safetensors_damage(short).startswith("its header claims")
    garbled = tmp_path / "garbled.safetensors"
    garbled.write_bytes((5).to_bytes(8, "little") + b"{nope")
    assert safetensors_damage(garbled) == "its header does not read (JSONDecodeError)"


def test_a_damaged_cache_file_is_removed_with_its_stamp(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    good = _safetensors(cache / "a.safetensors", [1.0])
    bad = _safetensors(cache / "b.safetensors", [1.0, 2.0])
    bad.write_bytes(bad.read_bytes()[:-1])
    features = tmp_path / "features"
    kept = _stamp(features, "g", "train", [good])
    hit = _stamp(features, "g", "val", [good, bad])
    assert missing_file(kept) is None and missing_file(hit) == str(bad)
    notes = stale_stamps(features, apply=True)
    assert len(notes) == 1 and f"frozen-feature file {bad} is damaged" in notes[0]
    assert not hit.exists() and not bad.exists() and kept.exists() and good.exists()
