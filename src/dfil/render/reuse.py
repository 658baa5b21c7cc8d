"""One run never fills two settings of one table (pure).

A grid's ``render:`` map may stand one of its runs in for a setting of the paper
(:mod:`dfil.render.source`): lambda 0.5 for 0.1, SmolLM2 for Qwen2.5-1.5B, no variant for
batch 64. Two entries of one table whose paper settings differ may then resolve to the
same runs: Table 16's lambda 0.1 and 0.5 columns, Table 6's 1.5B and 7B columns. Printed
twice, one run would read as two results. :func:`reused` finds such entries: within a
group of entries reading the same runs (any metric of them), the entry whose
setting the grid really ran (the fewest substitutions, contained in every other's) keeps
the runs; where every entry is a stand-in, the first in table order does. Every other
entry is *not run*, with the reason (:func:`reason`). The paper's own reuse of a run in
another table stays (an entry that refers to another table reads many cells).

A seed set is no setting: the seeds an entry is averaged over replicate its setting
(T24's per-seed rows and their mean, T3's 20-seed and 3-seed blocks on a one-seed grid
show the same runs and say so in the caption's *Ran as*), so seed-set substitutions
never tell two settings apart (:func:`setting`).
"""

from __future__ import annotations

from dfil.render.entries import Entry, Row
from dfil.render.source import Read, Substitution

#: How a substituted coordinate reads in a reason, by render map.
_NAMES = {"lambdas": "λ={}", "variants": "variant {}"}


def _single_cell(reads: frozenset[Read]) -> bool:
    """Whether ``reads`` are one metric of one grid cell (its seeds' runs)."""
    cells = {(key.rsplit("/seed", 1)[0], metric) for key, metric in reads}
    return len(cells) == 1


def setting(entry: Entry) -> frozenset[Substitution]:
    """The substitutions that tell ``entry``'s paper setting: all but seed sets."""
    return frozenset(s for s in entry.substituted if s[0] != "seed_sets")


def _name(kind: str, value: str) -> str:
    return _NAMES.get(kind, "{}").format(value)


def reason(kept: frozenset[Substitution], marked: frozenset[Substitution]) -> str:
    """Why an entry with substitutions ``marked`` is not run when one with ``kept`` shows
    the same runs: ``the grid ran λ=0.5 only; λ=0.1 would reuse that run``."""
    parts = []
    for kind, old, new in sorted(marked - kept):
        shown = [o for k, o, n in kept if k == kind and n == new]
        ran = _name(kind, new) + (f" (shown as {_name(kind, shown[0])})" if shown else "")
        parts.append(f"the grid ran {ran} only; {_name(kind, old)} would reuse that run")
    return "; ".join(parts) or "the same runs as another entry of this table"


def reused(rows: list[Row]) -> dict[tuple[str, str], str]:
    """(row id, column) -> why it is not run, for every entry of ``rows`` that would
    print the runs another entry of the same table prints for a different paper
    setting."""
    groups: dict[frozenset, list[tuple[tuple[str, str], Entry]]] = {}
    for row in rows:
        if row.kind != "body":
            continue
        for col, entry in row.entries.items():
            if entry.kind == "stat" and entry.reads and _single_cell(entry.reads):
                runs = frozenset(key for key, _ in entry.reads)  # any metric of them
                groups.setdefault(runs, []).append(((row.id, col), entry))
    out = {}
    for members in groups.values():
        settings = [setting(e) for _, e in members]
        if len(set(settings)) < 2:
            continue
        kept = next((s for s in settings if all(s <= o for o in settings)), settings[0])
        for (at, _), mine in zip(members, settings, strict=True):
            if mine != kept:
                out[at] = reason(kept, mine)
    return out


def not_run(entry: Entry, why: str) -> Entry:
    """``entry`` emptied: no values, no runs, ``why`` as its reason."""
    return Entry("stat", fmt=entry.fmt, digits=entry.digits, published=entry.published,
                 reason=f"not run: {why}")
