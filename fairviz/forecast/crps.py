"""Scores of quantile forecasts: CRPS ([3] Eq. 5.5–5.7), the ordering penalty (Eq. 5.8), pinball loss,
central-interval coverage and width, PIT, and the skill scores of Table 5.2.

Shapes: a forecast holds ``c`` quantile values per step, ``q`` of shape (..., c), against a scalar truth ``y``
of shape (...). The PTN's ``c = 111`` outputs are sorted and labelled with the levels τ_j = (j − ½)/c ([3] ch. 5).

Two CRPS forms, identical for an equally weighted ensemble:
- energy form (the thesis): mean|q_j − y| − ½·mean_{j,k}|q_j − q_k|; its double sum is O(c log c) after sorting,
  Σ_{j,k}|q_j − q_k| = Σ_j 2(2j − c − 1) q_(j);
- quantile form: 2·Σ_j w_j·ρ_{τ_j}(y − q_j) with pinball loss ρ_τ(u) = u(τ − 1{u < 0}). With τ_j = (j − ½)/c and
  w_j = 1/c it equals the energy form exactly; for arbitrary uploaded levels, w_j are the widths of the level
  cells on [0, 1] (midpoint rule of CRPS = 2∫₀¹ ρ_τ dτ), an approximation that improves with more levels.
  This cell-width form is fairviz's CRPS everywhere it is shown. The equal-weight form 2·mean_j ρ_{τ_j} (for
  example scoringrules' quantile CRPS) weighs every given level alike: on uneven levels it differs (on the
  bundled Lorenz forecasts' 17 levels, 0.005 … 0.995, it is 18–19% lower), so ``crps_equal_weights`` is reported
  beside it, never instead.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

N_QUANTILES = 111
OMEGA = 0.0075                       # weight of the ordering penalty in the training loss (Eq. 5.9)
BANDS = (0.5, 0.8, 0.9, 0.99)        # nominal central coverages shown as nested fans


def levels(c: int = N_QUANTILES) -> np.ndarray:
    """τ_j = (j − ½)/c, j = 1…c: where the CRPS-optimal c-point ensemble sits (the median is j = (c + 1)/2)."""
    return (np.arange(1, c + 1) - 0.5) / c


# ----------------------------------------------------------------------------------------------- CRPS

def crps_ensemble(q: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Energy-form CRPS of each c-member ensemble (any order) against its truth: (..., c), (...) → (...)."""
    q = np.asarray(q, dtype=float)
    y = np.asarray(y, dtype=float)
    c = q.shape[-1]
    t1 = np.abs(q - y[..., None]).mean(axis=-1)
    ranked = np.sort(q, axis=-1)
    weights = 2.0 * (2.0 * np.arange(1, c + 1) - c - 1)
    t2 = (ranked * weights).sum(axis=-1) / c**2
    return t1 - 0.5 * t2


def crps_pairwise(q: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The same score by the literal double sum of Eq. 5.6 (O(c²); a reference for tests)."""
    q = np.asarray(q, dtype=float)
    y = np.asarray(y, dtype=float)
    t1 = np.abs(q - y[..., None]).mean(axis=-1)
    t2 = np.abs(q[..., :, None] - q[..., None, :]).mean(axis=(-1, -2))
    return t1 - 0.5 * t2


def crps_forecast(q: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Eq. 5.7 for whole forecasts: (N, steps, c) against (N, steps) → (N,), averaged over the steps."""
    return crps_ensemble(q, y).mean(axis=-1)


def crps_gaussian(mu, sigma, y) -> np.ndarray:
    """Closed-form CRPS of N(μ, σ²) (Gneiting & Raftery 2007): a test oracle for the discrete forms."""
    mu, sigma, y = (np.asarray(a, dtype=float) for a in (mu, sigma, y))
    z = (y - mu) / sigma
    return sigma * (z * (2 * sps.norm.cdf(z) - 1) + 2 * sps.norm.pdf(z) - 1 / np.sqrt(np.pi))


def level_weights(tau: np.ndarray) -> np.ndarray:
    """Width of each level's cell on [0, 1] (boundaries halfway between neighbours): sums to 1."""
    tau = np.asarray(tau, dtype=float)
    edges = np.concatenate([[0.0], (tau[1:] + tau[:-1]) / 2, [1.0]])
    return np.diff(edges)


def pinball(q: np.ndarray, y: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """Pinball (quantile) loss per level: ρ_τ(y − q) for (..., c) quantiles at levels τ (c,) → (..., c)."""
    u = np.asarray(y, dtype=float)[..., None] - np.asarray(q, dtype=float)
    return u * (np.asarray(tau) - (u < 0))


def crps_quantiles(q: np.ndarray, y: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """CRPS from quantiles at arbitrary increasing levels: 2·Σ_j w_j ρ_{τ_j}(y − q_j) (exact for τ_j = (j−½)/c)."""
    return 2.0 * (pinball(q, y, tau) * level_weights(tau)).sum(axis=-1)


def crps_equal_weights(q: np.ndarray, y: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """The equal-weight form 2·mean_j ρ_{τ_j}(y − q_j): every level counts alike whatever its spacing (shown
    beside ``crps_quantiles`` so a reader comparing with another library knows which form they hold)."""
    return 2.0 * pinball(q, y, tau).mean(axis=-1)


CRPS_DEFINITION = ("CRPS = 2 Σ_j w_j ρ_τj(y − q_j): the pinball loss ρ_τ(u) = u(τ − 1{u < 0}) integrated over the "
                   "quantile levels τ_j, each weighted by the width w_j of its cell on [0, 1] (cell edges halfway "
                   "between neighbouring levels)")


# ----------------------------------------------------------------------------------------------- ordering

def order_penalty(q: np.ndarray) -> float:
    """Eq. 5.8: mean of max(0, q_j − q_{j+1}) over steps and adjacent pairs; 0 iff every row is non-decreasing."""
    q = np.asarray(q, dtype=float)
    if q.shape[-1] < 2:
        return 0.0
    return float(np.maximum(0.0, q[..., :-1] - q[..., 1:]).mean())


def crossing_rows(q: np.ndarray) -> np.ndarray:
    """Rows whose quantiles decrease somewhere (quantile crossing)."""
    return (np.diff(q, axis=-1) < 0).any(axis=-1)


# ----------------------------------------------------------------------------------------------- intervals

def quantile_at(q: np.ndarray, tau: np.ndarray, level: float) -> np.ndarray:
    """The quantile at ``level`` by linear interpolation between the given levels (rows sorted); NaN when
    ``level`` lies outside the levels given (a band the forecast does not describe is undefined, not 0)."""
    tau = np.asarray(tau, dtype=float)
    if level < tau[0] - 1e-12 or level > tau[-1] + 1e-12:
        return np.full(q.shape[:-1], np.nan)
    k = int(np.clip(np.searchsorted(tau, level) - 1, 0, tau.size - 2)) if tau.size > 1 else 0
    if tau.size == 1:
        return q[..., 0].astype(float)
    w = (level - tau[k]) / (tau[k + 1] - tau[k])
    w = min(max(w, 0.0), 1.0)
    return (1 - w) * q[..., k] + w * q[..., k + 1]


def band_limits(coverage: float) -> tuple[float, float]:
    """Levels of the central interval with nominal ``coverage``: ((1 − p)/2, (1 + p)/2)."""
    return (1 - coverage) / 2, (1 + coverage) / 2


def central_band(q: np.ndarray, tau: np.ndarray, coverage: float) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = band_limits(coverage)
    return quantile_at(q, tau, lo), quantile_at(q, tau, hi)


def band_supported(tau: np.ndarray, coverage: float) -> bool:
    lo, hi = band_limits(coverage)
    return bool(tau[0] <= lo + 1e-12 and tau[-1] >= hi - 1e-12)


def inside(q: np.ndarray, y: np.ndarray, tau: np.ndarray, coverage: float) -> np.ndarray:
    """1.0 where the truth lies in the central band (ends included), NaN where the band is undefined."""
    lo, hi = central_band(q, tau, coverage)
    out = ((y >= lo) & (y <= hi)).astype(float)
    return np.where(np.isnan(lo) | np.isnan(hi), np.nan, out)


def width(q: np.ndarray, tau: np.ndarray, coverage: float) -> np.ndarray:
    lo, hi = central_band(q, tau, coverage)
    return hi - lo


def pit(q: np.ndarray, y: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """Probability integral transform F(y), read off the quantile function by linear interpolation between the
    given levels (rows sorted). Outside the lowest/highest quantile the tail mass is known but not its shape, so
    the truth gets the middle of that tail: τ_1/2 below, (1 + τ_c)/2 above. Calibrated forecasts give a uniform
    PIT; a U shape means too narrow, a hump too wide, a slope bias."""
    q = np.asarray(q, dtype=float)
    y = np.asarray(y, dtype=float)[..., None]
    tau = np.asarray(tau, dtype=float)
    c = tau.size
    k = (q <= y).sum(axis=-1) - 1                       # last quantile at or below the truth (−1: below all)
    lo = np.clip(k, 0, c - 1)
    hi = np.clip(k + 1, 0, c - 1)
    q_lo = np.take_along_axis(q, lo[..., None], -1)[..., 0]
    q_hi = np.take_along_axis(q, hi[..., None], -1)[..., 0]
    span = q_hi - q_lo
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(span > 0, (y[..., 0] - q_lo) / span, 0.0)
    inner = tau[lo] + frac * (tau[hi] - tau[lo])
    out = np.where(k < 0, tau[0] / 2, np.where(k >= c - 1, (1 + tau[-1]) / 2, inner))
    exact_top = (k >= c - 1) & (y[..., 0] == q[..., -1])
    return np.where(exact_top, tau[-1], out)


def pit_histogram(pit_values: np.ndarray, bins: int = 10) -> np.ndarray:
    """Share of PIT values per equal-width bin on [0, 1] (uniform → every bar at 1/bins)."""
    values = np.asarray(pit_values, dtype=float)
    values = values[np.isfinite(values)]
    counts, _ = np.histogram(values, bins=bins, range=(0.0, 1.0))
    return counts / max(values.size, 1)


# ----------------------------------------------------------------------------------------------- baseline, skill

def gaussian_quantiles(mean: np.ndarray, sd: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """The thesis's baseline: N(forecast, MAE²) turned into quantiles at levels τ: (...), (...) → (..., c)."""
    return np.asarray(mean, float)[..., None] + np.asarray(sd, float)[..., None] * sps.norm.ppf(tau)


@dataclass(frozen=True)
class Skill:
    """Table 5.2's form: SS_q = 1 − Q_q(CRPS_model)/Q_q(CRPS_baseline) at the CRPS quartiles, and the share of
    forecasts whose own skill 1 − CRPS_model/CRPS_baseline is ≥ 0 (the seed's "1 − percentile of zero")."""
    quartiles: tuple[float, float, float]
    outperformed: float
    n: int
    model_quartiles: tuple[float, float, float]
    baseline_quartiles: tuple[float, float, float]

    def to_dict(self) -> dict:
        return {"skill_q1": self.quartiles[0], "skill_q2": self.quartiles[1], "skill_q3": self.quartiles[2],
                "percent_outperformed": 100 * self.outperformed, "n_forecasts": self.n,
                "crps_model_quartiles": list(self.model_quartiles),
                "crps_baseline_quartiles": list(self.baseline_quartiles)}


def skill(crps_model: np.ndarray, crps_baseline: np.ndarray) -> Skill:
    model = np.asarray(crps_model, dtype=float)
    base = np.asarray(crps_baseline, dtype=float)
    ok = np.isfinite(model) & np.isfinite(base)
    model, base = model[ok], base[ok]
    if model.size == 0:
        nan3 = (float("nan"),) * 3
        return Skill(nan3, float("nan"), 0, nan3, nan3)
    qm = np.quantile(model, [0.25, 0.5, 0.75])
    qb = np.quantile(base, [0.25, 0.5, 0.75])
    with np.errstate(divide="ignore", invalid="ignore"):
        per = 1 - model / base
        quartiles = tuple(float(1 - m / b) if b > 0 else float("nan") for m, b in zip(qm, qb))
    per = per[np.isfinite(per)]
    share = float((per >= 0).mean()) if per.size else float("nan")
    return Skill(quartiles, share, int(model.size), tuple(map(float, qm)), tuple(map(float, qb)))


# Table 5.2 of the thesis (seven runs aggregated); shown next to our numbers, never recomputed.
TABLE_5_2 = {
    "columns": ["Chaos vs Det. (NVAR)", "Chaos vs TiDE", "Microclimate vs NBM", "Microclimate vs TiDE"],
    "First quartile": [0.40, 0.82, 0.42, 0.21],
    "Second quartile": [0.57, 0.73, 0.59, 0.18],
    "Third quartile": [0.68, 0.56, 0.70, 0.16],
    "Percent of forecasts outperformed by PTN": [94.3, 99.8, 96.4, 77.5],
}
