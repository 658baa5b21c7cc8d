import pytest
from report_tables import scaling_table, stat
from scipy import stats as sps

from dfil.report.claims import (
    SeedTest,
    seed_test_contrast,
    seed_test_signed,
    table_claims,
    verdict,
    verdict_counts,
)


def test_contrast_is_welch_on_the_seeds():
    a, b = stat(44.0, 45.0, 46.0), stat(40.0, 40.5, 41.0)
    t = seed_test_contrast(a, b)
    assert t.value == pytest.approx(4.5)
    assert t.pvalue == pytest.approx(sps.ttest_ind([44, 45, 46], [40, 40.5, 41],
                                                   equal_var=False).pvalue)
    assert t.test == "Welch t, n=3 vs 3"


def test_a_printed_difference_is_tested_on_its_sides_seeds():
    """T3's Δ rows and T5's Δ column print one number; their claims are backed by Welch's
    t on the two sides' seeds, as a declared contrast is."""
    from dfil.render.entries import Entry, Row, Table, row_ops

    a, b = stat(44.0, 45.0, 46.0), stat(40.0, 40.5, 41.0)
    rows = [Row("dfil", "DFIL", entries={"x": a}), Row("ft", "FT", entries={"x": b}),
            Row("d", "Δ", entries={"x": Entry("delta_rows", args=("dfil", "ft"))})]
    delta = row_ops(Table("t", 1, "tab:t", "", ["x"], rows))[2].entries["x"]
    assert delta.value == pytest.approx(4.5) and delta.sides == (a, b)
    assert seed_test_signed(delta) == seed_test_contrast(a, b)
    assert seed_test_signed(Entry("value", value=4.5)).test == "one value: no test on seeds"


def test_a_parity_every_seed_gives_exactly_is_established_without_a_t_test():
    """T3's self-consistent oracle: 100 against 100 on every seed, the paper's Δ 0.0."""
    t = seed_test_contrast(stat(100.0, 100.0, 100.0), stat(100.0, 100.0, 100.0))
    assert (t.value, t.pvalue, t.interval, t.test) == (0.0, None, (0.0, 0.0),
                                                      "n=3, every seed equal: no test")
    assert verdict(0.0, t, 0.5, standin=True) == (
        "direction only", "sign as the paper's and established; size not comparable on a "
        "stand-in grid")
    assert verdict(0.0, t, 0.5, standin=False)[0] == "reproduced"
    # a constant nonzero difference: exact, but no t-test to establish a sign with
    one = seed_test_contrast(stat(3.0, 3.0, 3.0), stat(1.0, 1.0, 1.0))
    assert verdict(2.0, one, 0.5, standin=True) == (
        "direction only", "sign as the paper's, n=3, every seed equal: no test")


def test_verdicts_by_hand():
    est = SeedTest(4.5, "Welch", 0.01, (3.0, 6.0))
    assert verdict(4.0, est, 0.5, standin=False)[0] == "reproduced"
    assert verdict(1.0, est, 0.5, standin=False)[0] == "direction only"  # size outside
    assert verdict(4.0, est, 0.5, standin=True)[0] == "direction only"   # stand-in
    assert verdict(-2.0, est, 0.5, standin=False) == (
        "not reproduced", "reproduced Δ positive, the paper's negative (|Δ| < 0.5 counts as "
        "no effect)")
    weak = SeedTest(4.5, "Welch", 0.2, (-1.0, 10.0))
    v, why = verdict(4.0, weak, 0.5, standin=False)
    assert v == "direction only" and "p = 0.2" in why
    assert verdict(None, est, 0.5, False)[0] == "not comparable"
    assert verdict(4.0, SeedTest(None, "", None, None), 0.5, False)[0] == "not run"


def test_a_parity_is_established_by_an_interval_inside_the_tolerance():
    assert verdict(-0.1, SeedTest(0.1, "t", 0.6, (-0.3, 0.4)), 0.5, False)[0] == "reproduced"
    assert verdict(-0.1, SeedTest(0.1, "t", 0.6, (-2.0, 2.0)), 0.5, False)[0] == \
        "direction only"


def test_table_claims_name_and_count():
    found = table_claims(scaling_table(), standin=True)
    assert [c.label for c in found] == ["DFIL vs fine-tune"]
    assert found[0].paper == pytest.approx(1.0)
    assert found[0].verdict == "direction only"
    assert verdict_counts(found)["direction only"] == 1


def test_dfil_main_against_fine_tune_on_a_frozen_backbone_is_not_comparable():
    table = scaling_table()
    keys = frozenset(k for row in table.rows for e in row.entries.values() for k, _ in e.reads)
    found = table_claims(table, standin=True, frozen=keys)
    assert found[0].verdict == "not comparable" and "frozen" in found[0].reason
    # one side trained with an adapter: the comparison stands
    half = frozenset(k for k in keys if "/finetune/" in k)
    assert table_claims(table, standin=True, frozen=half)[0].verdict == "direction only"
