"""A table's probe sets against the paper's sizes (pure).

A table that reads a probe set declares the paper's size of it (``probes: {<set>: n}``
in ``config/tables.yaml``, from the paper's section on its probe sets: compositional
900, CSMC 200 pairs, entailment 1,344 pairs, IPR 40, naturalistic 320). The grid's size
is what its runs predicted (the aggregate's ``pred.<set>.<path>.n``,
:mod:`dfil.contracts.predictions`); where it is smaller, the caption names both sizes,
so no number reads as measured on the paper's set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from dfil.contracts.predictions import FACTS, PATHS

#: A probe set predicted in two halves is sized by its first (``csmc_a``: its pairs).
HALVES = ("csmc", "entailment")
#: Probe sets made of equal domains (:mod:`dfil.data.probes`: CSMC 20 pairs in each of
#: 10, naturalistic 40 sentences in each of 8): a table per domain reads each domain's
#: share, which the note states beside the paper's.
DOMAINS = {"csmc": 10, "naturalistic": 8}


def _per_domain(name: str, n: int) -> str:
    """" (k per domain)" of ``n`` items of a set of equal domains ("about k" when they
    do not divide evenly); "" for any other set."""
    domains = DOMAINS.get(name)
    if domains is None:
        return ""
    about = "" if n % domains == 0 else "about "
    return f" ({about}{round(n / domains):g} per domain)"


def grid_sizes(name: str, keys: Iterable[str],
               lookup: Callable[[str, str], float | None]) -> list[int]:
    """The distinct sizes of probe set ``name`` the runs ``keys`` predicted, sorted
    (``lookup(key, metric)``: the aggregate's value, None when absent)."""
    at = f"{name}_a" if name in HALVES else name
    found = set()
    for key in keys:
        n = next((v for p in PATHS if (v := lookup(key, f"{FACTS}.{at}.{p}.n")) is not None),
                 None)
        if n is not None:
            found.add(int(n))
    return sorted(found)


def probe_note(paper: Mapping[str, int], keys: Iterable[str],
               lookup: Callable[[str, str], float | None]) -> str:
    """The caption's sentence naming each probe set of ``paper`` (set -> the paper's
    size) that the runs ``keys`` predicted on fewer items than the paper ("" when none
    did): "Probe sets smaller than the paper's: compositional 128 items here, 900 in the
    paper; csmc 50 pairs here (5 per domain), 200 in the paper (20 per domain)." (plain
    words and numbers: LaTeX as they are)."""
    keys = sorted(set(keys))
    parts = []
    for name, size in paper.items():
        sizes = grid_sizes(name, keys, lookup)
        if sizes and min(sizes) < size:
            here = "-".join(map(str, (sizes[0], sizes[-1]) if len(sizes) > 1 else sizes))
            unit = "pairs" if name in HALVES else "items"
            per = _per_domain(name, sizes[0]) if len(sizes) == 1 else ""
            parts.append(f"{name} {here} {unit} here{per}, {size:,} in the paper"
                         f"{_per_domain(name, size)}")
    return ("Probe sets smaller than the paper's: " + "; ".join(parts) + ".") if parts else ""
