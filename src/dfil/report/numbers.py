"""Every number a table prints, with the paper's beside it, its runs, the claims it
belongs to and its verdict (pure): the rows of ``numbers.csv`` (columns :data:`COLUMNS`,
contract ``dfil/contracts/numbers.schema.json``) and of the side-by-side HTML tables. A
number that is a claim's own value (a Δ the paper prints) carries that claim's verdict;
any other number is judged as a level (:func:`dfil.render.compare.judge`)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

import jsonschema

from dfil.render.compare import comparable, judge
from dfil.render.entries import Entry, Table
from dfil.render.fmt import parse_published
from dfil.render.names import Labels

COLUMNS = ["table", "row", "ran_as", "column", "value", "std", "n", "paper", "paper_std", "verdict",
           "basis", "claims", "runs", "seeds", "row_id", "column_id"]


def runs_of(entry: Entry) -> list[str]:
    """The run keys an entry's numbers come from, sorted."""
    return sorted({key for key, _ in entry.reads})


def seeds_of(keys: list[str]) -> list[int]:
    """The seeds of run keys (their last part, ``seed<N>``), sorted."""
    out = set()
    for k in keys:
        last = k.rstrip("/").split("/")[-1]
        if last.startswith("seed") and last[4:].isdigit():
            out.add(int(last[4:]))
    return sorted(out)


def ran_as(keys: list[str]) -> str:
    """What ran, from run keys (``task/backbone/.../seed<N>``): the backbones and the
    number of seeds, e.g. ``smollm2-135m, 3 seeds``."""
    backbones = sorted({k.split("/")[1] for k in keys if k.count("/") >= 1})
    n = len(seeds_of(keys))
    return f"{', '.join(backbones)}, {n} seed{'s' if n != 1 else ''}" if keys else ""


def _verdict(entry: Entry, paper: float | None, standin: str,
             claim: tuple[list[str], str | None]) -> tuple[str, str]:
    """(verdict, basis) of one number; ``claim``: the claims it belongs to and the
    verdict of the one it is the value of."""
    mean, _, values = entry.compared
    if mean is None:
        return "not run", entry.reason or "no run of this grid prints it"
    ids, own = claim
    if own is not None:
        return own, f"the verdict of claim {ids[0]} (claims.csv)"
    if paper is None:
        return "not comparable", "the paper prints no value here"
    v = judge(paper, entry.published, values, mean, comparable(entry.fmt, standin))
    return v.verdict, v.basis


def number_row(table: Table, row, col: str, names: Labels, standin: str,
               claims: dict | None = None) -> dict | None:
    """One number of ``table`` (None for an entry that is no number and no paper's);
    ``claims``: (table number, row, column) -> (claim ids, the verdict of the claim it is
    the value of), :func:`dfil.claims.numbers_claims`."""
    entry = row.entries.get(col)
    if entry is None or entry.kind not in ("stat", "value") and entry.published is None:
        return None
    mean, sd, _ = entry.compared
    paper, paper_sd = parse_published(entry.published)
    claim = (claims or {}).get((table.number, row.id, col), ([], None))
    verdict, basis = _verdict(entry, paper, standin, claim)
    keys = runs_of(entry)
    return {"table": f"T{table.number}", "row": names.rows.get(row.id, row.id),
            "ran_as": ran_as(keys), "column": names.columns.get(col, col), "value": mean, "std": sd,
            "n": entry.n, "paper": paper, "paper_std": paper_sd,
            "verdict": verdict, "basis": basis, "claims": " ".join(claim[0]),
            "runs": " ".join(keys),
            "seeds": " ".join(map(str, seeds_of(keys))), "row_id": row.id,
            "column_id": col}


@cache
def schema() -> dict:
    """The contract of a ``numbers.csv`` row (``dfil/contracts/numbers.schema.json``)."""
    return json.loads(resources.files("dfil.contracts").joinpath("numbers.schema.json")
                      .read_text())


def validate(rows: list[dict]) -> list[dict]:
    """``rows``, each checked against :func:`schema` (a bug if one is not)."""
    for row in rows:
        jsonschema.validate(row, schema())
    return rows


def table_numbers(table: Table, names: Labels, standin: str,
                  claims: dict | None = None) -> list[dict]:
    """Every number of one table, row by row (hidden rows and columns left out);
    ``claims``: as :func:`number_row` takes it."""
    out = []
    for row in table.rows:
        if row.hidden or row.kind != "body":
            continue
        for col in table.visible_columns:
            found = number_row(table, row, col, names, standin, claims)
            if found is not None and (found["value"] is not None or found["paper"] is not None):
                out.append(found)
    return validate(out)
