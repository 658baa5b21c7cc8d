import json

import pytest

from dfil.data import load_qure, load_sst5, load_sts22
from dfil.data.ordinal import label_proportion, sts22_bucket
from dfil.data.synthetic import ordinal_standin_records
from dfil.util.errors import DataError


def test_load_qure_paper_subset(shared_data):
    df = load_qure(shared_data / "qure" / "QuRe.json")
    assert len(df) == 401
    assert df["quantifier"].value_counts().to_dict() == {"some": 196, "most": 115, "few": 76,
                                                          "all": 14}
    assert set(df["label_name"]) == {"few", "some", "most", "all"}
    assert df["text"].str.contains(r"\[MASK\]").all()
    assert df["text_fallback"].sum() == 3  # annotated word missing from quant_sent
    assert df["p"].between(0, 1).all()


def test_load_qure_errors_name_the_line(tmp_path):
    path = tmp_path / "q.json"
    row = {"quantifier": "few", "quant_sent": "few of them", "orig_sentence": "5% of them",
           "percentage": "5%"}
    path.write_text(json.dumps(row) + "\n" + json.dumps({**row, "percentage": "n/a"}) + "\n")
    with pytest.raises(DataError, match=r"q\.json:2: unparseable percentage"):
        load_qure(path)
    with pytest.raises(DataError, match="no FRoG label"):
        load_qure(path, quantifiers=("few", "large"))
    path.write_text(json.dumps(row) + "\n" + json.dumps({**row, "percentage": "120%"}) + "\n")
    with pytest.raises(DataError, match=r"q\.json:2: percentage '120%' lies outside"):
        load_qure(path)


def test_load_sst5_local(shared_data, tmp_path):
    df = load_sst5(shared_data / "sst5" / "stsa.fine.test")
    assert len(df) == 2210
    assert df["label"].value_counts().sort_index().tolist() == [279, 633, 389, 510, 399]
    bad = tmp_path / "bad.txt"
    bad.write_text("3 fine\n7 broken\n")
    with pytest.raises(DataError, match=r"bad\.txt:2"):
        load_sst5(bad)


def test_label_proportion_and_sts22_buckets(tmp_path):
    assert label_proportion([0, 4]).tolist() == pytest.approx([0.1, 0.9])
    assert label_proportion([0, 4], mode="index").tolist() == [0.0, 1.0]
    assert [sts22_bucket(s) for s in (1.0, 1.6, 2.5, 3.39, 4.0)] == [0, 1, 2, 3, 4]
    path = tmp_path / "sts.jsonl"
    path.write_text(json.dumps({"sentence1": "a", "sentence2": "b", "score": 4.0}) + "\n"
                    + json.dumps({"sentence1": "a", "sentence2": "b", "score": 9}) + "\n")
    with pytest.raises(DataError, match=r"sts\.jsonl:2: score 9.0"):
        load_sts22(path)


def test_ordinal_standin_is_seeded_and_balanced():
    a = ordinal_standin_records(50, seed=1)
    assert a == ordinal_standin_records(50, seed=1) != ordinal_standin_records(50, seed=2)
    assert [sum(r["label"] == k for r in a) for k in range(5)] == [10] * 5
    assert all("stand-in" in r["source"] for r in a)


def test_ordinal_standin_words_a_share_one_level_off():
    rows = ordinal_standin_records(5000, seed=3)
    off = [r["wording_level"] - r["label"] for r in rows]
    assert set(off) == {-1, 0, 1}
    # 20% drawn one level off, less the shifts clipped at the two ends of the scale
    # (2/5 of the labels are ends, half their shifts point outwards): 0.2 * 0.8.
    assert abs(sum(o != 0 for o in off) / len(off) - 0.2 * 0.8) < 0.02
    exact = ordinal_standin_records(100, seed=3, off_level=0.0)
    assert all(r["wording_level"] == r["label"] for r in exact)
    with pytest.raises(ValueError, match="off_level"):
        ordinal_standin_records(10, seed=0, off_level=1.5)
