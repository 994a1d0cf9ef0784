"""Knee points of a sorted-residual curve (seed 000 §7.1): quantile grid → LOWESS (span 0.1) → Kneedle (S = 1).

The curve is evaluated on a fixed percentile grid, so LOWESS is the same local-linear smoother for every
curve. ``lowess_grid`` smooths a whole batch of curves at once (the bootstrap re-detects knees in every
resample); it reproduces statsmodels' ``lowess`` on the grid (tested to 1e-9). Kneedle itself is ``kneed``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from kneed import KneeLocator

GRID_SIZE = 1001
LOWESS_FRAC = 0.1
LOWESS_ITERATIONS = 3
SENSITIVITY = 1.0
MIN_N = 50
RELIABLE_N = 1000          # seed 000 App. B: below this per group, knees are shown with a warning


@dataclass(frozen=True)
class Knee:
    side: str               # "left" (end of the steep lower tail) or "right" (start of the steep upper tail)
    percentile: float       # q, a fraction in [0, 1]
    residual: float         # r = the raw (unsmoothed) quantile at q
    boundary: bool = False  # knee at q = 0 or 1: kept, but flagged (spec D-6)

    def to_dict(self) -> dict:
        return {"side": self.side, "percentile": self.percentile, "residual": self.residual,
                "boundary": self.boundary}


@dataclass(frozen=True)
class KneeSettings:
    grid_size: int = GRID_SIZE
    frac: float = LOWESS_FRAC
    iterations: int = LOWESS_ITERATIONS
    sensitivity: float = SENSITIVITY
    min_n: int = MIN_N


def percentile_grid(size: int = GRID_SIZE) -> np.ndarray:
    return np.linspace(0.0, 1.0, size)


def quantile_on_grid(sorted_values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Q(p) = d_(⌈np⌉) with Q(0) = d_(1), for a sorted sample (works on the last axis of a batch)."""
    n = sorted_values.shape[-1]
    idx = np.clip(np.ceil(n * grid - 1e-12).astype(np.int64), 1, n) - 1
    return sorted_values[..., idx]


@lru_cache(maxsize=8)
def _windows(size: int, frac: float) -> tuple[np.ndarray, np.ndarray]:
    """Neighbour indices (size, k) and tricube weights for LOWESS on a uniform grid of ``size`` points."""
    x = percentile_grid(size)
    k = int(frac * size + 1e-10)
    centre = np.arange(size)
    left = np.clip(centre - k // 2, 0, size - k)
    # statsmodels slides the window to minimise the radius; on a uniform grid this is the centred window
    better = (left + k < size) & (x[np.minimum(left + k, size - 1)] - x[centre] < x[centre] - x[left])
    left = np.where(better, left + 1, left)
    idx = left[:, None] + np.arange(k)[None, :]
    radius = np.maximum(x[centre] - x[idx[:, 0]], x[idx[:, -1]] - x[centre])
    dist = np.abs(x[idx] - x[centre, None]) / radius[:, None]
    tricube = np.where(dist < 1, (1 - dist ** 3) ** 3, 0.0)
    return idx, tricube


def lowess_grid(curves: np.ndarray, frac: float = LOWESS_FRAC, iterations: int = LOWESS_ITERATIONS,
                chunk: int = 64) -> np.ndarray:
    """LOWESS of each row of ``curves`` (shape (B, m)) against the uniform grid linspace(0, 1, m)."""
    curves = np.atleast_2d(np.asarray(curves, dtype=float))
    out = np.empty_like(curves)
    for start in range(0, curves.shape[0], chunk):
        out[start:start + chunk] = _lowess_chunk(curves[start:start + chunk], frac, iterations)
    return out


def _lowess_chunk(y: np.ndarray, frac: float, iterations: int) -> np.ndarray:
    m = y.shape[1]
    idx, tricube = _windows(m, frac)
    x = percentile_grid(m)
    xw = x[idx]                                        # (m, k)
    yw = y[:, idx]                                     # (B, m, k)
    robust = np.ones_like(y)
    fitted = None
    for step in range(iterations + 1):
        w = tricube[None] * robust[:, idx]
        fitted = _local_linear(xw, yw, w, x)
        if step == iterations:
            break
        resid = np.abs(y - fitted)
        scale = 6.0 * np.median(resid, axis=1, keepdims=True)
        u = np.divide(resid, scale, out=np.zeros_like(resid), where=scale > 0)
        robust = np.where(u < 1, (1 - u ** 2) ** 2, 0.0)
        robust = np.where(scale > 0, robust, 1.0)
    return fitted


def _local_linear(xw: np.ndarray, yw: np.ndarray, w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Weighted least-squares line through each window, evaluated at the window's centre."""
    s0 = w.sum(-1)
    s1 = np.einsum("bmk,mk->bm", w, xw)
    s2 = np.einsum("bmk,mk->bm", w, xw * xw)
    wy = w * yw
    t0 = wy.sum(-1)
    t1 = np.einsum("bmk,mk->bm", wy, xw)
    s0 = np.where(s0 > 0, s0, 1.0)
    mean_x, mean_y = s1 / s0, t0 / s0
    sxx = s2 - s0 * mean_x ** 2
    sxy = t1 - s0 * mean_x * mean_y
    slope = np.divide(sxy, sxx, out=np.zeros_like(sxy), where=sxx > 1e-12 * s0)
    return mean_y + slope * (x[None, :] - mean_x)


def kneedle(grid: np.ndarray, smooth: np.ndarray, sensitivity: float = SENSITIVITY) -> tuple[float | None, float | None]:
    """Left (concave) and right (convex) knees of one increasing smoothed curve, as percentiles."""
    if not np.all(np.isfinite(smooth)) or np.ptp(smooth) <= 1e-12:
        return None, None
    left = KneeLocator(grid, smooth, S=sensitivity, curve="concave", direction="increasing",
                       interp_method="interp1d", online=False).knee
    right = KneeLocator(grid, smooth, S=sensitivity, curve="convex", direction="increasing",
                        interp_method="interp1d", online=False).knee
    return (None if left is None else float(left)), (None if right is None else float(right))


def detect_knees(residuals: np.ndarray, settings: KneeSettings = KneeSettings(),
                 sorted_input: bool = False) -> tuple[Knee | None, Knee | None]:
    """The two knees (left, right) of one residual sample; ``None`` where there is none (spec D-6)."""
    d = np.asarray(residuals, dtype=float)
    d = d if sorted_input else np.sort(d, kind="stable")
    if d.size < settings.min_n or d[-1] == d[0]:
        return None, None
    grid = percentile_grid(settings.grid_size)
    raw = quantile_on_grid(d, grid)
    smooth = lowess_grid(raw[None, :], settings.frac, settings.iterations)[0]
    return _as_knees(grid, raw, *kneedle(grid, smooth, settings.sensitivity))


def quantiles_from_counts(support: np.ndarray, counts: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Q(p) = d_(⌈np⌉) of samples given as count vectors over a sorted support (rows of ``counts``), without
    expanding or sorting them: the bootstrap's resamples are count vectors already."""
    cum = np.cumsum(counts, axis=1)
    n = cum[:, -1:]
    rank = np.clip(np.ceil(n * grid[None, :] - 1e-9), 1, None)          # 1-based order statistic
    index = np.stack([np.searchsorted(c, r, side="left") for c, r in zip(cum, rank)])
    return support[np.minimum(index, support.size - 1)]


def detect_knees_batch(curves: np.ndarray, settings: KneeSettings = KneeSettings(), progress=None,
                       on_grid: bool = False) -> np.ndarray:
    """Knee percentiles and residuals for many samples: array (B, 4) of (q_left, r_left, q_right, r_right), NaN
    where a knee is missing. ``curves`` are sorted samples, or quantile curves on the grid when ``on_grid``.
    Used by the end-to-end bootstrap of F_h and F_v."""
    grid = percentile_grid(settings.grid_size)
    raw = curves if on_grid else quantile_on_grid(curves, grid)
    smooth = lowess_grid(raw, settings.frac, settings.iterations)
    out = np.full((raw.shape[0], 4), np.nan)
    for b in range(raw.shape[0]):
        left, right = _as_knees(grid, raw[b], *kneedle(grid, smooth[b], settings.sensitivity))
        if left:
            out[b, :2] = left.percentile, left.residual
        if right:
            out[b, 2:] = right.percentile, right.residual
        if progress is not None and b % 50 == 0:
            progress(b / raw.shape[0])
    return out


def _as_knees(grid: np.ndarray, raw: np.ndarray, left: float | None,
              right: float | None) -> tuple[Knee | None, Knee | None]:
    def make(side: str, q: float | None) -> Knee | None:
        if q is None:
            return None
        r = float(raw[int(np.argmin(np.abs(grid - q)))])
        return Knee(side, q, r, boundary=q <= 0.0 or q >= 1.0)

    knees = [k for k in (make("left", left), make("right", right)) if k is not None]
    if len(knees) == 2 and knees[0].percentile > knees[1].percentile:
        # the concave knee lies right of the convex one on odd curves: name them by position
        knees = [Knee("left", knees[1].percentile, knees[1].residual, knees[1].boundary),
                 Knee("right", knees[0].percentile, knees[0].residual, knees[0].boundary)]
    by_side = {k.side: k for k in knees}
    return by_side.get("left"), by_side.get("right")
