"""Binned calibration error shared by every page: ECE with 15 equal-width bins and its regime ([1] §7)."""
from __future__ import annotations

import threading
import zlib
from collections import OrderedDict
from dataclasses import dataclass

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


SCORE_CELLS = 2048          # equal cells of [0, 1] that resamples snap scores to when they have more distinct values


def score_cell(score: np.ndarray, cells: int = SCORE_CELLS) -> np.ndarray:
    """Equal-width cell of [0, 1] of each score (the last cell is closed)."""
    return np.minimum(np.floor(np.asarray(score, float) * cells), cells - 1).astype(np.int64)


@dataclass(frozen=True)
class ScoreCells:
    """One sample's rows as counts over (score, label, ECE bin) cells: what every bootstrap of a score-and-label
    statistic resamples. A cell holds one distinct score when the sample has at most ``stats.MAX_SUPPORT`` of them,
    else the rows of one of ``SCORE_CELLS`` equal cells of [0, 1] (cut at the ECE bin edges), at their mean score;
    statistics of the unresampled counts are therefore exact either way."""
    counts: np.ndarray          # (C,) rows per cell
    score_sum: np.ndarray       # (C,) Σ score over the cell's rows
    label: np.ndarray           # (C,) 0/1
    ece_bin: np.ndarray         # (C,) ECE bin of the cell
    grid: np.ndarray            # (C,) the cell's equal cell of [0, 1] (``score_cell``)
    row_cell: np.ndarray        # (rows,) the cell of each row (entry)
    n_bins: int

    @property
    def mean_score(self) -> np.ndarray:
        return self.score_sum / np.maximum(self.counts, 1)

    def sums(self, values: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Σ values over each cell's rows (``weights``: rows per entry)."""
        w = values if weights is None else values * weights
        return np.bincount(self.row_cell, weights=w, minlength=self.counts.size)

    def draw(self, resamples: int, seed) -> np.ndarray:
        """(resamples, C) bootstrap counts (``stats.bootstrap_counts``), reproducible from ``seed``."""
        return stats.bootstrap_counts(self.counts, resamples, np.random.default_rng(seed))

    def ece(self, draws: np.ndarray) -> np.ndarray:
        """ECE of each row of ``draws``, with every row of a cell at the cell's mean score."""
        draws = np.atleast_2d(draws)
        per_bin = np.zeros((self.counts.size, 3, self.n_bins))     # rows, Σ score, Σ label of each cell, by bin
        at = np.arange(self.counts.size)
        per_bin[at, 0, self.ece_bin], per_bin[at, 1, self.ece_bin] = 1.0, self.mean_score
        per_bin[at, 2, self.ece_bin] = self.label
        sums = (draws @ per_bin.reshape(self.counts.size, -1)).reshape(-1, 3, self.n_bins)
        return ece_from_sums(sums[:, 0], sums[:, 1], sums[:, 2])


def score_cells(score: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None,
                n_bins: int = ECE_BINS) -> ScoreCells:
    """The ``ScoreCells`` of rows (or of weighted entries: ``weights`` rows each)."""
    score = np.asarray(score, float)
    label = np.asarray(y).astype(np.int64)
    grid = score_cell(score)
    distinct, exact = np.unique(score, return_inverse=True)
    code = exact if distinct.size <= stats.MAX_SUPPORT else grid
    bins = ece_bin_index(score, n_bins)
    cells, row_cell = np.unique((code * n_bins + bins) * 2 + label, return_inverse=True)
    row_cell = row_cell.reshape(-1)
    some_row = np.zeros(cells.size, dtype=np.int64)
    some_row[row_cell] = np.arange(row_cell.size)                   # any row: a cell's rows share their grid cell
    w = None if weights is None else np.asarray(weights, float)
    counts = np.bincount(row_cell, weights=w, minlength=cells.size)
    counts = counts.astype(np.int64) if w is None else counts.round().astype(np.int64)
    sums = np.bincount(row_cell, weights=score if w is None else score * w, minlength=cells.size)
    return ScoreCells(counts, sums, cells % 2, (cells // 2) % n_bins, grid[some_row], row_cell, n_bins)


def ece_resamples(score: np.ndarray, y: np.ndarray, resamples: int, seed, n_bins: int = ECE_BINS,
                  key=None, weights: np.ndarray | None = None) -> np.ndarray:
    """ECE of ``resamples`` row-bootstrap resamples (``ScoreCells.draw``: rows with replacement).

    ``key`` (hashable, e.g. the data fingerprint and the rows' name) memoises the result so that every page and
    section reading the same quantity reads the same array; the calibration audit, which draws the same cells with
    the same seed for its other statistics, gets the same values without it."""
    memo_key = None if key is None else (key, int(resamples), repr(seed), int(n_bins))
    if memo_key is not None:
        with _MEMO_LOCK:
            if memo_key in _MEMO:
                _MEMO.move_to_end(memo_key)
                return _MEMO[memo_key]
    if np.size(score) == 0 or resamples <= 0:
        out = np.empty(0)
    else:
        cells = score_cells(score, y, weights, n_bins)
        out = cells.ece(cells.draw(int(resamples), seed))
    out.setflags(write=False)
    if memo_key is not None:
        with _MEMO_LOCK:
            _MEMO[memo_key] = out
            while len(_MEMO) > _MEMO_SIZE:
                _MEMO.popitem(last=False)
    return out


def ece_interval(score: np.ndarray, y: np.ndarray, resamples: int, seed, level: float = 0.95,
                 key=None) -> stats.Interval:
    """Percentile bootstrap interval of the ECE (App. B); NaN bounds without resamples."""
    if resamples <= 0:
        return stats.Interval(np.nan, np.nan, level, 0)
    return stats.percentile_interval(ece_resamples(score, y, resamples, seed, key=key), level)
