"""One run never fills two settings of one table (pure).

A grid's ``render:`` map may stand one of its runs in for a setting of the paper (the
stand-in backbone for Qwen2.5-7B, the λ 0.5 run for λ 0.1). Within one table, two entries
whose paper settings differ must then not print the same runs: T16's λ 0.1 and λ 0.5
columns would both show the one λ 0.5 run, T6's 1.5B and 7B columns would be identical,
and the diff would compare one run against two different published numbers.

An entry's setting is told by the substitutions that named its runs: entries reading the
same runs through the same substitutions are one setting (say, two metrics of it);
through different ones, different settings. Of the settings that share runs, the one the
grid ran with the fewest substitutions keeps them (the setting it really ran, if any; on
a tie, the first in table order); every other becomes *not run*, with the reason, and
reads nothing. An entry that combines runs (a test, a ratio, a difference) and reads a
voided setting's runs through its substitutions is voided with it. Entries copied from
another table (``ref``) keep that table's verdict, and the paper's own reuse of a run
across tables stays.
"""

from __future__ import annotations

from dataclasses import replace

from dfil.render.entries import Entry, Row
from dfil.render.source import Substitution

#: How a substitution's map is named in a reason (ASCII: notes go into LaTeX too).
_MAPS = {"backbones": "backbone", "lambdas": "lambda", "variants": "variant",
         "tasks": "task"}


def _setting_of(entry: Entry) -> frozenset[Substitution]:
    """The substitutions that tell an entry's setting. Seed sets are left out: the seeds
    a setting is averaged over are replications of it, not another setting."""
    return frozenset(s for s in entry.substituted if s[0] != "seed_sets")


def _runs(entry: Entry) -> frozenset[str]:
    return frozenset(key for key, _ in entry.reads)


def _reason(subs: frozenset[Substitution], keeper: frozenset[Substitution]) -> str:
    """Why the setting named through ``subs`` is not run, its runs kept by ``keeper``'s."""
    kept = {kind: paper for kind, paper, _ in keeper}
    name = _MAPS.get
    parts = [f"{name(kind, kind)} {paper} (its stand-in, the {name(kind, kind)} {grid} run, "
             f"already fills this table's {name(kind, kind)} {kept.get(kind, grid)} entries)"
             for kind, paper, grid in sorted(subs - keeper)]
    return "not run on this grid: " + "; ".join(parts)


def voided_settings(rows: list[Row]) -> dict[tuple[frozenset, frozenset], str]:
    """(runs, setting) of each setting that must not print its runs -> why. Of the
    settings sharing runs, the one with the fewest substitutions keeps them, then the one
    filling the most entries of the table, then the first in table order: one order for
    the whole table, so a column is kept or voided whole."""
    groups: dict[frozenset, list[frozenset]] = {}  # runs -> settings, in table order
    filled: dict[frozenset, int] = {}  # setting -> entries of the table it fills
    for row in rows:
        for e in row.entries.values():
            if e.kind == "stat" and e.reads:
                runs, subs = _runs(e), _setting_of(e)
                if subs not in groups.setdefault(runs, []):
                    groups[runs].append(subs)
                filled[subs] = filled.get(subs, 0) + 1
    order = {subs: i for i, subs in enumerate(filled)}
    rank = {subs: (len(subs), -n, order[subs]) for subs, n in filled.items()}
    out = {}
    for runs, settings in groups.items():
        keeper = min(settings, key=rank.get)
        out.update({(runs, subs): _reason(subs, keeper) for subs in settings if subs != keeper})
    return out


def one_run_one_setting(rows: list[Row]) -> tuple[list[Row], list[str]]:
    """``rows`` with every entry of a voided setting (:func:`voided_settings`) made *not
    run* (no value, no reads, the reason in ``not_run``), and the reasons, once each."""
    voided = voided_settings(rows)
    if not voided:
        return rows, []
    reasons: list[str] = []
    out = []
    for row in rows:
        entries = {}
        for col, e in row.entries.items():
            why = voided.get((_runs(e), _setting_of(e))) if e.kind == "stat" else next(
                (r for (runs, subs), r in voided.items()
                 if e.reads and _runs(e) & runs and subs <= _setting_of(e)), None)
            if why is None or e.kind not in ("stat", "value", "tex"):
                entries[col] = e
                continue
            entries[col] = replace(e, kind="value", values=(), value=None, tex="",
                                   reads=frozenset(), substituted=frozenset(), not_run=why)
            if why not in reasons:
                reasons.append(why)
        out.append(replace(row, entries=entries))
    return out, reasons
