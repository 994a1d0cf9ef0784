"""Subgroup performance: AUROC from score-cell counts, log-loss and Brier."""
from __future__ import annotations

import numpy as np

from fairviz.calibration.results import EPS


def auroc_from_counts(neg: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """AUROC from counts of negatives and positives per sorted score value (ties count ½). Batches: last axis."""
    neg = np.atleast_2d(neg).astype(float)
    pos = np.atleast_2d(pos).astype(float)
    below = np.cumsum(neg, -1) - neg
    n0, n1 = neg.sum(-1), pos.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = (pos * (below + 0.5 * neg)).sum(-1) / (n0 * n1)
    return np.where((n0 > 0) & (n1 > 0), value, np.nan)


def auroc(y: np.ndarray, score: np.ndarray) -> float:
    distinct, inverse = np.unique(score, return_inverse=True)
    y = np.asarray(y)
    neg = np.bincount(inverse[y == 0], minlength=distinct.size)
    pos = np.bincount(inverse[y == 1], minlength=distinct.size)
    return float(auroc_from_counts(neg, pos)[0])


def log_loss(y: np.ndarray, score: np.ndarray, weights: np.ndarray | None = None) -> float:
    p = np.clip(np.asarray(score, float), EPS, 1 - EPS)
    y = np.asarray(y, float)
    return float(-np.average(y * np.log(p) + (1 - y) * np.log1p(-p), weights=weights)) if p.size else float("nan")


def brier(y: np.ndarray, score: np.ndarray, weights: np.ndarray | None = None) -> float:
    if not np.size(y):
        return float("nan")
    return float(np.average((np.asarray(score, float) - np.asarray(y, float)) ** 2, weights=weights))
