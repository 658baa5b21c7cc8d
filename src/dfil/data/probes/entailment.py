"""Quantifier entailment (Sec. 5.3): 1,344 ordered pairs over 3 scenarios.

1,344 = 3 scenarios x 8 templates x 56 ordered pairs of distinct quantifiers (one of the
two factorisations that fit; note R-entailment). The gold label of "Q_i => Q_j" is the
scale order i < j, the relation the MF test reads off as c_{Q_i} <= c_{Q_j}; so that test
is exact by construction, and half of the pairs are positive (chance 50%). Each side is a
sentence whose stated proportion lies in its quantifier's QuRe cell: the classifier test
predicts both and checks pred_i <= pred_j against the gold label.
"""

from __future__ import annotations

import itertools

import numpy as np

from dfil.core.quantifiers import FROG_CLASSES
from dfil.data.probes.common import draw_in_cell

SCENARIOS = {
    "clinical": (
        ("patients", "reported nausea"), ("patients", "completed the regimen"),
        ("participants", "showed improvement"), ("volunteers", "withdrew early"),
        ("subjects", "had elevated markers"), ("patients", "needed a second dose"),
        ("participants", "reported fatigue"), ("patients", "were readmitted"),
    ),
    "election": (
        ("voters", "backed the measure"), ("precincts", "reported by midnight"),
        ("ballots", "were cast by mail"), ("districts", "flipped parties"),
        ("voters", "split their tickets"), ("counties", "requested recounts"),
        ("candidates", "were incumbents"), ("voters", "were first-time voters"),
    ),
    "manufacturing": (
        ("units", "passed inspection"), ("batches", "shipped on time"),
        ("machines", "needed recalibration"), ("parts", "were reworked"),
        ("orders", "were fulfilled"), ("panels", "showed defects"),
        ("lines", "met the quota"), ("welds", "failed the stress test"),
    ),
}


def _sentence(k: int, n: int, group: str, pred: str) -> str:
    return f"[MASK] of the {n} {group} {pred}, specifically {k} out of {n}."


def entailment_records(seed: int) -> list[dict]:
    """Every ordered pair of distinct classes x 8 templates x 3 scenarios."""
    rng = np.random.default_rng(seed)
    pairs = list(itertools.permutations(range(len(FROG_CLASSES)), 2))
    rows = []
    for scenario, templates in SCENARIOS.items():
        for t, (group, pred) in enumerate(templates):
            for qi, qj in pairs:
                ki, ni = draw_in_cell(rng, qi)
                kj, nj = draw_in_cell(rng, qj)
                rows.append({
                    "id": f"ent-{scenario}-{t}-{qi}{qj}",
                    "scenario": scenario, "template": t, "qi": qi, "qj": qj,
                    "qi_name": FROG_CLASSES[qi], "qj_name": FROG_CLASSES[qj],
                    "entails": qi < qj,
                    "p_i": ki / ni, "p_j": kj / nj,
                    "text_i": _sentence(ki, ni, group, pred),
                    "text_j": _sentence(kj, nj, group, pred),
                })
    return rows
