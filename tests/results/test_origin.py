"""Which code commit and library versions made a table's runs (dfil.results.origin), on
hand-made origins and through the aggregate."""

from __future__ import annotations

from dfil.contracts.metrics import write_metrics
from dfil.results.aggregate import aggregate
from dfil.results.origin import origin_note, versions_text
from records import metrics_record

A, B = "1111111111aa" + "0" * 28, "2222222222bb" + "0" * 28
NEW = "torch=2.13.0 transformers=4.57.1"
OLD = "torch=2.13.0 transformers=4.56.0"
TAIL = " Numbers compared across them may differ by that change, not only by the setting."


def test_versions_text_is_sorted_and_names_what_is_not_installed():
    assert versions_text({"transformers": "4.57.1", "flash_attn": None, "cuda": "12.8"}) == \
        "cuda=12.8 flash_attn=none transformers=4.57.1"
    assert versions_text(None) == versions_text({}) == ""


def test_one_commit_and_one_set_of_versions_is_no_note():
    origins = {"k1": (A, NEW), "k2": (A, NEW), "k3": (B, OLD)}
    assert origin_note(origins, ["k1", "k2"]) == ""
    assert origin_note(origins, []) == ""
    # unknown commits, runs that record no versions (a failure record) and keys the
    # aggregate lacks are left out of the comparison
    assert origin_note({**origins, "k4": ("unknown", ""), "k5": (A, "")},
                       ["k1", "k2", "k4", "k5", "absent"]) == ""


def test_the_note_names_each_commit_and_each_differing_library_with_its_runs():
    origins = {"k1": (A, NEW), "k2": (A, NEW), "k3": (B, OLD)}
    assert origin_note(origins, ["k1", "k2", "k3"]) == (
        "Its runs differ in code commit: 1111111111aa (2 runs), 2222222222bb (1 run); "
        "in library versions: transformers 4.57.1 (2 runs), 4.56.0 (1 run)." + TAIL)
    # versions alone (torch, the same in all three, is not named); a library one run
    # lacks reads as absent
    origins = {"k1": (A, NEW), "k2": (A, OLD), "k3": (A, "torch=2.13.0")}
    assert origin_note(origins, ["k1", "k2", "k3"]) == (
        "Its runs differ in library versions: transformers 4.56.0 (1 run), 4.57.1 (1 run), "
        "absent (1 run)." + TAIL)
    assert origin_note({"k1": (A, ""), "k2": (B, "")}, ["k1", "k2"]) == (
        "Its runs differ in code commit: 1111111111aa (1 run), 2222222222bb (1 run)." + TAIL)


def test_the_aggregate_carries_each_runs_commit_and_library_versions(tmp_path):
    runs = tmp_path / "runs"
    recorded = {"torch": "2.13.0", "cuda": None, "transformers": "4.57.1", "peft": "0.17.1",
                "bitsandbytes": None, "flash_attn": None}
    for seed, versions in ((1, recorded), (2, None)):
        record = metrics_record()
        if versions is not None:
            record["provenance"]["versions"] = versions
        run = runs / f"frog/tiny/dfil/lam0.5/nfull/qure/seed{seed}"
        run.mkdir(parents=True)
        write_metrics(run / "metrics.json", record)
    table = aggregate(sorted(runs.rglob("metrics.json")), runs)
    by_seed = table.groupby("seed")["libraries"].agg(set).to_dict()
    assert by_seed == {"1": {"bitsandbytes=none cuda=none flash_attn=none peft=0.17.1 "
                             "torch=2.13.0 transformers=4.57.1"}, "2": {""}}
