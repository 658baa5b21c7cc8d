"""The paper's claims and the verdict on each (pure: numpy, scipy, statsmodels).

A claim is declared once, before any run is read (:mod:`.declare`: its words, every place
the paper prints it, the entries on each side and its test); its one test is run on the
seeds (:mod:`.evidence`: two-sided Welch, paired or one-sample t for a direction, TOST
for a parity; power and the minimum detectable effect are :mod:`dfil.stats.power`'s);
runs that are no evidence (a side predicting one class, or at or below its set's chance
or majority-class rate, or paired sides whose per-seed differences are all equal:
:mod:`.degenerate`) make a claim not comparable; a claim that holds by the method's
definition is reported as such and never tested (:mod:`.construction`); the verdict
follows from its one p, Holm-adjusted once within the claim's family, and the
estimate's side (:mod:`.verdict`); :mod:`.judge` makes the rows of ``claims.csv`` that
every page and file of the report reads; positive controls (:mod:`.controls`) say
whether a claim's effect could appear on the grid that ran.
"""

from dfil.claims.controls import (
    CONTROL_COLUMNS,
    CONTROL_FAMILIES,
    control_result,
    with_controls,
)
from dfil.claims.declare import TOL, Claim, Declared, declare, merge
from dfil.claims.judge import COLUMNS, judge, numbers_claims, with_power
from dfil.claims.verdict import ALPHA, FAMILIES, NOT_PLANNED, STANDIN, VERDICTS, verdict_counts

__all__ = ["ALPHA", "COLUMNS", "CONTROL_COLUMNS", "CONTROL_FAMILIES", "control_result",
           "with_controls", "FAMILIES", "NOT_PLANNED", "STANDIN", "TOL", "VERDICTS", "Claim",
           "Declared", "declare", "judge", "merge", "numbers_claims", "verdict_counts",
           "with_power"]
