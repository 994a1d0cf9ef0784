"""The smooth calibration error (kernel-smoothed residuals, bandwidth chosen as relplot does) on cell masses."""
from __future__ import annotations

import numpy as np
from scipy import fft as sfft

from fairviz.calibration.results import CELLS, SMECE_MIN_SIGMA


def smooth_ece_from_masses(residual: np.ndarray, n: np.ndarray | float, sigma_min: float = SMECE_MIN_SIGMA,
                           near: float | None = None, iterations: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """SmoothECE (Błasiok & Nakkiran, ICLR 2024) from residual masses Σ(y − p̂) on equal cells of [0, 1].

    smECE_σ = ∫₀¹ |(1/n) Σ_i K_σ(t, p̂_i)(y_i − p̂_i)| dt with K_σ the Gaussian kernel reflected at 0 and 1, and the
    bandwidth is the fixed point σ* = smECE_σ* (smECE_σ decreases in σ), floored at ``sigma_min`` as relplot does.
    The reflected kernel is diagonal in the cosine basis: K_σ(t, s) = 1 + 2 Σ_k e^{−π²k²σ²/2} cos(πkt) cos(πks), so
    smoothing is a DCT-II, a product and a DCT-III, evaluated on as many points as σ needs (≥ 8 per σ).
    Works on batches (last axis = cells); ``near`` (a bandwidth) narrows the first bracket for resamples.
    Returns (smECE, σ*)."""
    residual = np.atleast_2d(np.asarray(residual, dtype=float))
    batch, m = residual.shape
    n = np.broadcast_to(np.asarray(n, dtype=float), (batch,))
    coef = sfft.dct(residual, type=2, axis=-1) / 2.0               # C_k = Σ_j r_j cos(πk t_j)
    scale = np.maximum(n, 1)[:, None]

    def h(sigma: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """smECE_σ − σ (for all rows, or only the chosen ones: 0 elsewhere)."""
        if rows is None:
            return _smece_at(coef, scale, sigma, m) - sigma
        out = np.zeros(batch)
        if rows.any():
            out[rows] = _smece_at(coef[rows], scale[rows], sigma[rows], m) - sigma[rows]
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
        lo, hi = np.where(above, mid, lo), np.where(below, mid, hi)
        active &= (hi - lo > 1e-6 * hi) & (np.abs(h_mid) > 1e-7)
    sigma = np.where(at_floor, sigma_min, np.where(np.abs(h_lo) <= np.abs(h_hi), lo, hi))
    return _smece_at(coef, scale, sigma, m), sigma


def _smece_at(coef: np.ndarray, scale: np.ndarray, sigma: np.ndarray, m: int) -> np.ndarray:
    """smECE_σ for each row of DCT coefficients at its own σ, on a grid as fine as the smallest σ needs."""
    kmax = int(min(m, np.ceil(4.0 / max(float(sigma.min()), 1e-9)) + 1))   # e^{−π²k²σ²/2} < 1e-34 beyond
    length = int(min(m, max(256, 1 << int(np.ceil(np.log2(2 * kmax))))))
    k = np.arange(min(kmax, length))
    spectrum = np.zeros((coef.shape[0], length))
    spectrum[:, : k.size] = coef[:, : k.size] * np.exp(-((np.pi * k) ** 2 / 2.0)[None, :] * (sigma[:, None] ** 2))
    rho = sfft.dct(spectrum, type=3, axis=-1) / scale
    return np.abs(rho).mean(-1)


def smooth_ece(y: np.ndarray, score: np.ndarray, cells: int = CELLS) -> tuple[float, float]:
    """SmoothECE of one set of rows. Returns (smECE, bandwidth σ*)."""
    score = np.asarray(score, dtype=float)
    if score.size == 0:
        return float("nan"), float("nan")
    cell = _cell_index(score, cells)
    residual = np.bincount(cell, weights=np.asarray(y, float) - score, minlength=cells)
    value, sigma = smooth_ece_from_masses(residual, score.size)
    return float(value[0]), float(sigma[0])


def _cell_index(score: np.ndarray, cells: int = CELLS) -> np.ndarray:
    return np.minimum(np.floor(np.asarray(score, float) * cells), cells - 1).astype(np.int64)
