"""Degenerate evidence, found from the runs' predictions and never counted (pure).

Four findings mark a table entry's runs:

- a run that predicts **one class for every item** of the set its metric is measured on
  (its ``pred.<set>.<path>.classes`` is 1);
- runs whose predictions are **identical across seeds** (two or more runs, one
  ``pred.<set>.<path>.digest``): the seeds replicate nothing;
- **zero variance across seeds** of a measured metric (two or more values, all equal);
- a mean **at chance**: an accuracy at or below its set's chance rate (1 / classes) or,
  measured on the whole set against its gold labels, its majority-class rate (the
  aggregate's ``baseline.<set>.{majority,chance}``, :func:`chance_rates`).

One class and at chance void every comparison an entry enters; identical predictions
and zero variance are facts about one side's spread, and a difference is judged on its
own (:func:`dfil.render.voiding.sides_degenerate`, the one rule for a table's Δ and a
claim).

The per-run facts are the aggregate's (:mod:`dfil.contracts.predictions`); a metric
names the set and path it was measured on (:func:`measured_on`). A metric not measured
on predictions (the learned centers, parameter counts, an oracle that reads true
proportions) is never degenerate by these rules. :func:`check` is what the tables'
source calls for each entry (:class:`dfil.render.source.Source`'s ``check``); an entry
with a reason is marked in its table and makes every claim resting on it *not comparable*.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from dfil.contracts.predictions import BASELINE, BEST, FACTS, PATHS
from dfil.render.voiding import AT_CHANCE, ONE_CLASS

#: Probe sets predicted in two halves (``<set>_a``, ``<set>_b``).
PAIRED_SETS = ("csmc", "entailment")
#: Metrics under these second parts read true proportions or centers, not predictions.
NOT_PREDICTED = ("oracle", "mf_centers")
#: The sets of ``predictions.parquet`` a metric's first part may name.
SETS = ("test", "qure", "compositional", "csmc", "entailment", "ipr", "naturalistic")

Lookup = Callable[[str, str], "float | None"]


def measured_on(metric: str) -> list[tuple[str, str]]:
    """The (set, path) pairs of ``predictions.parquet`` whose labels ``metric`` is
    measured on: ``test.mf.acc`` -> [(test, mf)]; ``csmc.main.consistency`` -> [(csmc_a,
    main), (csmc_b, main)]; ``entailment.labels_mf`` -> both halves' mf; a probe metric
    without a path (``compositional.from_text.3``) -> the main path; [] for a metric
    measured on no predictions."""
    parts = metric.split(".")
    if parts[0] not in SETS or len(parts) < 2 or parts[1] in NOT_PREDICTED:
        return []
    second = parts[1].removeprefix("labels_")
    path = second if second in (*PATHS, BEST) else "main"
    sets = ([f"{parts[0]}_a", f"{parts[0]}_b"] if parts[0] in PAIRED_SETS else [parts[0]])
    return [(s, path) for s in sets]


def _runs(reads: Iterable[tuple[str, str]], lookup: Lookup) -> dict[tuple, list]:
    """Per (set, path): each run's (key, n, classes, digest), runs without facts left
    out."""
    out: dict[tuple, list] = {}
    for key, metric in sorted(reads):
        for name, path in measured_on(metric):
            at = f"{FACTS}.{name}.{path}"
            facts = [lookup(key, f"{at}.{f}") for f in ("n", "classes", "digest")]
            if None not in facts:
                runs = out.setdefault((name, path), [])
                if key not in [r[0] for r in runs]:
                    runs.append((key, *facts))
    return out


def _items(ns: Sequence[float]) -> str:
    lo, hi = int(min(ns)), int(max(ns))
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


def one_class(runs: Sequence[tuple]) -> str:
    """"one class for all N items in k of m runs" when k >= 1 of ``runs`` ((key, n,
    classes, digest) each) predict one class; "" otherwise."""
    flat = [r for r in runs if r[2] == 1]
    if not flat:
        return ""
    return f"{ONE_CLASS} {_items([r[1] for r in flat])} items in {len(flat)} of " \
           f"{len(runs)} run{'s' * (len(runs) != 1)}"


def identical(runs: Sequence[tuple]) -> str:
    """"identical predictions on all N items across m seeds" when two or more ``runs``
    share one digest; "" otherwise."""
    if len(runs) < 2 or len({r[3] for r in runs}) != 1:
        return ""
    return f"identical predictions on all {_items([r[1] for r in runs])} items across " \
           f"{len(runs)} seeds"


def zero_variance(values: Sequence[float]) -> str:
    """"zero variance across m seeds (every seed x)" for two or more equal ``values``."""
    if len(values) < 2 or np.ptp(np.asarray(values, dtype=float)) != 0:
        return ""
    return f"zero variance across {len(values)} seeds (every seed {values[0]:.4g})"


def check(values: Sequence[float], reads: Iterable[tuple[str, str]], lookup: Lookup) -> str:
    """Why an entry whose seeds gave ``values`` from ``reads`` ((run key, metric)
    pairs) is degenerate evidence, "" when it is not; ``lookup(key, metric)`` answers
    the aggregate's value (None: none). Only metrics measured on predictions are
    checked, zero variance included."""
    runs = _runs(reads, lookup)
    found = []
    for (name, path), these in runs.items():
        where = f" ({name}, {path} path)" if len(runs) > 1 else ""
        found += [w + where for w in (one_class(these), identical(these)) if w]
    if runs and not found:
        found.append(zero_variance(values))
    found.append(at_chance(reads, lookup))
    return "; ".join(w for w in dict.fromkeys(found) if w)


def chance_rates(metric: str) -> tuple[str, tuple[str, ...]] | None:
    """(set, baseline kinds) an accuracy ``metric`` is compared with, None for a metric
    that is no accuracy against a set's gold labels. Chance (a uniform guess) holds on
    any subset of items; the majority-class rate only on the whole set scored against
    the gold labels its baseline counts: ``test.main.acc`` -> (test, (majority, chance));
    ``compositional.from_text.self.all`` (its own labels) -> (compositional, (chance,));
    ``ipr.text.linguistic.exact`` (a category) -> (ipr, (chance,))."""
    parts = metric.split(".")
    whole = ("majority", "chance")
    if len(parts) == 3 and parts[0] in ("test", "qure") and parts[2] == "acc":
        return parts[0], whole
    if len(parts) == 4 and parts[0] == "compositional" and parts[1] in ("from_text",
                                                                        "text_only"):
        return parts[0], whole if parts[2:] == ["qure", "all"] else ("chance",)
    if len(parts) == 2 and parts[0] == "naturalistic" and parts[1] in ("from_text",
                                                                       "text_only"):
        return parts[0], whole
    if parts[0] == "ipr" and len(parts) in (3, 4) and parts[1] in ("text", "main") \
            and parts[-1] == "exact":
        return parts[0], whole if len(parts) == 3 else ("chance",)
    return None


def at_chance(reads: Iterable[tuple[str, str]], lookup: Lookup) -> str:
    """"at chance: mean m% ≤ chance c% on the <set> set" (or the majority class's rate)
    when the runs of ``reads`` that have both the metric and its baselines average at or
    below the highest rate :func:`chance_rates` names; "" otherwise (a metric that is no
    accuracy, or runs without predictions to count the set from)."""
    by_metric: dict[str, list[str]] = {}
    for key, metric in sorted(reads):
        by_metric.setdefault(metric, []).append(key)
    found = []
    for metric, keys in by_metric.items():
        rates = chance_rates(metric)
        if rates is None:
            continue
        name, kinds = rates
        values = [lookup(k, metric) for k in keys]
        base = {kind: [lookup(k, f"{BASELINE}.{name}.{kind}") for k in keys] for kind in kinds}
        ok = [i for i, v in enumerate(values)
              if v is not None and all(base[kind][i] is not None for kind in kinds)]
        if not ok:
            continue
        mean = float(np.mean([values[i] for i in ok]))
        rate, kind = max((float(np.mean([base[kind][i] for i in ok])), kind)
                         for kind in kinds)
        if mean <= rate + 1e-12:
            words = "chance" if kind == "chance" else "majority-class rate"
            found.append(f"{AT_CHANCE}: mean {100 * mean:.3g}% ≤ {words} "
                         f"{100 * rate:.3g}% on the {name} set")
    return "; ".join(found)


def no_evidence(why: str) -> str:
    """A claim's reason when its sides are no evidence (``why``:
    :func:`dfil.render.voiding.sides_degenerate`'s words): "at chance (...)" when every
    finding is a side at chance, "degenerate (...)" otherwise."""
    parts = why.split("; ")
    if all(re.sub(r"^[ab]: ", "", p).startswith(AT_CHANCE) for p in parts):
        return f"{AT_CHANCE} ({why.replace(AT_CHANCE + ': ', '')})"
    return f"degenerate ({why})"

