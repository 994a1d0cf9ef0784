"""Binned calibration error shared by every page: ECE with 15 equal-width bins and its regime (seed 000 §7)."""
from __future__ import annotations

import threading
import zlib
from collections import OrderedDict

import numpy as np

from fairviz.core import stats

ECE_BINS = 15
GOOD_BELOW = 0.05
POOR_FROM = 0.15


def ece_bin_index(score: np.ndarray, n_bins: int = ECE_BINS) -> np.ndarray:
    """Bin k holds [k/n, (k+1)/n); the last bin is closed, so a score of 1 falls in it.

    ``floor(score · n)`` alone can round below an edge (0.58 · 50 = 28.999…96 although 0.58 is the edge 29/50), so
    the index is corrected by comparing the score with the edge itself."""
    score = np.asarray(score, float)
    index = np.floor(score * n_bins)
    index = index + (score >= (index + 1) / n_bins) - (score < index / n_bins)
    return np.clip(index, 0, n_bins - 1).astype(np.int64)


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


# ----------------------------------------------------------------------------------------------- its interval
# One convention for every interval (Residual Distribution Fairness App. B): rows resampled with replacement,
# 1,000 times, percentile interval. The overall ECE appears on the residual page (knee concentration) and on the
# calibration page; both read the one interval computed here, memoised per data set, rows and settings.

_MEMO: OrderedDict = OrderedDict()
_MEMO_LOCK = threading.Lock()
_MEMO_SIZE = 64


def group_seed(seed: int, name: str) -> list[int]:
    """A group's own random stream: the same group gets the same resamples whatever else is analysed."""
    return [int(seed), zlib.crc32(str(name).encode("utf-8"))]


def ece_resamples(score: np.ndarray, y: np.ndarray, resamples: int, seed, n_bins: int = ECE_BINS,
                  key=None, weights: np.ndarray | None = None) -> np.ndarray:
    """ECE of ``resamples`` row-bootstrap resamples (rows drawn with replacement, size kept).

    Rows enter only through counts over (bin, label, score value) cells, so a resample is one multinomial count
    vector; scores are snapped to a grid only above ``stats.MAX_SUPPORT`` distinct values, and then each cell
    keeps its rows' exact mean score and bin. ``key`` (hashable, e.g. the data fingerprint and the rows' name)
    memoises the result so that every page and section reading the same quantity gets the same resamples."""
    memo_key = None if key is None else (key, int(resamples), repr(seed), int(n_bins))
    if memo_key is not None:
        with _MEMO_LOCK:
            if memo_key in _MEMO:
                _MEMO.move_to_end(memo_key)
                return _MEMO[memo_key]
    out = _ece_resamples(np.asarray(score, float), np.asarray(y), int(resamples), seed, n_bins, weights)
    out.setflags(write=False)
    if memo_key is not None:
        with _MEMO_LOCK:
            _MEMO[memo_key] = out
            while len(_MEMO) > _MEMO_SIZE:
                _MEMO.popitem(last=False)
    return out


def _ece_resamples(score: np.ndarray, y: np.ndarray, resamples: int, seed, n_bins: int,
                   weights: np.ndarray | None = None) -> np.ndarray:
    if score.size == 0 or resamples <= 0:
        return np.empty(0)
    comp = stats.compress(score, 0.0, 1.0)
    k = comp.support.size
    bins = ece_bin_index(score, n_bins)
    cells, index = np.unique((bins * 2 + y.astype(np.int64)) * k + comp.codes, return_inverse=True)
    if weights is None:
        counts = np.bincount(index)
        mean_score = np.bincount(index, weights=score) / counts
    else:                                          # weighted data: entry k stands for weights[k] rows
        counts = np.bincount(index, weights=weights).round().astype(np.int64)
        mean_score = np.bincount(index, weights=score * weights) / counts
    positive = (cells // k) % 2
    onehot = np.zeros((cells.size, n_bins))
    onehot[np.arange(cells.size), cells // (2 * k)] = 1
    rng = np.random.default_rng(seed)
    out = np.empty(resamples)
    for start in range(0, resamples, 250):              # bounded memory on any number of resamples
        boot = stats.bootstrap_counts(counts, min(250, resamples - start), rng).astype(float)
        out[start:start + boot.shape[0]] = ece_from_sums(boot @ onehot, (boot * mean_score) @ onehot,
                                                         (boot * positive) @ onehot)
    return out


def ece_interval(score: np.ndarray, y: np.ndarray, resamples: int, seed, level: float = 0.95,
                 key=None) -> stats.Interval:
    """Percentile bootstrap interval of the ECE (App. B); NaN bounds without resamples."""
    if resamples <= 0:
        return stats.Interval(np.nan, np.nan, level, 0)
    return stats.percentile_interval(ece_resamples(score, y, resamples, seed, key=key), level)
