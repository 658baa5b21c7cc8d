"""The paper's statistics (pure: numpy, scipy, statsmodels; no torch).

Tests on per-seed samples (:mod:`.samples`: describe, Welch, paired t, Wilcoxon, Cohen's
d_z, binomial, TOST, shifted t), Holm's adjustment within families and the
Bonferroni-bounded level a plan uses (:mod:`.multiplicity`), the power, minimum
detectable effect and seeds needed of each declared test (:mod:`.power`), and the same
tests from summary statistics with the range of p that printed rounding allows
(:mod:`.summary`, used by the paper audit). Re-exported here: ``from dfil import stats;
stats.welch(a, b)``.
"""

from dfil.stats.multiplicity import family_alpha, holm, holm_by_family
from dfil.stats.power import Trial, mde, n_for_power, power
from dfil.stats.samples import (
    Described,
    TestResult,
    Tost,
    binomial,
    cohens_dz,
    describe,
    paired_t,
    shifted_t,
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
    "Described", "Interval", "PvalueRange", "SummaryBox", "TestResult", "Tost", "Trial",
    "binomial", "cohens_dz", "describe", "family_alpha", "holm", "holm_by_family", "mde",
    "n_for_power", "paired_from_dz", "paired_sd_for_p", "paired_t", "power",
    "rounding_interval", "shifted_t", "student_from_stats", "tost", "ttest_pvalue_range",
    "welch", "welch_from_stats", "wilcoxon", "wilcoxon_sign_pvalues",
]
