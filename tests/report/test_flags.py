from dataclasses import replace

from report_tables import stat

from dfil.render.entries import Row, Table
from dfil.report.flags import table_flags


def _table(rows, cols):
    return Table("t", 1, "tab:t", "", cols, rows)


def test_identical_columns_equal_methods_and_a_reused_run():
    a = stat(1.0, 2.0, reads=["k1"])
    b = stat(1.0, 2.0, reads=["k1"])
    t = _table([Row("x", "x", entries={"c1": a, "c2": b})], ["c1", "c2"])
    assert {f.kind for f in table_flags(t)} == {"identical columns"}  # one setting
    b = replace(b, substituted=frozenset({("lambdas", "0.1", "0.5")}))
    t = _table([Row("x", "x", entries={"c1": a, "c2": b})], ["c1", "c2"])
    assert {f.kind for f in table_flags(t)} == {"identical columns", "run reused"}


def test_two_methods_equal_to_the_digit_and_zero_variance():
    rows = [Row("dfil", "DFIL", entries={"acc": stat(13.9, 13.9, reads=["a"])}),
            Row("ft", "FT", entries={"acc": stat(13.9, 13.9, reads=["b"])})]
    found = {f.kind: f.where for f in table_flags(_table(rows, ["acc"]))}
    assert found == {"zero variance": (("dfil", "acc"), ("ft", "acc")),
                     "identical rows": (("dfil", ""), ("ft", ""))}
    rows[0].entries["f1"] = stat(1.0, 2.0, reads=["d"])
    rows[1] = Row("ft", "FT", entries={"acc": stat(13.9, 13.9, reads=["b"]),
                                       "f1": stat(5.0, 9.0, reads=["e"])})
    found = {f.kind: f.where for f in table_flags(_table(rows, ["acc", "f1"]))}
    assert found["equal to the digit"] == (("dfil", "acc"), ("ft", "acc"))


def test_a_pattern_over_many_lines_is_one_flag_naming_them_all():
    """T7 on a stand-in grid: eleven domains print the same row; one flag, not 55."""
    rows = [Row(d, d.title(), entries={"dfil": stat(1.0, 2.0, reads=[d + "a"]),
                                       "ft": stat(3.0, 4.0, reads=[d + "b"])})
            for d in ("health", "sports", "finance")]
    rows.append(Row("odd", "Odd", entries={"dfil": stat(5.0, 6.0, reads=["o"])}))
    flags = table_flags(_table(rows, ["dfil", "ft"]))
    assert [(f.kind, f.where) for f in flags] == [
        ("identical rows", (("health", ""), ("sports", ""), ("finance", "")))]


def test_a_bold_that_marks_nothing():
    rows = [Row("a", "A", entries={"acc": stat(1.0, 2.0, reads=["a"], bold=True)}),
            Row("b", "B", entries={"acc": stat(1.0, 2.0, reads=["b"])})]
    assert "empty bold" in {f.kind for f in table_flags(_table(rows, ["acc"]))}
    rows[1] = Row("b", "B", entries={"acc": stat(3.0, 5.0, reads=["b"])})
    assert table_flags(_table(rows, ["acc"])) == []


def test_a_stand_in_reused_for_another_setting_in_another_table():
    from dfil.report.flags import cross_table

    reads = ["frog/b/dfil/lam0.5/nfull/qure/seed1"]
    bs64 = replace(stat(1.0, 2.0, reads=reads),
                   substituted=frozenset({("variants", "bs64", "(none)")}))
    t6 = Table("a", 6, "tab:a", "", ["b1_5"], [Row("dfil", "D", entries={"b1_5": bs64})])
    t25 = Table("b", 25, "tab:b", "", ["acc"],
                [Row("dfil", "D", entries={"acc": stat(1.0, 2.0, reads=reads)})])
    found = cross_table([t6, t25])
    assert [(f.where, f.also) for f in found["T6"]] == [((("dfil", "b1_5"),), ("T25",))]
    assert found["T25"][0].kind == "stand-in across tables"
    assert found["T25"][0].also == ("T6",)
    # a seed set is no setting: the 3-seed mean of a one-seed grid is the run itself
    mean = replace(stat(1.0, 2.0, reads=reads),
                   substituted=frozenset({("seed_sets", "three", "one")}))
    t24 = Table("c", 24, "tab:c", "", ["acc"], [Row("mean", "mean", entries={"acc": mean})])
    assert cross_table([t24, t25]) == {}
    # the same setting in two tables (the paper's own reuse) is no flag
    assert cross_table([t25, replace(t25, number=26)]) == {}


def test_lines_equal_over_shared_entries_do_not_chain():
    """A = B and B = C where B has one column: A and C differ in y, so no class holds
    all three, and the equal x entries are still said."""
    rows = [Row("a", "A", entries={"x": stat(1.0, 2.0, reads=["a"]),
                                   "y": stat(5.0, 6.0, reads=["a2"])}),
            Row("b", "B", entries={"x": stat(1.0, 2.0, reads=["b"])}),
            Row("c", "C", entries={"x": stat(1.0, 2.0, reads=["c"]),
                                   "y": stat(7.0, 9.0, reads=["c2"])})]
    flags = [(f.kind, f.where) for f in table_flags(_table(rows, ["x", "y"]))]
    assert ("identical rows", (("a", ""), ("b", ""))) in flags
    assert not any(k == "identical rows" and ("c", "") in w for k, w in flags)
    assert ("equal to the digit", (("a", "x"), ("b", "x"), ("c", "x"))) in flags


def test_degenerate_entries_are_one_flag_and_baseline_rows_are_never_flagged():
    dead = replace(stat(12.5, 12.5, reads=["a"]), degenerate="one class for all 4 items")
    rows = [Row("dfil", "DFIL", entries={"acc": dead}),
            Row("ft", "FT", entries={"acc": stat(30.0, 40.0, reads=["b"])}),
            Row("majority", "Majority class", baseline="majority",
                entries={"acc": stat(30.0, 40.0)}),
            Row("chance", "Chance", baseline="chance", entries={"acc": stat(30.0, 40.0)})]
    found = {f.kind: f.where for f in table_flags(_table(rows, ["acc"]))}
    # no "identical rows" for ft and the baselines: a test set's rows are not a run's
    assert found == {"zero variance": (("dfil", "acc"),), "degenerate": (("dfil", "acc"),)}
