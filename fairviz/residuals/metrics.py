"""The RDF metrics of a group pair ([1] §5): residuals, F_pattern, F_dist (Wasserstein-1), F_h and F_v (knee gaps)
and the mean decomposition ([1] Theorem A.1). Every signed quantity of an ordered pair (i, j) means "i minus j"."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from fairviz.residuals.curves import SortedGroup

STAB_EPS = 1e-6


def residuals(score: np.ndarray, y: np.ndarray) -> np.ndarray:
    """D = P̂⁺ − Y ∈ [−1, 1] (float64); for a regression D = ŷ − y, in the target's units."""
    return np.asarray(score, dtype=float) - np.asarray(y, dtype=float)


def f_pattern(d_i: np.ndarray, d_j: np.ndarray) -> float:
    """1 − |m_i − m_j| / 2 with m the median residual; 1 means equal typical error."""
    if d_i.size == 0 or d_j.size == 0:
        return float("nan")
    return 1.0 - abs(float(np.median(d_i)) - float(np.median(d_j))) / 2.0


def median_parity(a: SortedGroup, b: SortedGroup, span: float = 2.0) -> float:
    """F_pattern of two sorted samples (NaN when either is empty): 1 − |m_a − m_b| / span, with span the range D can
    take (2 for a binary task, D ∈ [−1, 1]; the data's max D − min D for a regression)."""
    if not a.n or not b.n:
        return float("nan")
    return 1 - abs(a.median() - b.median()) / span


def f_dist(d_i: np.ndarray, d_j: np.ndarray) -> float:
    """∫₀¹ |Q_i(p) − Q_j(p)| dp, the Wasserstein-1 distance between the residual distributions."""
    return wasserstein_sorted(np.sort(d_i), np.sort(d_j))


def wasserstein_sorted(a: np.ndarray, b: np.ndarray, wa: np.ndarray | None = None,
                       wb: np.ndarray | None = None) -> float:
    """W1 of two sorted samples in linear time: integrate |Q_a − Q_b| over the merged quantile breakpoints.

    Equals ``scipy.stats.wasserstein_distance`` (tested to 1e-12) without re-sorting the rows each call. With
    weights (rows per entry) the breakpoints are the entries' cumulative shares: the same integral, no expansion.
    """
    if a.size == 0 or b.size == 0:
        return float("nan")
    cum_a = np.arange(1, a.size + 1) if wa is None else np.cumsum(wa)
    cum_b = np.arange(1, b.size + 1) if wb is None else np.cumsum(wb)
    na, nb = int(cum_a[-1]), int(cum_b[-1])
    # breakpoints k/n_a and k/n_b; timsort merges the two sorted runs in O(n)
    cuts = np.sort(np.concatenate([cum_a / na, cum_b / nb]), kind="stable")
    cuts[-1] = 1.0
    start = np.concatenate([[0.0], cuts[:-1]])
    width = cuts - start
    middle = start + width / 2                     # inside each interval, away from the jumps
    ra = np.minimum((middle * na).astype(np.int64), na - 1)          # 0-based order statistic of each sample
    rb = np.minimum((middle * nb).astype(np.int64), nb - 1)
    qa = a[ra] if wa is None else a[np.searchsorted(cum_a, ra, side="right")]
    qb = b[rb] if wb is None else b[np.searchsorted(cum_b, rb, side="right")]
    return float(np.sum(np.abs(qa - qb) * width))


def f_h(knees_i: tuple, knees_j: tuple, knees_pooled: tuple, absolute: bool = False) -> float:
    """Eq. 2: ½|Δq_ℓ/(q_g,ℓ + ε)| + ½|Δq_r/(q_g,r + ε)|; NaN when any knee is missing."""
    return _knee_gap(knees_i, knees_j, knees_pooled, "percentile", absolute)


def f_v(knees_i: tuple, knees_j: tuple, knees_pooled: tuple, absolute: bool = False) -> float:
    """Eq. 3: ½|Δr_ℓ/(|r_g,ℓ| + ε)| + ½|Δr_r/(|r_g,r| + ε)|; NaN when any knee is missing."""
    return _knee_gap(knees_i, knees_j, knees_pooled, "residual", absolute)


def _knee_gap(ki: tuple, kj: tuple, kg: tuple, attr: str, absolute: bool) -> float:
    if any(k is None for k in (*ki, *kj, *kg)):
        return float("nan")
    total = 0.0
    for a, b, g in zip(ki, kj, kg):
        gap = abs(getattr(a, attr) - getattr(b, attr))
        total += 0.5 * (gap if absolute else gap / (abs(getattr(g, attr)) + STAB_EPS))
    return total


def mean_decomposition(score_i, y_i, score_j, y_j, w_i=None, w_j=None, span: float | None = None) -> dict:
    """Theorem A.1: μ_i − μ_j = MD − Δ_base, with MD the mean-score gap and Δ_base the base-rate gap
    (``w_i``/``w_j``: rows per entry of weighted data). A regression (``span``, the range of D) reads the same
    identity as the gap in mean prediction minus the gap in mean target."""
    md = float(np.average(score_i, weights=w_i) - np.average(score_j, weights=w_j))
    delta_base = float(np.average(y_i, weights=w_i) - np.average(y_j, weights=w_j))
    mu_gap = float(np.average(residuals(score_i, y_i), weights=w_i) - np.average(residuals(score_j, y_j), weights=w_j))
    if span is not None:
        return {"mean_residual_gap": mu_gap, "mean_prediction_gap": md, "mean_target_gap": delta_base,
                "f_pattern_mean": 1.0 - abs(md - delta_base) / span}
    return {"mean_residual_gap": mu_gap, "mean_score_gap": md, "base_rate_gap": delta_base,
            "f_pattern_mean": 1.0 - abs(md - delta_base) / 2.0}
