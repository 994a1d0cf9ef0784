"""Reliability diagrams: score clipping and logit, bins, binomial intervals for the observed rate, Pearson residuals
(the lecture's §4.2 calibration plots)."""
from __future__ import annotations

import numpy as np
from scipy import special
from scipy import stats as sps

from fairviz.calibration.results import EPS, RCS_QUANTILES, ReliabilityTable
from fairviz.core.ece import ece_bin_index


def clip_scores(score: np.ndarray, eps: float = EPS, weights: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """p̂ clipped to [eps, 1 − eps] (logit needs 0 < p̂ < 1) and how many rows it changed."""
    score = np.asarray(score, dtype=float)
    clipped = np.clip(score, eps, 1 - eps)
    changed = clipped != score
    return clipped, int(np.count_nonzero(changed)) if weights is None else int(weights[changed].sum())


def logit(p: np.ndarray) -> np.ndarray:
    return special.logit(np.clip(np.asarray(p, dtype=float), EPS, 1 - EPS))


def binomial_interval(n_pos, n, level: float = 0.95, method: str = "beta_uniform") -> tuple[np.ndarray, np.ndarray]:
    """Interval for a proportion n_pos/n; NaN where n = 0.

    ``beta_uniform`` is the equal-tailed interval of Beta(n₁+1, n−n₁+1), the posterior under a uniform prior: the
    only one that reproduces the lecture's table (spec B3). The others are the usual alternatives."""
    k = np.asarray(n_pos, dtype=float)
    n = np.asarray(n, dtype=float)
    a = (1 - level) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "beta_uniform":
            low, high = sps.beta.ppf(a, k + 1, n - k + 1), sps.beta.ppf(1 - a, k + 1, n - k + 1)
        elif method == "jeffreys":
            low = np.where(k == 0, 0.0, sps.beta.ppf(a, k + 0.5, n - k + 0.5))
            high = np.where(k == n, 1.0, sps.beta.ppf(1 - a, k + 0.5, n - k + 0.5))
        elif method == "clopper_pearson":
            low = np.where(k == 0, 0.0, sps.beta.ppf(a, k, n - k + 1))
            high = np.where(k == n, 1.0, sps.beta.ppf(1 - a, k + 1, n - k))
        elif method in ("wilson", "wald"):
            z = sps.norm.ppf(1 - a)
            p = k / n
            if method == "wald":
                half = z * np.sqrt(p * (1 - p) / n)
                low, high = np.clip(p - half, 0, 1), np.clip(p + half, 0, 1)
            else:
                centre = (p + z * z / (2 * n)) / (1 + z * z / n)
                half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
                low, high = centre - half, centre + half
        else:
            raise ValueError(f"unknown interval method {method!r}")
    empty = n <= 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def bin_edges(score: np.ndarray, n_bins: int, strategy: str, weights: np.ndarray | None = None) -> np.ndarray:
    """Equal-width edges on [0, 1], or equal-count edges (quantiles; repeated edges dropped, as pd.qcut does)."""
    if strategy == "uniform":
        return np.round(np.linspace(0.0, 1.0, n_bins + 1), 12)
    if score.size == 0:
        return np.array([0.0, 1.0])
    if weights is not None:
        return np.unique(weighted_quantile(score, weights, np.linspace(0.0, 1.0, n_bins + 1)))
    return np.unique(np.quantile(score, np.linspace(0.0, 1.0, n_bins + 1)))


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``np.quantile`` (linear method) of the rows that ``weights`` stand for, without expanding them."""
    order = np.argsort(values, kind="stable")
    sorted_values, cum = values[order], np.cumsum(weights[order])
    position = (cum[-1] - 1) * np.asarray(q, dtype=float)
    below = np.floor(position)

    def at(k):                                    # the k-th smallest row (0-based)
        return sorted_values[np.minimum(np.searchsorted(cum, k, side="right"), sorted_values.size - 1)]

    a, b, t = at(below), at(np.minimum(below + 1, cum[-1] - 1)), position - below
    diff = b - a                                   # numpy's lerp, so edges equal the row-level ones
    return np.where(t >= 0.5, b - diff * (1 - t), a + diff * t)


def bin_index(score: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin of each score: [e_k, e_{k+1}), the last bin closed. Equal-width bins use the ECE rule (no edge drift)."""
    n_bins = max(edges.size - 1, 1)
    if edges.size == n_bins + 1 and edges[0] == 0.0 and edges[-1] == 1.0 and np.allclose(
            edges, np.linspace(0, 1, n_bins + 1), rtol=0, atol=1e-15):
        return ece_bin_index(score, n_bins)
    return np.clip(np.searchsorted(edges, score, side="right") - 1, 0, n_bins - 1)


def reliability_from_sums(lower, upper, n, n_pos, score_sum, level: float = 0.95,
                          ci_method: str = "beta_uniform", strategy: str = "uniform") -> ReliabilityTable:
    n = np.asarray(n, dtype=np.int64)
    n_pos = np.asarray(n_pos, dtype=np.int64)
    safe = np.where(n > 0, n, 1)
    empty = n == 0
    observed = np.where(empty, np.nan, n_pos / safe)
    z = sps.norm.ppf(0.5 + level / 2)
    low, high = binomial_interval(n_pos, n, level, ci_method)
    with np.errstate(invalid="ignore"):
        moe = np.where(empty, np.nan, z * np.sqrt(observed * (1 - observed) / safe))
    return ReliabilityTable(strategy, np.asarray(lower, float), np.asarray(upper, float), n, n_pos,
                            np.where(empty, np.nan, np.asarray(score_sum, float) / safe), observed,
                            np.where(empty, np.nan, (n_pos + 1) / (n + 2)), low, high, moe)


def reliability_table(y: np.ndarray, score: np.ndarray, n_bins: int = 10, strategy: str = "uniform",
                      level: float = 0.95, ci_method: str = "beta_uniform",
                      weights: np.ndarray | None = None) -> ReliabilityTable:
    """The lecture's binning table (§4.2.2) for one set of rows (``weights``: rows per entry)."""
    score = np.asarray(score, dtype=float)
    y = np.asarray(y)
    edges = bin_edges(score, n_bins, strategy, weights)
    k = edges.size - 1
    idx = bin_index(score, edges)
    w = np.ones(score.size) if weights is None else weights
    return reliability_from_sums(edges[:-1], edges[1:],
                                 np.bincount(idx, minlength=k) if weights is None else
                                 np.bincount(idx, weights=w, minlength=k).round().astype(np.int64),
                                 np.bincount(idx, weights=y * w, minlength=k).round().astype(np.int64),
                                 np.bincount(idx, weights=score * w, minlength=k), level, ci_method, strategy)


def pearson_residuals(y: np.ndarray, score: np.ndarray, eps: float = EPS) -> np.ndarray:
    """(y − p̂)/sqrt(p̂(1 − p̂)) with p̂ clipped to [eps, 1 − eps] so that it is always finite (§3.2)."""
    p = np.clip(np.asarray(score, dtype=float), eps, 1 - eps)
    return (np.asarray(y, dtype=float) - p) / np.sqrt(p * (1 - p))


def rcs_basis(x: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """Restricted (natural) cubic spline basis: [x, s₁(x), …, s_{k−2}(x)], linear beyond the outer knots.

    Harrell's parameterisation, with the non-linear terms divided by (t_k − t_1)² to keep them on the scale of x.
    """
    x = np.asarray(x, dtype=float)
    t = np.asarray(knots, dtype=float)
    k = t.size
    cols = [x]
    scale = (t[-1] - t[0]) ** 2
    tail = t[-1] - t[-2]

    def cube(v):
        return np.maximum(v, 0.0) ** 3

    for j in range(k - 2):
        term = (cube(x - t[j]) - cube(x - t[-2]) * (t[-1] - t[j]) / tail
                + cube(x - t[-1]) * (t[-2] - t[j]) / tail)
        cols.append(term / scale)
    return np.column_stack(cols)


def weighted_quantiles(values: np.ndarray, weights: np.ndarray, q) -> np.ndarray:
    """Quantiles of a sample given as sorted distinct values and their counts (inverse of the weighted CDF)."""
    cum = np.cumsum(weights)
    total = cum[-1]
    pos = np.searchsorted(cum, np.asarray(q) * total, side="left")
    return values[np.clip(pos, 0, values.size - 1)]


def rcs_knots(values: np.ndarray, weights: np.ndarray, k: int) -> np.ndarray:
    """Knots at Harrell's quantiles; fewer when the data have fewer distinct values there."""
    keep = weights > 0
    values, weights = values[keep], weights[keep]
    order = np.argsort(values)
    knots = np.unique(weighted_quantiles(values[order], weights[order], RCS_QUANTILES[k]))
    return knots
