"""Which claims a budget plans: an exact 0-1 integer program (pure: numpy, scipy).

Variables: x_c = 1 when claim c is planned, y_k = 1 when run k is in the plan. A claim
needs every run it reads (x_c <= y_k), so a run several claims share is paid for once;
the runs' GPU-hours sum to at most the budget. The objective, lexicographic by its
weights, maximises the number of claims planned, then the headline claims among them,
then spends the least: W * sum x_c + sum_{headline} x_c - eps * sum cost_k y_k, with W
above the number of headline claims and eps * (total cost) below 1. Solved to optimality
by HiGHS' branch and cut through :func:`scipy.optimize.milp` (Huangfu and Hall, 2018);
with ~70 claims and a few thousand runs it takes well under a second. The optimum's
count never falls as the budget grows (a larger budget keeps every smaller plan
feasible).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import lil_matrix


@dataclass(frozen=True)
class Option:
    """A claim a plan may take: its id, the runs it needs, whether it is a headline
    claim."""

    claim: str
    runs: frozenset[str]
    headline: bool = False


def choose(options: Sequence[Option], hours: Mapping[str, float],
           budget: float) -> frozenset[str]:
    """The claims of the best plan within ``budget`` GPU-hours (``hours``: each run's),
    by the program of the module doc. ``ValueError`` for a negative budget."""
    if budget < 0:
        raise ValueError(f"a budget is a non-negative number of GPU-hours, got {budget}")
    options = [o for o in options if sum(hours[k] for k in o.runs) <= budget]
    if not options:
        return frozenset()
    runs = sorted(set().union(*(o.runs for o in options)))
    index = {k: len(options) + i for i, k in enumerate(runs)}
    cost = np.array([hours[k] for k in runs], dtype=float)
    weight = sum(o.headline for o in options) + 1.0
    eps = 0.5 / max(cost.sum(), 1e-9)
    c = np.concatenate([[-(weight + o.headline) for o in options], eps * cost])
    links = sum(len(o.runs) for o in options)
    a = lil_matrix((links + 1, c.size))
    row = 0
    for i, o in enumerate(options):
        for k in o.runs:  # x_c - y_k <= 0
            a[row, i], a[row, index[k]] = 1.0, -1.0
            row += 1
    a[links, len(options):] = cost
    upper = np.r_[np.zeros(links), budget]
    res = milp(c, constraints=LinearConstraint(a.tocsr(), -np.inf, upper),
               integrality=np.ones(c.size), bounds=Bounds(0, 1))
    if res.x is None:
        raise RuntimeError(f"the plan's integer program found no solution: {res.message}")
    chosen = [o for i, o in enumerate(options) if res.x[i] > 0.5]
    # the solver's tolerance must never buy a plan over the budget
    spent = sum(hours[k] for k in set().union(*(o.runs for o in chosen))) if chosen else 0.0
    if spent > budget + 1e-9:
        raise RuntimeError(f"the plan's integer program exceeded the budget ({spent} > "
                           f"{budget})")
    return frozenset(o.claim for o in chosen)
