"""Per-step densities of a quantile forecast, to see multimodality (the thesis's Fig 5.6: three routes).

The c sorted quantiles at levels (j − ½)/c are an equally weighted sample of the forecast distribution, so a
Gaussian kernel density over them estimates its density. The bandwidth is half of Silverman's rule: the full
rule assumes one mode and smooths three clusters into one.
"""
from __future__ import annotations

import numpy as np

BANDWIDTH_FACTOR = 0.75
PEAK_SHARE = 0.1                 # a local maximum counts as a mode when ≥ 10% of the highest peak …
VALLEY_SHARE = 0.7               # … the dip to its neighbour mode falls below 70% of the lower of the two …
MIN_MASS = 0.1                   # … and at least 10% of the quantiles lie in its basin (tails make ripples)


def bandwidth(points: np.ndarray) -> float:
    points = np.asarray(points, dtype=float)
    sd = points.std(ddof=1) if points.size > 1 else 0.0
    iqr = np.subtract(*np.quantile(points, [0.75, 0.25]))
    spread = min(sd, iqr / 1.349) if iqr > 0 else sd
    if spread <= 0:
        spread = max(abs(points.mean()) * 1e-3, 1e-6)
    return BANDWIDTH_FACTOR * 0.9 * spread * points.size ** (-0.2)


def kde(points: np.ndarray, grid: np.ndarray, h: float | None = None) -> np.ndarray:
    """Gaussian KDE of equally weighted ``points`` on ``grid`` (integrates to 1 over a wide enough grid)."""
    points = np.asarray(points, dtype=float)
    h = bandwidth(points) if h is None else h
    z = (np.asarray(grid, dtype=float)[:, None] - points[None, :]) / h
    return np.exp(-0.5 * z**2).sum(axis=1) / (points.size * h * np.sqrt(2 * np.pi))


def density_map(quantiles: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """(steps, c) quantiles → (steps, len(grid)) densities."""
    return np.stack([kde(row, grid) for row in np.asarray(quantiles, dtype=float)])


def mode_count(quantiles: np.ndarray, points: int = 128, chunk: int = 64) -> np.ndarray:
    """Number of density modes in each row of a (..., c) forecast (vectorised over rows)."""
    q = np.asarray(quantiles, dtype=float)
    flat = q.reshape(-1, q.shape[-1])
    out = np.empty(flat.shape[0], dtype=int)
    for start in range(0, flat.shape[0], chunk):
        rows = flat[start:start + chunk]
        h = np.array([bandwidth(r) for r in rows])[:, None]
        u = np.linspace(0.0, 1.0, points)[None, :]
        lo, hi = rows.min(1, keepdims=True) - 3 * h, rows.max(1, keepdims=True) + 3 * h
        grid = lo + (hi - lo) * u                                              # (r, points)
        z = (grid[:, :, None] - rows[:, None, :]) / h[:, :, None]
        dens = np.exp(-0.5 * z**2).sum(-1)
        mid = dens[:, 1:-1]
        peak = (mid > dens[:, :-2]) & (mid >= dens[:, 2:]) & (mid >= PEAK_SHARE * dens.max(1, keepdims=True))
        for r in range(rows.shape[0]):
            out[start + r] = _separated(dens[r], np.flatnonzero(peak[r]) + 1, grid[r], rows[r])
    return out.reshape(q.shape[:-1])


def _separated(dens: np.ndarray, peaks: np.ndarray, grid: np.ndarray, points: np.ndarray) -> int:
    """Count peaks separated by a real dip and holding real mass: adjacent peaks whose valley stays above
    VALLEY_SHARE of the lower peak are one mode, and a basin (between valleys) with less than MIN_MASS of the
    quantiles is not a route, just a sparse tail (jitter in 111 learned quantiles makes ripples)."""
    kept: list[int] = []
    for p in peaks:
        if kept:
            valley = dens[kept[-1]:p + 1].min()
            if valley > VALLEY_SHARE * min(dens[kept[-1]], dens[p]):
                if dens[p] > dens[kept[-1]]:
                    kept[-1] = p
                continue
        kept.append(int(p))
    if len(kept) < 2:
        return len(kept)
    cuts = [grid[a + int(np.argmin(dens[a:b + 1]))] for a, b in zip(kept[:-1], kept[1:])]
    mass = np.diff(np.concatenate([[0], np.searchsorted(np.sort(points), cuts), [points.size]])) / points.size
    return max(int((mass >= MIN_MASS).sum()), 1)
