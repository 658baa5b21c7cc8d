"""The directions of the paper's effects, per table (pure; note R-direction).

Every published signed entry (a Δ column or row) and every contrast a table declares under
``effects:`` in ``config/tables.yaml`` (entry a minus entry b), each with the sign the paper
printed and the sign reproduced. A difference smaller than ``tol`` (default :data:`TOL`,
in the table's units) counts as no effect ("0"), so the paper's parities (Δ = -0.1) are
reproduced only by another parity. The diff report (:mod:`dfil.render.diff`) shows them
beside the within-spread verdict.
"""

from __future__ import annotations

import math

from dfil.render.entries import Table
from dfil.render.names import table_labels

#: Differences below this (percentage points in most tables) have no direction.
TOL = 0.5
DIRECTION_COLUMNS = ["table", "effect", "paper", "reproduced", "paper_dir", "reproduced_dir",
                     "same_direction"]
VERDICTS = ("yes", "no", "n/a", "not run")


def direction(x: float | None, tol: float = TOL) -> str | None:
    """"+", "-" or "0" (``|x| < tol``); None for a missing value."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return "0" if abs(x) < tol else "+" if x > 0 else "-"


def _reproduced(table: Table, row: str, col: str) -> float | None:
    """The reproduced mean of an entry; None where its row has no runs in this grid."""
    entry = table.entry(row, col)
    return None if entry is None else entry.mean


def _effect_values(table: Table, effect: dict) -> tuple[float | None, float | None]:
    """(published, reproduced) difference of an effect's cells, a minus b."""
    pub, rep = [], []
    for side in ("a", "b"):
        row, col = str(effect[side]).split("/")
        pub.append(table.published.get((row, col)))
        rep.append(_reproduced(table, row, col))
    return (None if None in pub else pub[0] - pub[1],
            None if None in rep else rep[0] - rep[1])


def direction_rows(tables: list[Table]) -> list[dict]:
    """One dict per effect of ``tables`` (keys: :data:`DIRECTION_COLUMNS`): the paper's
    signed cells and each table's declared ``effects``."""
    names = table_labels(tables)
    out = []
    for t in tables:
        name = f"T{t.number} {t.name}"
        found = []
        for row, col in t.signed:
            found.append((names[t.name].name(row, col), t.published[(row, col)],
                          _reproduced(t, row, col), TOL))
        for e in t.effects:
            pub, rep = _effect_values(t, e)
            found.append((e["label"], pub, rep, float(e.get("tol", TOL))))
        for label, pub, rep, tol in found:
            pd, rd = direction(pub, tol), direction(rep, tol)
            same = "not run" if rd is None else "n/a" if pd is None else (
                "yes" if pd == rd else "no")
            out.append({"table": name, "effect": label, "paper": pub, "reproduced": rep,
                        "paper_dir": pd, "reproduced_dir": rd, "same_direction": same})
    return out


def counts(rows: list[dict], key: str) -> dict[str, int]:
    """How many of ``rows`` have each verdict (:data:`VERDICTS`) under ``key``."""
    out = {k: 0 for k in VERDICTS}
    for r in rows:
        out[r[key]] += 1
    return out


def direction_summary(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Per table: how many effects keep the paper's direction (yes / no / n/a / not run)."""
    tables: dict[str, list[dict]] = {}
    for r in rows:
        tables.setdefault(r["table"], []).append(r)
    return {t: counts(rs, "same_direction") for t, rs in tables.items()}


def direction_line(directions: list[dict]) -> str:
    """The one-line summary of every effect's verdict."""
    c = counts(directions, "same_direction")
    return (f"{len(directions)} effects the paper reports (signed cells and declared "
            f"contrasts): {c['yes']} in the paper's direction, {c['no']} not, "
            f"{c['n/a']} without a published direction, {c['not run']} not run in this grid.")


def per_table(directions: list[dict]) -> list[tuple[str, str]]:
    """(table, "k of m in the paper's direction ...") for every table with an effect."""
    out = []
    for table, c in direction_summary(directions).items():
        ran = c["yes"] + c["no"]
        text = f"{c['yes']} of {ran} in the paper's direction" if ran else "not run"
        if ran and c["not run"]:
            text += f" ({c['not run']} more not run)"
        out.append((table, text))
    return out
