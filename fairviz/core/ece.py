"""Binned calibration error shared by every page: ECE with 15 equal-width bins and its regime (seed 000 §7)."""
from __future__ import annotations

import numpy as np

ECE_BINS = 15
GOOD_BELOW = 0.05
POOR_FROM = 0.15


def ece_bin_index(score: np.ndarray, n_bins: int = ECE_BINS) -> np.ndarray:
    """Bin k holds [k/n, (k+1)/n); the last bin is closed, so a score of 1 falls in it (spec D-9)."""
    return np.minimum(np.floor(np.asarray(score, float) * n_bins), n_bins - 1).astype(np.int64)


def ece(score: np.ndarray, y: np.ndarray, n_bins: int = ECE_BINS, weights: np.ndarray | None = None) -> float:
    """Σ_b |B_b|/n · |mean(y) − mean(p̂)| over equal-width bins of the positive-class probability.
    ``weights``: rows per entry (weighted data)."""
    score = np.asarray(score, float)
    if score.size == 0:
        return float("nan")
    bins = ece_bin_index(score, n_bins)
    if weights is not None:
        return ece_from_sums(np.bincount(bins, weights=weights, minlength=n_bins),
                             np.bincount(bins, weights=score * weights, minlength=n_bins),
                             np.bincount(bins, weights=y * weights, minlength=n_bins))
    return ece_from_sums(np.bincount(bins, minlength=n_bins), np.bincount(bins, weights=score, minlength=n_bins),
                         np.bincount(bins, weights=y, minlength=n_bins))


def ece_from_sums(counts: np.ndarray, score_sums: np.ndarray, label_sums: np.ndarray) -> np.ndarray | float:
    """ECE from per-bin sums (works on batches: last axis = bins). Empty bins contribute 0."""
    total = counts.sum(-1)
    gap = np.abs(label_sums - score_sums)          # |B|·|acc − conf| = |Σy − Σp̂|
    value = gap.sum(-1) / np.where(total > 0, total, 1)
    return float(value) if np.ndim(value) == 0 else value


def ece_regime(value: float) -> str:
    if not np.isfinite(value):
        return "undefined"
    if value < GOOD_BELOW:
        return "good"
    return "moderate" if value < POOR_FROM else "poor"
