"""Binned means of a numeric prediction: E[y | ŷ in bin] against the mean ŷ in each bin, with a t interval, on bins
shared by every group (equal-count: the all-rows quantiles of ŷ, or equal-width over ŷ's range). Points on the
diagonal are calibrated in the mean. Entries carry integer weights (``fairviz.calibration.entries``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from fairviz.calibration.entries import json_scalar as _scalar
from fairviz.calibration.reliability import weighted_quantile

STRATEGIES = ("quantile", "uniform")


@dataclass(frozen=True)
class MeanTable:
    """E[y | ŷ in bin] for one set of rows: bins [lower, upper), the last closed; empty bins have n = 0 and NaNs."""
    lower: np.ndarray
    upper: np.ndarray
    n: np.ndarray
    mean_pred: np.ndarray
    mean_y: np.ndarray
    sd_y: np.ndarray
    ci_low: np.ndarray            # t interval of the mean of y (NaN under two rows)
    ci_high: np.ndarray

    def rows(self) -> list[dict]:
        keys = ("lower", "upper", "n", "mean_pred", "mean_y", "sd_y", "ci_low", "ci_high")
        return [{k: _scalar(getattr(self, k)[i]) for k in keys} for i in range(self.n.size)]


def bin_edges(x: np.ndarray, w: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    """Edges of ``n_bins`` bins of the prediction: its weighted quantiles ("quantile"; tied edges merge) or equal width
    over its range ("uniform")."""
    if strategy == "uniform":
        return np.linspace(x.min(), x.max(), n_bins + 1)
    return np.unique(weighted_quantile(x, w, np.linspace(0.0, 1.0, n_bins + 1)))


def bins_note(strategy: str, edges: np.ndarray, level: float) -> str:
    kind = ("equal-count (the quantiles of the prediction over all rows)" if strategy == "quantile"
            else "equal-width over the prediction's range")
    return (f"Bins of the prediction: {edges.size - 1} {kind}, shared by every group; each bin's mean target has a "
            f"{100 * level:g}% t interval.")


def mean_table(y: np.ndarray, y_hat: np.ndarray, w: np.ndarray, edges: np.ndarray, level: float) -> MeanTable:
    """Binned means of y against binned means of ŷ (weighted: w rows per entry)."""
    k = edges.size - 1
    idx = np.clip(np.searchsorted(edges, y_hat, side="right") - 1, 0, k - 1)
    n = np.bincount(idx, weights=w, minlength=k)
    safe = np.where(n > 0, n, 1)
    mean_pred = np.bincount(idx, weights=w * y_hat, minlength=k) / safe
    mean_y = np.bincount(idx, weights=w * y, minlength=k) / safe
    ss = np.bincount(idx, weights=w * (y - mean_y[idx]) ** 2, minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.where(n > 1, np.sqrt(ss / np.where(n > 1, n - 1, 1)), np.nan)
        half = sps.t.ppf(0.5 + level / 2, np.where(n > 1, n - 1, 1)) * sd / np.sqrt(safe)
    empty = n == 0
    return MeanTable(edges[:-1].copy(), edges[1:].copy(), n.round().astype(np.int64),
                     np.where(empty, np.nan, mean_pred), np.where(empty, np.nan, mean_y), sd,
                     mean_y - half, mean_y + half)
