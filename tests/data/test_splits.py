"""No leaking or repeated data: unique ids per split, a test split disjoint from train/val."""

import json
import shutil

import pandas as pd
import pytest

from dfil.config.cell import CellConfig, DataConfig
from dfil.data import load_frog, load_qure
from dfil.data.frog import frog_test_source
from dfil.data.probes import read_probes, write_probes
from dfil.data.splits import check_test_disjoint, check_unique_ids, normalize_text, overlap_masks
from dfil.engine.frames import task_frames
from dfil.util.errors import ConfigError, DataError


def _frame(ids, texts, origins=None):
    df = pd.DataFrame({"id": ids, "text": texts})
    if origins:
        df["origin"] = origins
    return df


def test_check_unique_ids_names_both_places():
    check_unique_ids(_frame(["a", "b"], ["x", "y"]), "f.jsonl")
    df = _frame(["a", "b", "a", "b"], ["w", "x", "y", "z"],
                ["f.jsonl:1", "f.jsonl:2", "f.jsonl:3", "f.jsonl:4"])
    with pytest.raises(DataError, match=r"^f\.jsonl:3: id 'a' is already used at f\.jsonl:1 "
                                        r"\(2 repeated id\(s\) in f\.jsonl\)"):
        check_unique_ids(df, "f.jsonl")
    with pytest.raises(DataError, match=r"^g: row 2: id 'a' is already used at g: row 1"):
        check_unique_ids(_frame(["a", "a"], ["x", "y"]), "g")


def test_normalize_text_hand_computed():
    assert normalize_text(pd.Series(["  Most  of\tthem\n", "MOST OF THEM"])).tolist() == [
        "most of them", "most of them"]


def test_overlap_masks_by_id_and_by_text():
    seen = {"train": _frame(["t1", "t2"], ["Few of them.", "All of them."]),
            "val": _frame(["v1"], ["Some of them."])}
    test = _frame(["t1", "x2", "x3", "x4"], ["new one", "some  OF them.", "other", "x"])
    by_id, by_text = overlap_masks(seen, test)
    assert by_id.tolist() == [True, False, False, False]
    assert by_text.tolist() == [False, True, False, False]


def test_check_test_disjoint_refuses_overlap_beyond_the_allowed_count():
    frames = {"train": _frame(["t1", "t2"], ["a", "b"]), "val": _frame(["v1"], ["c"]),
              "test": _frame(["x1", "x2", "x3"], ["a", "z", "c"],
                             ["hard.jsonl:1", "hard.jsonl:2", "hard.jsonl:3"])}
    with pytest.raises(DataError, match=r"^hard\.jsonl:1: the test split shares 2 of 3 items "
                                        r"with train/val \(0 by id, 2 by text; first: 'a'\).*"
                                        r"data\.test_source.*allowed_test_overlap: 2 \(now 0\)"):
        check_test_disjoint(frames)
    with pytest.raises(DataError, match="shares 2 of 3"):
        check_test_disjoint(frames, allowed=1)
    check_test_disjoint(frames, allowed=2)
    frames["test"] = _frame(["x1", "x2"], ["y", "z"])
    check_test_disjoint(frames)


def _hub_rows(n, prefix="frog"):
    return [{"id": f"{prefix}-{i}", "question": f"[MASK] of the {i + 10} boxes were red.",
             "target_percentage_mention": "5 %", "quantifier": "few"} for i in range(n)]


def test_load_frog_refuses_a_repeated_id(tmp_path):
    rows = _hub_rows(3)
    rows[2]["id"] = "frog-0"
    path = tmp_path / "easy.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DataError, match=r"easy\.jsonl:3: id 'easy/frog-0' is already used at "
                                        r".*easy\.jsonl:1"):
        load_frog(path, "easy")


def test_read_probes_refuses_a_repeated_id(tmp_path):
    write_probes(tmp_path)
    assert len(read_probes(tmp_path)["ipr"]) == 40
    lines = (tmp_path / "ipr.jsonl").read_text().splitlines()
    (tmp_path / "ipr.jsonl").write_text("\n".join(lines + [lines[4]]) + "\n")
    first = json.loads(lines[4])["id"]
    with pytest.raises(DataError, match=rf"ipr\.jsonl:41: id '{first}' is already used at "
                                        r"line 5"):
        read_probes(tmp_path)


def test_frog_test_source_refuses_a_single_file_for_both_splits(tmp_path):
    single = tmp_path / "frog.jsonl"
    single.write_text("".join(json.dumps(r) + "\n" for r in _hub_rows(2)))
    for test_source in ("", str(single)):
        with pytest.raises(DataError, match=r"data\.source: .*frog\.jsonl is a single file.*"
                                            r"Set data\.test_source"):
            frog_test_source(str(single), test_source)
    assert frog_test_source(str(single), str(tmp_path / "hard.jsonl")).endswith("hard.jsonl")
    assert frog_test_source(str(tmp_path)) == str(tmp_path)
    assert frog_test_source("GAIR/FRoG") == "GAIR/FRoG"


def _frog_cell(source, test_source=""):
    return CellConfig(data=DataConfig(task="frog", source=str(source),
                                      test_source=str(test_source)))


def test_task_frames_refuses_a_single_frog_file_as_its_own_test_split(shared_data):
    sample = shared_data / "frog-samples" / "task=mask_quant.jsonl"
    with pytest.raises(DataError, match=r"is a single file, so FRoG-hard would be read from "
                                        r"the same file"):
        task_frames(_frog_cell(sample))


def test_task_frames_refuses_a_test_file_sharing_training_items(shared_data, tmp_path):
    sample = shared_data / "frog-samples"
    easy = tmp_path / "easy.jsonl"
    shutil.copyfile(sample / "task=mask_quant.jsonl", easy)
    hard = tmp_path / "hard.jsonl"
    leaked = (sample / "task=mask_quant.jsonl").read_text().splitlines()[7]
    hard.write_text((sample / "task=mislead.jsonl").read_text() + leaked + "\n")
    frames = task_frames(_frog_cell(easy, sample / "task=mislead.jsonl"))
    assert len(frames["test"]) == 30  # a separate real file is accepted
    with pytest.raises(DataError, match=r"hard\.jsonl:31: the test split shares 1 of 31 items "
                                        r"with train/val \(0 by id, 1 by text"):
        task_frames(_frog_cell(easy, hard))


def test_hub_ids_of_easy_and_hard_name_their_split(tmp_path):
    # The same ids in both splits (two versions of one question set) are not a leak.
    easy, hard = tmp_path / "easy.jsonl", tmp_path / "hard.jsonl"
    easy.write_text("".join(json.dumps(r) + "\n" for r in _hub_rows(10)))
    rows = _hub_rows(10)
    for r in rows:
        r["question"] = r["question"].replace("boxes", "crates")
    hard.write_text("".join(json.dumps(r) + "\n" for r in rows))
    frames = task_frames(_frog_cell(tmp_path))
    assert frames["test"]["id"].iloc[0] == "hard/frog-0"
    assert set(frames["train"]["id"]) | set(frames["val"]["id"]) == {
        f"easy/frog-{i}" for i in range(10)}


def test_qure_transfer_set_must_have_its_401_rows(shared_data, tmp_path):
    assert len(load_qure(shared_data / "qure" / "QuRe.json")) == 401
    lines = (shared_data / "qure" / "QuRe.json").read_text().splitlines()
    truncated = tmp_path / "QuRe.json"
    truncated.write_text("\n".join(lines[:300]) + "\n")  # cut at a line boundary
    kept = len(load_qure(truncated, expected_rows=None))
    assert kept < 401
    with pytest.raises(DataError, match=rf"QuRe\.json: {kept} rows with quantifiers "
                                        r"\['few', 'some', 'most', 'all'\], expected 401 "
                                        r"\(data\.qure_rows\)"):
        load_qure(truncated)
    assert len(load_qure(truncated, expected_rows=kept)) == kept  # a configured count


def test_ordinal_standin_overlap_is_allowed_only_by_name():
    with pytest.raises(DataError, match=r"test id 'ordinal-standin-01000': the test split "
                                        r"shares 500 of 500 items"):
        task_frames(CellConfig(data=DataConfig(task="ordinal_standin")))
    frames = task_frames(CellConfig(data=DataConfig(task="ordinal_standin",
                                                    allowed_test_overlap=500)))
    assert len(frames["test"]) == 500


def test_task_frames_reads_data_source_only_for_tasks_that_read_files(tmp_path):
    """The ordinal stand-in is made in place: a data.source it never reads (the grid's
    default, not made for a run that asks for this cell alone) is no error; a FRoG cell's
    missing source is, naming the key."""
    missing = tmp_path / "data" / "frog"
    frames = task_frames(CellConfig(data=DataConfig(
        task="ordinal_standin", source=str(missing), allowed_test_overlap=500)))
    assert [len(frames[k]) for k in ("train", "val", "test")] == [800, 200, 500]
    with pytest.raises(ConfigError, match=r"data.source: .* does not exist"):
        task_frames(_frog_cell(missing))
