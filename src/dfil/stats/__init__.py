"""The paper's statistics (pure: numpy, scipy, statsmodels; no torch).

Tests on per-seed samples (:mod:`.samples`: describe, Welch, paired t, Wilcoxon, Cohen's
d_z, binomial, TOST, Holm) and the same tests from summary statistics with the range of p
that printed rounding allows (:mod:`.summary`, used by the paper audit). Both are
re-exported here: ``from dfil import stats; stats.welch(a, b)``.
"""

from dfil.stats.samples import (
    Described,
    TestResult,
    Tost,
    binomial,
    cohens_dz,
    describe,
    holm,
    paired_t,
    tost,
    welch,
    wilcoxon,
)
from dfil.stats.summary import (
    Interval,
    PvalueRange,
    SummaryBox,
    paired_from_dz,
    paired_sd_for_p,
    rounding_interval,
    student_from_stats,
    ttest_pvalue_range,
    welch_from_stats,
    wilcoxon_sign_pvalues,
)

__all__ = [
    "Described", "Interval", "PvalueRange", "SummaryBox", "TestResult", "Tost", "binomial",
    "cohens_dz", "describe", "holm", "paired_from_dz", "paired_sd_for_p", "paired_t",
    "rounding_interval", "student_from_stats", "tost", "ttest_pvalue_range", "welch",
    "welch_from_stats", "wilcoxon", "wilcoxon_sign_pvalues",
]
