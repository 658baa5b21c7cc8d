import json
import re

import pytest

from dfil.data import format_prompt, load_frog, parse_percentage, split_train_val
from dfil.data.frog import few_shot_subset, largest_remainder, stratified_counts
from dfil.data.synthetic import _TOTALS, FROG_CLASS_COUNTS, HARD_TOTALS, write_frog_like
from dfil.util.errors import DataError
from hubrepos import frog_hub_rows


@pytest.mark.parametrize(
    "text,expected",
    [("5 %", 0.05), ("31.1 %", 0.311), ("60%", 0.6), ("0.10%", 0.001), ("0%-2%", 0.01),
     ("80%-90%", 0.85), ("0 %", 0.0), ("100%", 1.0), ("90%-100%", 0.95)],
)
def test_parse_percentage(text, expected):
    assert parse_percentage(text) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["five percent", "12", "", "%", None])
def test_parse_percentage_rejects(text):
    with pytest.raises(ValueError, match="unparseable percentage"):
        parse_percentage(text)


def test_repository_layout_loads_from_shared_samples(shared_data):
    path = shared_data / "frog-samples" / "task=mask_quant.jsonl"
    df = load_frog(path, "easy")
    assert len(df) == 30
    first = df.iloc[0]
    assert first["label_name"] == "few" and first["p"] == pytest.approx(0.05)
    assert first["origin"].endswith("task=mask_quant.jsonl:1")
    # rows lacking the top-level 'quantifier' take the label from info[1]
    raw = [json.loads(line) for line in path.read_text().splitlines()]
    no_top = [i for i, r in enumerate(raw) if "quantifier" not in r]
    assert no_top and all(df.iloc[i]["label_name"] == raw[i]["info"][1] for i in no_top)


def test_hub_layout_loads_from_shared_samples_converted(shared_data, tmp_path):
    # The hub's record layout, built from the same real items.
    src = shared_data / "frog-samples" / "task=mask_quant.jsonl"
    (tmp_path / "mask_quant").mkdir()
    import pandas as pd

    parquet = tmp_path / "mask_quant" / "hard-00000-of-00001.parquet"
    pd.DataFrame(frog_hub_rows(src)).to_parquet(parquet)
    hub = load_frog(tmp_path, "hard")
    repo = load_frog(src, "hard")
    assert hub["label"].tolist() == repo["label"].tolist()
    assert hub["p"].tolist() == repo["p"].tolist()
    assert hub["id"].iloc[3] == "hard/frog-3"  # the split names the record with its id


def test_bad_rows_name_file_and_line(tmp_path):
    good = {"question": "[MASK] of them", "target_percentage_mention": "5 %",
            "quantifier": "few"}
    cases = {
        "nolabel": ({k: v for k, v in good.items() if k != "quantifier"}, "no label"),
        "badpct": ({**good, "target_percentage_mention": "lots"}, "unparseable percentage"),
        "unknownq": ({**good, "quantifier": "several"}, "unknown quantifier 'several'"),
    }
    for name, (row, message) in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text(json.dumps(good) + "\n" + json.dumps(row) + "\n")
        with pytest.raises(DataError, match=rf"{name}\.jsonl:2: .*{message}"):
            load_frog(path, "easy")
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(good) + "\n{not json\n")
    with pytest.raises(DataError, match=r"broken\.jsonl:2: invalid JSON"):
        load_frog(broken, "easy")


@pytest.mark.parametrize("text", ["150 %", "100.5%", "-5 %", "90%-120%"])
def test_parse_percentage_refuses_values_outside_0_100(text):
    with pytest.raises(ValueError, match=rf"percentage '{re.escape(text)}' lies outside "
                                         r"\[0, 100\] %"):
        parse_percentage(text)


def test_wrong_split_and_out_of_range_p(tmp_path):
    with pytest.raises(DataError, match="unknown FRoG split 'train'"):
        load_frog(tmp_path, "train")
    path = tmp_path / "x.jsonl"
    good = {"question": "q", "target_percentage_mention": "100 %", "quantifier": "all"}
    path.write_text(json.dumps(good) + "\n"
                    + json.dumps({**good, "target_percentage_mention": "150 %"}) + "\n")
    with pytest.raises(DataError, match=r"x\.jsonl:2: percentage '150 %' lies outside "
                                        r"\[0, 100\] %"):
        load_frog(path, "easy")  # refused, not clipped to p = 1


def test_synthetic_split_sizes_and_class_balance(tmp_path):
    write_frog_like(tmp_path, seed=0)
    easy, hard = load_frog(tmp_path, "easy"), load_frog(tmp_path, "hard")
    assert len(easy) == len(hard) == 2044
    assert easy["label"].value_counts().sort_index().tolist() == list(FROG_CLASS_COUNTS)
    train, val = split_train_val(easy, 0.8, seed=0)
    assert (len(train), len(val)) == (1636, 408)  # Table dataset_stats
    assert train["label"].value_counts().sort_index().tolist() == [
        25, 85, 414, 322, 162, 389, 159, 80]
    assert set(train["id"]).isdisjoint(val["id"])
    again, _ = split_train_val(easy, 0.8, seed=0)
    assert again["id"].tolist() == train["id"].tolist()
    assert easy.groupby("label")["p"].min().tolist()[0] == 0.0
    assert hard.groupby("label")["p"].max().tolist()[-1] == 1.0
    assert hard["label"].value_counts().sort_index().tolist() == list(FROG_CLASS_COUNTS)


def _totals(frame):
    return set(frame["question"].str.extract(r"out of (\d+)\.")[0].astype(int))


def test_synthetic_hard_forms(tmp_path):
    write_frog_like(tmp_path / "u", seed=0, n_easy=400, n_hard=400)
    easy, hard = load_frog(tmp_path / "u", "easy"), load_frog(tmp_path / "u", "hard")
    # unseen_totals: the easy wording, over group sizes no easy item uses
    assert _totals(easy) <= set(_TOTALS) and _totals(hard) <= set(HARD_TOTALS)
    assert set(_TOTALS).isdisjoint(HARD_TOTALS)
    assert hard["question"].str.contains("specifically").all()
    write_frog_like(tmp_path / "c", seed=0, n_easy=40, n_hard=40, hard_form="complement")
    comp = load_frog(tmp_path / "c", "hard")
    assert not comp["question"].str.contains(r"out of \d", regex=True).any()
    first = comp.iloc[0]  # "Of the N x, N-k did not ...; [MASK] of them ...": p = k / N
    n, rest = map(int, re.match(r"Of the (\d+) \w+, (\d+) ", first["question"]).groups())
    assert first["p"] == pytest.approx((n - rest) / n, abs=1e-3)
    with pytest.raises(ValueError, match="hard_form"):
        write_frog_like(tmp_path / "x", hard_form="negated")


def test_synthetic_is_byte_deterministic(tmp_path):
    a = write_frog_like(tmp_path / "a", seed=7, n_easy=100, n_hard=50)
    b = write_frog_like(tmp_path / "b", seed=7, n_easy=100, n_hard=50)
    c = write_frog_like(tmp_path / "c", seed=8, n_easy=100, n_hard=50)
    assert a == b and a["easy"] != c["easy"]
    easy_a, easy_b = (tmp_path / d / "easy.jsonl" for d in ("a", "b"))
    assert easy_a.read_bytes() == easy_b.read_bytes()
    assert len(load_frog(tmp_path / "a", "hard")) == 50


@pytest.mark.parametrize("budget", [16, 32, 64, 128, 256])
def test_few_shot_subsets_are_class_stratified(tmp_path, budget):
    write_frog_like(tmp_path, seed=0)
    train, _ = split_train_val(load_frog(tmp_path, "easy"), seed=0)
    sub = few_shot_subset(train, budget, seed=1)
    counts = sub["label"].value_counts()
    assert len(sub) == budget and counts.min() >= 1 and len(counts) == 8
    assert few_shot_subset(train, budget, seed=1)["id"].tolist() == sub["id"].tolist()


def test_largest_remainder_hand_computed():
    # 10 over weights 5/3/2 with min 1: base 1,1,1; 7 more over spare 4/2/1 -> 4, 2, 1.
    assert largest_remainder({0: 5, 1: 3, 2: 2}, 10, 1) == {0: 5, 1: 3, 2: 2}
    assert stratified_counts({0: 1, 1: 100}, 4) == {0: 1, 1: 3}
    with pytest.raises(ValueError, match="exceeds"):
        stratified_counts({0: 1, 1: 2}, 4)


def test_format_prompt_matches_app_c2():
    text = format_prompt("[MASK] of the 20 students passed the exam, specifically 15 out of 20.")
    assert text == (
        "Choose the most appropriate quantifier for the\nblank in the following sentence:\n\n"
        '"___ of the 20 students passed the exam, specifically 15 out of 20."\n\n'
        "Options: (A) none (B) tiny amount (C) few (D) small amount (E) some "
        "(F) moderate amount (G) most (H) all\n\nAnswer:"
    )
