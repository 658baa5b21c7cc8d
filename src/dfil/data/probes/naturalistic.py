"""Naturalistic compositional sentences (Sec. 5.3, Table naturalistic): 8 domains x 40.

Two-step compositions in domain wording ("k of the N enrolled patients responded, and
most of the responders relapsed"); gold = the composed proportion c_Q1 p_base bucketed by
the fixed QuRe centers. Templates, depth and sampling are ours (note R-naturalistic).
"""

from __future__ import annotations

import numpy as np

from dfil.core.quantifiers import QURE_CENTERS
from dfil.data.probes.common import SURFACE, draw_fraction, label_fields, quantifier

#: domain -> (population, first event, its holders, second event)
DOMAINS = {
    "clinical trials": ("enrolled patients", "responded to treatment", "responders",
                        "relapsed within a year"),
    "education": ("applicants", "were admitted", "admitted students", "graduated with honours"),
    "manufacturing": ("produced chips", "passed the first test", "passing chips",
                      "failed the burn-in test"),
    "elections": ("registered voters", "voted early", "early voters",
                  "chose the challenger"),
    "environmental science": ("sampled wells", "showed contamination",
                              "contaminated wells", "exceeded the arsenic limit"),
    "corporate governance": ("listed firms", "filed a climate report", "filing firms",
                             "had it independently audited"),
    "sports": ("league matches", "went to extra time", "extra-time matches",
               "were decided on penalties"),
    "urban planning": ("city blocks", "were rezoned", "rezoned blocks",
                       "gained affordable housing"),
}
OUTER = ("few", "some", "moderate", "most", "all")


def naturalistic_records(seed: int, per_domain: int = 40,
                         base_range=(0.1, 0.95)) -> list[dict]:
    """``per_domain`` two-step sentences per domain; outer quantifiers cycle over OUTER."""
    rng = np.random.default_rng(seed)
    rows = []
    for domain, (population, first, holders, second) in DOMAINS.items():
        for i in range(per_domain):
            q1 = OUTER[i % len(OUTER)]
            k, n = draw_fraction(rng, *base_range)
            p_comp = QURE_CENTERS[quantifier(q1)] * k / n
            text = (f"Of the {n} {population}, {k} {first}, and {SURFACE[q1]} of the "
                    f"{holders} {second}. So [MASK] of the {n} {population} {second}.")
            rows.append({"id": f"nat-{domain.replace(' ', '_')}-{i:02d}", "domain": domain,
                         "outer": [quantifier(q1)], "q1": q1, "k": k, "n": n,
                         "p_base": k / n, "p_comp_qure": p_comp,
                         **label_fields("qure_", p_comp), "text": text})
    return rows
