"""DeLong's test for two correlated AUROCs on the same rows (DeLong, DeLong and Clarke-Pearson, Biometrics 1988),
in the O(n log n) midrank form of Sun and Xu (IEEE SPL 2014), with frequency weights (rows per entry) so the
engine's counts give the same numbers as the expanded rows.

AUROC_k = P(score_k of a positive > score_k of a negative) + ½ P(tie). Its structural components are, per positive,
the share of negatives it outranks (V10) and, per negative, the share of positives that outrank it (V01); the
covariance of the two AUROCs is S10/m + S01/n from the components' (weighted) covariances.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm


@dataclass(frozen=True)
class DeLongResult:
    auc_a: float
    auc_b: float
    difference: float          # a minus b
    se: float
    z: float
    p_value: float             # two-sided
    ci: tuple[float, float]    # 95% (or ``level``) normal interval of the difference


def _placements(scores: np.ndarray, positive: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(V10 per positive entry, V01 per negative entry): weighted shares with ties counted ½."""
    order = np.argsort(scores, kind="stable")
    s, pos, w = scores[order], positive[order], weight[order]
    distinct, start = np.unique(s, return_index=True)
    w_neg_at = np.add.reduceat(np.where(pos, 0.0, w), start)
    w_pos_at = np.add.reduceat(np.where(pos, w, 0.0), start)
    neg_below = np.cumsum(w_neg_at) - w_neg_at           # negatives with a strictly lower score
    pos_above = w_pos_at.sum() - np.cumsum(w_pos_at)     # positives with a strictly higher score
    cell = np.searchsorted(distinct, scores)
    w_neg, w_pos = w_neg_at.sum(), w_pos_at.sum()
    v10 = (neg_below[cell] + 0.5 * w_neg_at[cell]) / w_neg
    v01 = (pos_above[cell] + 0.5 * w_pos_at[cell]) / w_pos
    return v10[positive], v01[~positive]


def _weighted_cov(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> float:
    total = w.sum()
    if total <= 1:
        return float("nan")
    return float(np.sum(w * (a - np.average(a, weights=w)) * (b - np.average(b, weights=w))) / (total - 1))


def delong_paired(y, score_a, score_b, weight=None, level: float = 0.95) -> DeLongResult:
    """Paired test of AUROC(a) − AUROC(b) on the same rows (labels ``y`` in {0, 1})."""
    positive = np.asarray(y).astype(bool)
    a, b = np.asarray(score_a, float), np.asarray(score_b, float)
    w = np.ones(positive.size) if weight is None else np.asarray(weight, float)
    if not positive.any() or positive.all():
        raise ValueError("AUROC needs both outcomes")
    v10_a, v01_a = _placements(a, positive, w)
    v10_b, v01_b = _placements(b, positive, w)
    w_pos, w_neg = w[positive], w[~positive]
    auc_a, auc_b = float(np.average(v10_a, weights=w_pos)), float(np.average(v10_b, weights=w_pos))
    m, n = w_pos.sum(), w_neg.sum()
    var = ((_weighted_cov(v10_a, v10_a, w_pos) + _weighted_cov(v10_b, v10_b, w_pos)
            - 2 * _weighted_cov(v10_a, v10_b, w_pos)) / m
           + (_weighted_cov(v01_a, v01_a, w_neg) + _weighted_cov(v01_b, v01_b, w_neg)
              - 2 * _weighted_cov(v01_a, v01_b, w_neg)) / n)
    diff = auc_a - auc_b
    se = math.sqrt(max(var, 0.0))
    if se == 0.0:
        z, p = (0.0, 1.0) if diff == 0 else (math.copysign(math.inf, diff), 0.0)
    else:
        z = diff / se
        p = float(2 * norm.sf(abs(z)))
    half = norm.ppf(0.5 + level / 2) * se
    return DeLongResult(auc_a, auc_b, diff, se, z, p, (diff - half, diff + half))
