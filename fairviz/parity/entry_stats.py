"""Shared pieces of regression and multiclass parity: entry weights, quantiles and class tensors on weighted
entries, *Systematic Evaluation of Predictive Fairness*'s GAP, and group-label permutations on counts.

Every function here sees an entry of weight w exactly as w identical rows: quantiles follow ``np.quantile``'s
linear rule on the expanded rows, tensors and supports are weighted counts, and the permutations split counts
(never rows), so expanded rows and weighted entries give the same numbers and the same random draws.
"""
from __future__ import annotations

import numpy as np

from fairviz.core import stats
from fairviz.data.model import DataError


def entry_weights(weights, size: int) -> np.ndarray:
    """The rows each entry stands for (1 each when None); non-integer or negative weights are refused."""
    if weights is None:
        return np.ones(size, dtype=np.int64)
    w = np.asarray(weights, dtype=float)
    if w.shape != (size,):
        raise DataError(f"The weights have {w.size:,} entries for {size:,} rows.")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or np.any(w != np.round(w)):
        raise DataError("The weights must be whole numbers of rows (0 or more).")
    return w.astype(np.int64)


def row_quantiles(values: np.ndarray, weights: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """``np.quantile(rows, qs)`` (linear rule) of the rows the weighted entries stand for, without expanding them."""
    order = np.argsort(values, kind="stable")
    v, cum = values[order], np.cumsum(weights[order])
    n = int(cum[-1])
    h = np.asarray(qs, float) * (n - 1)
    low = np.floor(h)
    t = h - low
    a = v[np.searchsorted(cum, low, side="right")]          # the row of 0-based rank k sits where cum first > k
    b = v[np.searchsorted(cum, np.minimum(low + 1, n - 1), side="right")]
    diff = b - a                                            # numpy's _lerp, so the edges agree to the last bit
    return np.where(t >= 0.5, b - diff * (1 - t), a + diff * t)


def proxy_edges(y: np.ndarray, weights: np.ndarray, n_classes: int) -> np.ndarray:
    """Equal-frequency edges of the target ([5] §3.3): its quantiles at 0, 1/C, …, 1, repeated edges merged."""
    edges = np.unique(row_quantiles(y, weights, np.linspace(0, 1, n_classes + 1)))
    if edges.size < 2:
        raise DataError("The regression target is constant: no proxy classes can be formed from it.")
    return edges


def proxy_classes(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Class ids by the target's edges. Values outside the target's range (predictions can be) go to the nearest
    end class; inside the range this is *Systematic Evaluation*'s own binning."""
    clipped = np.clip(np.asarray(values, float), edges[0], edges[-1])
    return np.searchsorted(edges[1:-1], clipped, side="left").astype(np.int64)


def class_tensor(y: np.ndarray, predicted: np.ndarray, codes: np.ndarray, n_classes: int, n_groups: int,
                 weights: np.ndarray) -> np.ndarray:
    """T[c, g, k]: rows with true class c, group g and predicted class k (int64 counts)."""
    flat = (y.astype(np.int64) * n_groups + codes.astype(np.int64)) * n_classes + predicted.astype(np.int64)
    size = n_classes * n_groups * n_classes
    return np.bincount(flat, weights=weights, minlength=size).round().astype(np.int64).reshape(
        n_classes, n_groups, n_classes)


def rate_cells(T: np.ndarray, rate: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One-vs-rest rate per class and group (…, C, G), the pooled rate per class (…, C) and where it is defined,
    for a tensor T (…, C, G, C) with any leading batch axes."""
    diag = np.diagonal(T, axis1=-3, axis2=-1)                         # (…, G, C): y = c and ŷ = c
    diag = np.swapaxes(diag, -1, -2)                                  # (…, C, G)
    if rate == "tpr":
        num, den = diag, T.sum(-1)
    elif rate == "fpr":
        num = np.swapaxes(T.sum(-3), -1, -2) - diag                   # predicted c, y ≠ c
        den = T.sum((-3, -1))[..., None, :] - T.sum(-1)
    elif rate == "ppr":
        num = np.swapaxes(T.sum(-3), -1, -2)
        den = np.broadcast_to(T.sum((-3, -1))[..., None, :], num.shape)
    else:
        raise ValueError(f"unknown rate '{rate}' (use tpr, fpr or ppr)")
    num, den = num.astype(float), den.astype(float)
    defined = den > 0
    cells = np.divide(num, den, out=np.full(num.shape, np.nan), where=defined)
    total = den.sum(-1)
    overall = np.divide(num.sum(-1), total, out=np.full(total.shape, np.nan), where=total > 0)
    return cells, overall, defined


def rms_gap(T: np.ndarray, rate: str = "tpr") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """*Systematic Evaluation*'s GAP of a rate: per class Σ_g |rate_{c,g} − rate_c| (rate_c pooled over groups;
    with two groups exactly |rate_{c,1} − rate_{c,2}|), then the root mean square over classes. A class some group
    cannot define is left out (never scored 0). Returns (GAP (…), per class (…, C), defined (…, C))."""
    cells, overall, defined = rate_cells(T, rate)
    per_class = np.abs(np.where(defined, cells, 0.0) - overall[..., None]).sum(-1)
    ok = defined.all(-1)
    per_class = np.where(ok, per_class, np.nan)
    count = ok.sum(-1)
    squares = (np.where(ok, per_class, 0.0) ** 2).sum(-1)
    mean_square = np.divide(squares, count, out=np.full(np.shape(squares), np.nan), where=count > 0)
    return np.sqrt(mean_square), per_class, ok


def split_among_groups(cells: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Permute group labels over rows given as counts: ``cells`` (G, K) → (resamples, G, K), each group keeping its
    size. Group g's counts are a multivariate hypergeometric draw from what the groups before it left. No resamples
    (``--resamples 0``) give an empty null (0, G, K): its tests are then untested, never an error."""
    cells = np.asarray(cells, np.int64)
    n_groups = cells.shape[0]
    out = np.zeros((resamples, *cells.shape), dtype=np.int64)
    sizes = cells.sum(1)
    pooled = cells.sum(0)
    remaining = np.broadcast_to(pooled, (resamples, cells.shape[1])).copy()
    for g in range(n_groups - 1):
        if g == 0:
            first, _ = stats.permutation_counts(pooled, int(sizes[0]), resamples, rng)
            out[:, 0] = first
        else:
            for b in range(resamples):
                used = np.flatnonzero(remaining[b])
                if used.size and sizes[g]:
                    out[b, g, used] = rng.multivariate_hypergeometric(remaining[b, used], int(sizes[g]),
                                                                      method="marginals")
        remaining -= out[:, g]
    out[:, -1] = remaining
    return out


def shared_support(values: np.ndarray, weights: np.ndarray, masks: list[np.ndarray], exact: bool = False,
                   max_support: int = stats.MAX_SUPPORT) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of the masked entries (snapped to ``max_support`` grid points above that many, unless
    ``exact``) and each mask's weighted counts over them: (support (K,), counts (len(masks), K))."""
    inside = np.logical_or.reduce(masks)
    kept = values[inside]
    if exact:
        support, codes = np.unique(kept, return_inverse=True)
    else:
        compressed = stats.compress(kept, float(kept.min()), float(kept.max()), max_support)
        support, codes = compressed.support, compressed.codes
    counts = np.stack([np.bincount(codes, weights=np.where(m[inside], weights[inside], 0),
                                   minlength=support.size).round().astype(np.int64) for m in masks])
    return support, counts


def two_sided_p(observed: float, null: np.ndarray) -> float:
    """Permutation p-value of |observed| among |null| (with the +1 correction)."""
    return stats.permutation_p_value(abs(observed), np.abs(null))
