"""CSMC, Cross-Sentence Monotonic Consistency (App. F.2, Table csmc_domains): 200 pairs.

Twenty sentence pairs in each of ten domains, in natural templates (percentages, "k in n",
"k percent"; never FRoG's "k out of N"). Within a pair the two proportions differ by at
least ``min_gap``; a model is consistent on a pair when its predicted classes keep the
proportions' order (note R-csmc).
"""

from __future__ import annotations

import numpy as np

DOMAINS = {
    "public health": ("residents", "received the flu vaccine"),
    "education": ("pupils", "met the reading standard"),
    "environment": ("monitored rivers", "exceeded the nitrate limit"),
    "governance": ("council members", "declared outside income"),
    "election": ("registered voters", "cast a ballot"),
    "clinical trials": ("participants", "reported mild headaches"),
    "manufacturing": ("inspected units", "passed final inspection"),
    "research": ("surveyed labs", "shared their raw data"),
    "finance": ("loan applicants", "were approved"),
    "sports": ("penalty kicks", "were converted"),
}
_DENOMS = (5, 10, 20, 25, 50, 100)


def _expression(rng: np.random.Generator, k: int, n: int) -> str:
    pct = f"{100 * k / n:g}"
    forms = (f"{pct}%", f"{pct} percent", f"{k} in {n}")
    return forms[int(rng.integers(len(forms)))]


def _sentence(expr: str, group: str, pred: str) -> str:
    return f"{expr[0].upper()}{expr[1:]} of the {group} {pred}; that is, [MASK] of them."


def csmc_records(seed: int, per_domain: int = 20, min_gap: float = 0.1) -> list[dict]:
    """``per_domain`` ordered pairs per domain: p_a < p_b, p_b - p_a >= ``min_gap``."""
    rng = np.random.default_rng(seed)
    rows = []
    for domain, (group, pred) in DOMAINS.items():
        for i in range(per_domain):
            while True:
                draws = []
                for _ in range(2):
                    n = int(rng.choice(_DENOMS))
                    draws.append((int(rng.integers(0, n + 1)), n))
                (ka, na), (kb, nb) = sorted(draws, key=lambda d: d[0] / d[1])
                if kb / nb - ka / na >= min_gap:
                    break
            rows.append({
                "id": f"csmc-{domain.replace(' ', '_')}-{i:02d}",
                "domain": domain,
                "p_a": ka / na,
                "p_b": kb / nb,
                "text_a": _sentence(_expression(rng, ka, na), group, pred),
                "text_b": _sentence(_expression(rng, kb, nb), group, pred),
            })
    return rows
