"""A table's majority-class and chance rows (pure).

An accuracy table declares ``{id: majority, baseline: majority, like: <row>}`` and
``{id: chance, baseline: chance, like: <row>}`` among its rows: in each column whose
entry in row ``like`` is an accuracy (``<set>.<path>.acc``), the accuracy of always
predicting that test set's most frequent gold class, or of a uniform guess over the
task's classes, read from the aggregate's ``baseline.<set>.majority|chance`` of the runs
row ``like`` reads there (:mod:`dfil.contracts.predictions`; a property of the test set,
the same in every run of it, so its mean is printed). Any other column is empty.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dfil.contracts.predictions import BASELINE
from dfil.render.entries import Entry

#: Why a baseline has no run to read (as :func:`dfil.render.entries.dash_reason` says it).
NOT_RUN = "not run: the grid has no run of that setting"
#: The row kinds, as a reader sees them named in a note.
KINDS = {"majority": "always the test set's most frequent class",
         "chance": "a uniform guess over the classes"}


def baseline_metric(espec: Mapping, kind: str) -> str | None:
    """``baseline.<set>.<kind>`` for an entry spec ``espec`` printing the mean of an
    accuracy metric ``<set>.<path>.acc`` (``fmt`` ms or mean); None for any other."""
    parts = str(espec.get("metric") or "").split(".")
    if len(parts) != 3 or parts[2] != "acc" or espec.get("fmt", "ms") not in ("ms", "mean"):
        return None
    return f"{BASELINE}.{parts[0]}.{kind}"


def like_row(spec: Mapping, rspec: Mapping) -> Mapping:
    """The row spec a baseline row ``rspec`` reads its runs from (its ``like``)."""
    return next(r for r in spec.get("rows", []) if str(r.get("id")) == str(rspec["like"]))


def baseline_entry(values, digits: int, kind: str, ran: bool = True) -> Entry:
    """The printed baseline: the mean of ``values`` (one per run, all equal on one test
    set), or a dash saying why: the grid has no run there (``ran`` False: the words of
    any entry without runs), or its runs have no predictions."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        why = (f"{kind} row: no run with predictions to count the test set from" if ran
               else NOT_RUN)
        return Entry("value", value=None, fmt="mean", digits=digits, reason=why)
    return Entry("value", value=float(values.mean()), fmt="mean", digits=digits)
