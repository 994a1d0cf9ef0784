"""The statistics of a disparity between two groups' explanation scores ([4] §4.4, App. D).

Two-sided Mann–Whitney U (unpaired, as in the paper, even for twins) and Cohen's d
= (mean_i − mean_j) / sqrt((var_i + var_j) / 2) with sample variances (ddof = 1) and the unweighted average of the
two variances (not the n-weighted pooled SD); d > 0 means group i scores higher. Extensions, labelled as such where
they are shown: a percentile-bootstrap CI of d, and for twin data a paired Wilcoxon signed-rank p on the within-pair
differences. No torch here.
"""
from __future__ import annotations

import numpy as np
from scipy import stats as sps

from fairviz.core.stats import Interval, percentile_interval


def mann_whitney_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided Mann–Whitney p (scipy, asymptotic with tie and continuity corrections for larger samples).

    NaNs are dropped first; an empty group gives NaN; fewer than two distinct values overall gives p = 1.
    """
    a, b = finite_values(a), finite_values(b)
    if a.size == 0 or b.size == 0:
        return float("nan")
    if np.unique(np.concatenate([a, b])).size < 2:
        return 1.0
    return float(sps.mannwhitneyu(a, b, alternative="two-sided", method="auto").pvalue)


def cohens_d(a: np.ndarray, b: np.ndarray) -> float:
    """(mean_a − mean_b) / sqrt((var_a + var_b) / 2), ddof = 1.

    Both groups constant: 0 when they are equal, else undefined (NaN: the groups are perfectly separated and no
    standardised size exists; "d = 0 when the denominator is 0" would hide that). NaN if n < 2.
    """
    a, b = finite_values(a), finite_values(b)
    if a.size < 2 or b.size < 2:
        return float("nan")
    diff = a.mean() - b.mean()
    spread = np.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2)
    if spread == 0:
        return 0.0 if diff == 0 else float("nan")
    return float(diff / spread)


def cohens_d_interval(a: np.ndarray, b: np.ndarray, resamples: int = 1000, seed: int = 0,
                      level: float = 0.95) -> Interval:
    """Percentile bootstrap CI of d, resampling each group with replacement (sizes kept), vectorised."""
    a, b = finite_values(a), finite_values(b)
    if a.size < 2 or b.size < 2 or resamples <= 0:
        return Interval(np.nan, np.nan, level, 0)
    rng = np.random.default_rng(seed)
    ra = a[rng.integers(0, a.size, (resamples, a.size))]
    rb = b[rng.integers(0, b.size, (resamples, b.size))]
    spread = np.sqrt((ra.var(axis=1, ddof=1) + rb.var(axis=1, ddof=1)) / 2)
    diff = ra.mean(axis=1) - rb.mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(spread > 0, diff / spread, np.where(diff == 0, 0.0, np.nan))
    return percentile_interval(d, level)


def paired_wilcoxon_p(differences: np.ndarray) -> float:
    diffs = finite_values(differences)
    if diffs.size == 0:
        return float("nan")
    if not np.any(diffs):
        return 1.0
    return float(sps.wilcoxon(diffs, zero_method="wilcox", alternative="two-sided").pvalue)


def finite_values(x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return x[np.isfinite(x)]
