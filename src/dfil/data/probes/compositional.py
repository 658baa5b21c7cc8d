"""Compositional test set (Sec. 5.2, App. F.5): 600 two-step + 300 three-step examples.

"Q1 of Q2": the base clause states p_base as "k out of N" and names it with Q_last; each
outer quantifier shrinks it, p_comp = c_Q1 (c_Q2) p_base. The text ends in a [MASK] slot
for the composed quantity. The paper lists neither the 3 excluded pairs nor the 6 triples
(notes R-comp-pairs, R-comp-triples, R-comp-base).
"""

from __future__ import annotations

import itertools

import numpy as np

from dfil.core.quantifiers import QURE_CENTERS
from dfil.data.probes.common import (
    SURFACE,
    draw_fraction,
    draw_in_cell,
    label_fields,
    quantifier,
)

Q1_CHOICES = ("few", "some", "moderate", "most", "all")
Q2_CHOICES = ("few", "most", "all")
#: "all of X" is X itself: the trivially degenerate pairs (note R-comp-pairs).
EXCLUDED_PAIRS = (("all", "few"), ("all", "most"), ("all", "all"))
#: Six of the 27 triples over {few, most, all}, with no identity "all of" step outside,
#: including the paper's "most of most of most" and "few of most of most".
TRIPLES = (
    ("most", "most", "most"), ("few", "most", "most"), ("most", "most", "all"),
    ("few", "most", "all"), ("most", "few", "most"), ("most", "few", "all"),
)
_SCENES = (
    ("students", "passed the exam", "made the honour roll"),
    ("employees", "completed the training", "earned a certificate"),
    ("patients", "responded to the drug", "stayed in remission"),
    ("voters", "turned out", "backed the incumbent"),
    ("farms", "adopted drip irrigation", "raised their yields"),
    ("startups", "raised seed funding", "reached profitability"),
)


def _text(chain: tuple[str, ...], k: int, n: int, scene) -> str:
    group, first, *_ = scene
    base_q = SURFACE[chain[-1]]
    parts = [f"{base_q.capitalize()} of the {n} {group} {first}, specifically {k} out of {n}."]
    preds = [scene[2], "did so within a year"]
    for depth, outer in enumerate(reversed(chain[:-1])):
        parts.append(f"{SURFACE[outer].capitalize()} of those {preds[depth]}.")
    target = " and ".join([first] + preds[: len(chain) - 1])
    parts.append(f"So [MASK] of the {n} {group} {target}.")
    return " ".join(parts)


def compositional_records(seed: int, per_combo: int = 50,
                          excluded_pairs=EXCLUDED_PAIRS, triples=TRIPLES,
                          base_range=(0.1, 0.95), base_in_cell: bool = True) -> list[dict]:
    """Level 1 (pairs) and level 2 (triples), ``per_combo`` examples each.

    ``base_in_cell`` draws p_base ~ U[base_range] inside the QuRe cell of the base
    quantifier, so the text's "k out of N" agrees with the quantifier that names it.
    """
    pairs = [c for c in itertools.product(Q1_CHOICES, Q2_CHOICES)
             if c not in set(map(tuple, excluded_pairs))]
    rng = np.random.default_rng(seed)
    rows = []
    for level, chains in ((1, pairs), (2, [tuple(t) for t in triples])):
        for chain in chains:
            base_q = quantifier(chain[-1])
            outer = [quantifier(q) for q in chain[:-1]]
            factor = float(np.prod([QURE_CENTERS[o] for o in outer]))
            for _ in range(per_combo):
                k, n = (draw_in_cell(rng, base_q, *base_range) if base_in_cell
                        else draw_fraction(rng, *base_range))
                scene = _SCENES[int(rng.integers(len(_SCENES)))]
                p_base = k / n
                rows.append({
                    "id": f"comp-L{level}-{'-'.join(chain)}-{len(rows):04d}",
                    "level": level,
                    "depth": len(chain),
                    "chain": list(chain),
                    "outer": outer,
                    "base_quantifier": chain[-1],
                    "k": k,
                    "n": n,
                    "p_base": p_base,
                    "p_comp_qure": factor * p_base,
                    **label_fields("qure_", factor * p_base),
                    "text": _text(chain, k, n, scene),
                })
    return rows
