"""The smooth calibration error (kernel-smoothed residuals, bandwidth chosen as relplot does): residual masses at
the distinct scores, however many (the point estimate); the bootstrap's resamples put them at the centres of ``CELLS``
equal cells above that many distinct scores."""
from __future__ import annotations

import math

import numpy as np
from scipy import fft as sfft

from fairviz.calibration.results import SMECE_MIN_SIGMA

EXACT_POINTS = 8192          # points of the midpoint rule for masses at the distinct scores (the cells': ≤ CELLS)
DIRECT_POINTS = 2048         # above this many distinct scores the cosine sums are gridded (_cosine_sums_gridded)
GRID_CELLS = 1 << 16         # that grid's cells (more where the frequencies need them)
# The precision of σ* (and of the smooth ECE at it, held by tests/calibration/test_smooth_ece_precision.py): masses
# at the distinct scores, and masses on CELLS equal cells (the resamples above CELLS distinct scores)
SIGMA_TOL_AT_SCORES = 1e-13
SIGMA_TOL_CELLS = 1e-7


def smooth_ece_from_masses(residual: np.ndarray, n: np.ndarray | float, sigma_min: float = SMECE_MIN_SIGMA,
                           near: float | None = None, iterations: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """SmoothECE (Błasiok & Nakkiran, ICLR 2024) from residual masses Σ(y − p̂) on equal cells of [0, 1], each mass
    at its cell's centre.

    smECE_σ = ∫₀¹ |(1/n) Σ_i K_σ(t, p̂_i)(y_i − p̂_i)| dt with K_σ the Gaussian kernel reflected at 0 and 1, and the
    bandwidth is the fixed point σ* = smECE_σ* (smECE_σ decreases in σ), floored at ``sigma_min`` as relplot does.
    The reflected kernel is diagonal in the cosine basis: K_σ(t, s) = 1 + 2 Σ_k e^{−π²k²σ²/2} cos(πkt) cos(πks), so
    smoothing is a DCT-II, a product and a DCT-III, evaluated on as many points as σ needs (≥ 8 per σ).
    Works on batches (last axis = cells); ``near`` (a bandwidth) narrows the first bracket for resamples.
    Returns (smECE, σ*)."""
    residual = np.atleast_2d(np.asarray(residual, dtype=float))
    coef = sfft.dct(residual, type=2, axis=-1) / 2.0               # C_k = Σ_j r_j cos(πk t_j), t_j the centres
    return _fixed_point(coef, n, sigma_min, near, iterations, residual.shape[1])


def smooth_ece_at_points(points: np.ndarray, residual: np.ndarray, n: np.ndarray | float,
                         sigma_min: float = SMECE_MIN_SIGMA, near: float | None = None,
                         iterations: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """The same from residual masses at given points of [0, 1] (the distinct scores: exact), by the cosine sums
    C_k = Σ_j r_j cos(πk p_j) up to the frequency the smallest searched σ needs. With ``near`` the search starts
    at σ ≥ near/4 (fewer frequencies); a row whose fixed point lies below that is searched again from ``sigma_min``.
    Batches: ``residual`` is (batch, points)."""
    points = np.asarray(points, dtype=float)
    residual = np.atleast_2d(np.asarray(residual, dtype=float))
    n = np.broadcast_to(np.asarray(n, dtype=float), (residual.shape[0],))
    floor = sigma_min if near is None or not np.isfinite(near) else max(sigma_min, near / 4)
    value, sigma = _at_points(points, residual, n, floor, near, iterations)
    redo = (sigma <= floor) & (floor > sigma_min)
    if redo.any():
        value[redo], sigma[redo] = _at_points(points, residual[redo], n[redo], sigma_min, None, iterations)
    return value, sigma


def _at_points(points, residual, n, sigma_min, near, iterations) -> tuple[np.ndarray, np.ndarray]:
    k = np.arange(_frequencies(sigma_min))
    if points.size > DIRECT_POINTS:
        coef = _cosine_sums_gridded(points, residual, k.size)
    else:
        coef = np.concatenate([residual @ np.cos(np.pi * np.outer(points, block))      # bounded memory
                               for block in np.array_split(k, max(1, k.size * points.size // (1 << 20)))], axis=1)
    # σ* to 1e-13: the row path and the engine table sum the same masses in another order, and must agree to 1e-12
    return _fixed_point(coef, n, sigma_min, near, iterations, max(EXACT_POINTS, k.size), EXACT_POINTS,
                        SIGMA_TOL_AT_SCORES)


def _cosine_sums_gridded(points: np.ndarray, residual: np.ndarray, frequencies: int) -> np.ndarray:
    """C_k = Σ_j r_j cos(πk p_j), k < ``frequencies``, for many points without a points × frequencies matrix: each
    point is its cell's centre c plus an offset δ (|δ| ≤ 1/(2·GRID_CELLS)), and cos(πk(c + δ)) is its Taylor series
    in δ, Σ_q (πkδ)^q/q! · cos(πkc + qπ/2). Per term q the cells' moments Σ r δ^q go through one DCT-II (even q) or
    DST-II (odd q). The grid has πk/cells ≤ 0.1, so the terms left out weigh below 1e-17 of Σ|r|: exact to rounding."""
    cells = max(GRID_CELLS, 1 << int(np.ceil(np.log2(10 * np.pi * frequencies))))
    cell = np.minimum(np.floor(points * cells), cells - 1).astype(np.int64)
    offset = (points - (cell + 0.5) / cells) * cells                      # in cell widths, within ±1/2
    k = np.arange(frequencies)
    x = np.pi * k / cells                                                 # πk·(one cell width)
    coef = np.zeros((residual.shape[0], frequencies))
    power = np.ones_like(offset)
    terms = 1 + int(np.ceil(np.log(1e-17) / np.log(max(x[-1] / 2, 1e-3)))) if frequencies > 1 else 1
    for q in range(terms):
        moments = np.stack([np.bincount(cell, weights=row * power, minlength=cells) for row in residual])
        if q % 2 == 0:
            basis = sfft.dct(moments, type=2, axis=-1)[:, :frequencies] / 2.0      # Σ_c m_c cos(πk t_c)
        else:                                                                 # Σ_c m_c sin(πk t_c), k ≥ 1
            basis = np.concatenate([np.zeros((residual.shape[0], 1)),
                                    sfft.dst(moments, type=2, axis=-1)[:, :frequencies - 1] / 2.0], axis=1)
        sign = (1.0, -1.0, -1.0, 1.0)[q % 4]                                 # cos(a + qπ/2) = ±cos a or ∓sin a
        coef += sign * (x ** q / math.factorial(q))[None, :] * basis
        power = power * offset
    return coef


def _frequencies(sigma: float) -> int:
    """Frequencies k with e^{−π²k²σ²/2} ≥ 1e-34: beyond them a bandwidth σ leaves nothing."""
    return int(np.ceil(4.0 / max(float(sigma), 1e-9)) + 1)


def _fixed_point(coef: np.ndarray, n, sigma_min: float, near: float | None, iterations: int,
                 m: int, least: int = 256, tol: float = SIGMA_TOL_CELLS) -> tuple[np.ndarray, np.ndarray]:
    """σ* = smECE_σ* and smECE_σ* from the cosine coefficients of the residual masses (integrals on ``least`` to
    ``m`` points). σ* to ``tol``: the search stops when the bracket is narrower than ``tol`` or when |h| ≤ tol at an
    end, and returns the end with the smaller |h|; h = smECE_σ − σ falls at least as fast as σ rises (smECE_σ does
    not rise), so that end lies within ``tol`` of the root."""
    batch = coef.shape[0]
    n = np.broadcast_to(np.asarray(n, dtype=float), (batch,))
    scale = np.maximum(n, 1)[:, None]

    def h(sigma: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """smECE_σ − σ (for all rows, or only the chosen ones: 0 elsewhere)."""
        if rows is None:
            return _smece_at(coef, scale, sigma, m, least) - sigma
        out = np.zeros(batch)
        if rows.any():
            out[rows] = _smece_at(coef[rows], scale[rows], sigma[rows], m, least) - sigma[rows]
        return out

    # Root of h (decreasing in σ) by the Illinois variant of regula falsi, inside a bracket [lo, hi].
    lo, hi = np.full(batch, sigma_min), np.ones(batch)
    if near is not None and np.isfinite(near):
        lo_try, hi_try = np.full(batch, max(sigma_min, near / 4)), np.full(batch, min(1.0, near * 4))
        above_lo, below_hi = h(lo_try) > 0, h(hi_try) <= 0
        lo = np.where(above_lo, np.where(below_hi, lo_try, hi_try), lo)
        hi = np.where(above_lo, np.where(below_hi, hi_try, hi), lo_try)
    h_hi = h(hi)
    at_min = lo <= sigma_min
    h_lo = h(lo) if not at_min.any() else h(lo, ~at_min) + h(lo, at_min)   # finest σ costs most: only if needed
    f_lo, f_hi = h_lo, h_hi                     # h at the ends as computed (h_lo, h_hi: as Illinois scales them)
    at_floor = h_lo <= 0
    active = ~at_floor & (h_hi < 0)
    for _ in range(iterations):
        if not active.any():
            break
        mid = hi - h_hi * (hi - lo) / np.where(h_hi != h_lo, h_hi - h_lo, -1.0)
        mid = np.where((mid <= lo) | (mid >= hi) | ~np.isfinite(mid), (lo + hi) / 2, mid)
        h_mid = h(mid)
        above = active & (h_mid > 0)
        below = active & ~above
        h_hi = np.where(above, h_hi / 2, np.where(below, h_mid, h_hi))       # Illinois: halve the end kept
        h_lo = np.where(below, h_lo / 2, np.where(above, h_mid, h_lo))
        f_lo, f_hi = np.where(above, h_mid, f_lo), np.where(below, h_mid, f_hi)
        lo, hi = np.where(above, mid, lo), np.where(below, mid, hi)
        active &= (hi - lo > tol) & (np.abs(h_mid) > tol)
    sigma = np.where(at_floor, sigma_min, np.where(np.abs(f_lo) <= np.abs(f_hi), lo, hi))
    return _smece_at(coef, scale, sigma, m, least), sigma


def _smece_at(coef: np.ndarray, scale: np.ndarray, sigma: np.ndarray, m: int, least: int = 256) -> np.ndarray:
    """smECE_σ for each row of cosine coefficients at its own σ: the midpoint rule on a grid as fine as the
    smallest σ needs (``least`` to ``m`` points)."""
    kmax = int(min(m, coef.shape[1], _frequencies(float(sigma.min()))))
    length = int(min(m, max(least, 1 << int(np.ceil(np.log2(2 * kmax))))))
    k = np.arange(min(kmax, length))
    spectrum = np.zeros((coef.shape[0], length))
    spectrum[:, : k.size] = coef[:, : k.size] * np.exp(-((np.pi * k) ** 2 / 2.0)[None, :] * (sigma[:, None] ** 2))
    rho = sfft.dct(spectrum, type=3, axis=-1) / scale
    return np.abs(rho).mean(-1)


def smooth_ece(y: np.ndarray, score: np.ndarray, weights: np.ndarray | None = None) -> tuple[float, float]:
    """SmoothECE of one set of rows (``weights``: rows per entry): masses at the distinct scores, however many
    (above ``DIRECT_POINTS`` their cosine sums are gridded, exact to rounding). Returns (smECE, bandwidth σ*)."""
    score = np.asarray(score, dtype=float)
    if score.size == 0:
        return float("nan"), float("nan")
    gap = np.asarray(y, float) - score
    if weights is not None:
        gap = gap * weights
    rows = score.size if weights is None else float(np.sum(weights))
    distinct, at = np.unique(score, return_inverse=True)
    value, sigma = smooth_ece_at_points(distinct, np.bincount(at.reshape(-1), weights=gap), rows)
    return float(value[0]), float(sigma[0])
