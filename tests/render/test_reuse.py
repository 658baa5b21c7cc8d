"""One run never fills two settings of one table (dfil.render.reuse), on hand-made rows."""

from __future__ import annotations

from dfil.render.entries import Entry, Row
from dfil.render.reuse import one_run_one_setting, voided_settings

RUN = "frog/tiny-llama/dfil/lam0.5/nfull/qure/seed42"
OTHER = "frog/tiny-llama/finetune/lamna/nfull/na/seed42"
LAM = ("lambdas", "0.1", "0.5")
B7, B15 = ("backbones", "qwen2.5-7b", "tiny-llama"), ("backbones", "qwen2.5-1.5b", "tiny-llama")


def stat(run: str, *subs, metric: str = "acc", value: float = 40.0) -> Entry:
    return Entry("stat", values=(value,), reads=frozenset({(run, metric)}),
                 substituted=frozenset(subs), published=48.0)


def test_lambda_0_1_standing_in_beside_lambda_0_5_is_not_run():
    """T16: the λ 0.5 run fills its own column; λ 0.1, which the grid maps to it, is
    not run, with the reason, and reads nothing."""
    rows = [Row("acc", "acc", entries={"l01": stat(RUN, B7, LAM), "l05": stat(RUN, B7)})]
    out, reasons = one_run_one_setting(rows)
    kept, void = out[0].entries["l05"], out[0].entries["l01"]
    assert kept == rows[0].entries["l05"]
    assert void.mean is None and void.reads == frozenset() and void.render() == "---"
    assert void.published == 48.0  # the paper's number stays, compared with nothing
    assert void.not_run == reasons[0]
    assert reasons == ["not run on this grid: lambda 0.1 (its stand-in, the lambda 0.5 run, "
                       "already fills this table's lambda 0.5 entries)"]


def test_two_metrics_of_one_setting_are_one_setting():
    rows = [Row("r", "r", entries={"acc": stat(RUN, B7), "mae": stat(RUN, B7, metric="mae")})]
    assert one_run_one_setting(rows) == (rows, [])


def test_seed_sets_are_replications_not_settings():
    """Seed 42 and "the mean over three seeds" (one seed on this grid) are one setting."""
    three = ("seed_sets", "three", "one")
    rows = [Row("s42", "s42", entries={"a": stat(RUN, B7)}),
            Row("mean", "mean", entries={"a": stat(RUN, B7, three)})]
    assert voided_settings(rows) == {}


def test_the_setting_filling_more_entries_keeps_the_runs_in_every_row():
    """T6: 1.5B and 7B columns both stand in with the one backbone; 7B fills more
    entries (accuracy and monotonicity), so the 1.5B column is void in every row,
    never a column-wise mix."""
    rows = [Row(m, m, entries={"b15": stat(run, B15), "b7": stat(run, B7),
                               "mono": stat(run, B7, metric="violations")})
            for m, run in (("ft", OTHER), ("dfil", RUN))]
    out, reasons = one_run_one_setting(rows)
    assert [r.entries["b15"].mean for r in out] == [None, None]
    assert [r.entries["b7"].mean for r in out] == [40.0, 40.0]
    assert len(reasons) == 1 and "backbone qwen2.5-1.5b" in reasons[0]


def test_a_test_reading_a_voided_setting_is_voided_with_it():
    """A Welch p of λ 0.1 against another run reads the voided setting's runs through its
    substitution: not run too; the same test on λ 0.5 stays."""
    p01 = Entry("value", value=0.3, fmt="p", reads=frozenset({(RUN, "acc"), (OTHER, "acc")}),
                substituted=frozenset({B7, LAM}))
    p05 = Entry("value", value=0.3, fmt="p", reads=frozenset({(RUN, "acc"), (OTHER, "acc")}),
                substituted=frozenset({B7}))
    rows = [Row("acc", "acc", entries={"l01": stat(RUN, B7, LAM), "l05": stat(RUN, B7)}),
            Row("p", "p", entries={"l01": p01, "l05": p05})]
    out, _ = one_run_one_setting(rows)
    assert out[1].entries["l01"].mean is None and out[1].entries["l05"].mean == 0.3


def test_different_runs_are_never_voided():
    rows = [Row("r", "r", entries={"a": stat(RUN, B7, LAM), "b": stat(OTHER, B7)})]
    assert one_run_one_setting(rows) == (rows, [])
