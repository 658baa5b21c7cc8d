"""dfil.render.entries: entries' statistics and the row operations, hand-computed."""

from __future__ import annotations

import pytest

from dfil.render.entries import Entry, Row, Table, dash_note, row_ops


def value(v: float | None) -> Entry:
    return Entry("value", value=v)


def table_of(rows: list[Row], columns=("x",)) -> Table:
    return Table("t", 1, "tab:t", "T", list(columns), rows)


def test_a_stat_entry_is_the_mean_and_sample_std_of_its_seeds():
    e = Entry("stat", values=(1.0, 2.0, 6.0), digits=1)
    assert e.mean == pytest.approx(3.0) and e.std == pytest.approx(2.6457513)
    assert e.n == 3 and Entry("value", value=None).n == 0


def test_row_ops_build_new_entries_and_leave_the_table_as_it_was():
    rows = [Row("a", "A", entries={"x": value(5.0)}),
            Row("b", "B", entries={"x": value(3.0)}),
            Row("c", "C", entries={"x": value(7.5)}),
            Row("d", "Δ", entries={"x": Entry("delta_rows", args=("c", "b"))}),
            Row("lo", "min", hidden=True,
                entries={"x": Entry("reduce", args=("min", ("a", "b", "d")))})]
    table = table_of(rows)
    out = row_ops(table)
    assert [r.entries["x"].kind for r in out] == ["value"] * 5
    assert out[3].entries["x"].value == pytest.approx(7.5 - 3.0)  # c minus b
    assert out[4].entries["x"].value == pytest.approx(3.0)  # min over a, b and the Δ row
    assert table.rows[3].entries["x"].kind == "delta_rows"  # the input is untouched
    assert table.rows[4].entries["x"].kind == "reduce"


def test_a_row_difference_takes_one_row_never_the_best_of_several():
    """Picking the side with the best test mean would select on the outcome: the spec
    refuses a list where one row goes."""
    from pydantic import ValidationError

    from dfil.render.table_spec import RowSpec

    assert RowSpec(id="d", rows=["c", "b"]).rows == ("c", "b")
    with pytest.raises(ValidationError):
        RowSpec(id="d", rows=[["a", "c"], "b"])


def test_a_row_difference_over_an_entry_the_layout_leaves_empty_says_so():
    """T3: fine-tune has no oracle entry (``cells: {oracle: null}``), so Δ vs fine-tune
    has none there either, as in the paper; a side without runs is another reason."""
    rows = [Row("ft", "FT", entries={"x": Entry("tex", tex=""), "y": value(None)}),
            Row("dfil", "DFIL", entries={"x": value(5.0), "y": value(2.0)}),
            Row("d", "Δ", entries={c: Entry("delta_rows", args=("dfil", "ft"))
                                   for c in ("x", "y")})]
    x, y = (row_ops(table_of(rows, ("x", "y")))[2].entries[c] for c in ("x", "y"))
    assert x.value is None and x.reason == \
        "a row it subtracts has no entry here (as in the paper)"
    assert y.value is None and y.reason == ""


def test_holm_adjusts_a_column_across_the_visible_rows():
    def row(rid: str, p: float | None, hidden=False) -> Row:
        return Row(rid, rid, hidden=hidden,
                   entries={"p": value(p), "h": Entry("holm", args=("p",), fmt="p")})

    out = row_ops(table_of([row("r1", 0.04), row("r2", 0.01), row("r3", None),
                            row("r4", 0.001, hidden=True)], columns=("p", "h")))
    # two tests (r3 has no p, r4 is hidden): 0.01 * 2 = 0.02; 0.04 * 1 = 0.04
    assert out[0].entries["h"].value == pytest.approx(0.04)
    assert out[1].entries["h"].value == pytest.approx(0.02)
    assert out[2].entries["h"].value is None and out[2].entries["h"].kind == "value"


def test_a_footnote_whose_mark_no_row_carries_is_dropped():
    from dfil.render.entries import used_footnotes

    note = r"$^\P$ bimodal. $^\dagger$ 4-bit. $^\#$ log-prob; GPT-4 not rerun."
    assert used_footnotes([note], r"PRESQUE$^\#$ Qwen") == [r"$^\#$ log-prob; GPT-4 not rerun."]
    assert used_footnotes([note], "nothing marked") == []
    assert used_footnotes(["Unmarked text."], "") == ["Unmarked text."]
    assert used_footnotes([r"$^\dagger$ a."], r"x$^\ddagger$") == []  # another mark


def test_a_dash_in_a_footnote_says_why_as_a_body_dash_does():
    """T3's paired-t footnote on a one-seed grid prints p=---: the dash note says why."""
    body = [Row("r", "R", entries={"x": Entry("value", value=None, reason="not run: λ")})]
    note = Entry("tex", tex="paired $t$: $p=$---", reason="a test needs two seeds a side")
    printed = Entry("tex", tex="paired $t$: $p=$0.01")
    assert dash_note(body, ["x"], [note, printed]) == \
        "— : a test needs two seeds a side; not run: λ."
    assert dash_note([], ["x"], [printed]) == ""


def test_an_entry_compared_with_the_paper_is_what_it_prints():
    e = Entry("stat", values=(1.0, 2.0, 6.0))
    assert e.compared[0] == pytest.approx(3.0) and e.compared[2] == (1.0, 2.0, 6.0)
    std = Entry("stat", values=(1.0, 2.0, 6.0), fmt="std")  # T26's std columns
    assert std.compared == (pytest.approx(2.6457513), None, ())
    assert Entry("value", value=0.5).compared == (0.5, None, ())


def test_a_dash_says_why():
    from dfil.render.entries import dash_reason

    one = Entry("stat", values=(1.0,), fmt="std", reads=frozenset({("k/seed1", "m")}))
    assert one.render() == "---" and dash_reason(one) == "a std needs two seeds"
    assert dash_reason(Entry("stat")) == "not run: the grid has no run of that setting"
    assert dash_reason(Entry("stat", reads=one.reads)) == "its runs lack the metric or failed"
    assert dash_reason(Entry("value", reason="a test needs two seeds a side")) == \
        "a test needs two seeds a side"
