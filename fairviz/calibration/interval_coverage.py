"""Coverage of central prediction intervals, by group: quantile predictions at τ and 1 − τ make an interval of nominal
coverage 1 − 2τ; each group's observed coverage has an exact (Clopper–Pearson) interval and binomial test, and a χ²
test asks whether every group covers at the same rate. Entries carry integer weights
(``fairviz.calibration.entries``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats as sps

from fairviz.calibration.entries import finite_values, weighted_mean
from fairviz.calibration.reliability import binomial_interval
from fairviz.data import DataError


@dataclass(frozen=True)
class Coverage:
    """How often y falls in the central interval between the quantile predictions at ``levels``."""
    nominal: float
    levels: tuple[float, float]
    n: int
    inside: int
    rate: float
    ci_low: float                 # Clopper–Pearson
    ci_high: float
    p: float                      # exact binomial test of rate = nominal
    mean_width: float



def central_bands(quantiles, levels: Sequence[float], size: int) -> list[tuple[float, tuple[float, float], np.ndarray,
                                                                        np.ndarray]]:
    """(nominal, (τ, 1 − τ), lower, upper) for each symmetric pair of quantile levels, widest first."""
    if quantiles is None:
        return []
    q = np.asarray(quantiles, dtype=float)
    levels = np.asarray(levels, dtype=float)
    if q.ndim != 2 or q.shape != (size, levels.size):
        raise DataError(f"The quantile predictions need one column per level ({levels.size}) and one row per entry.")
    if np.any(~np.isfinite(levels)) or np.any((levels <= 0) | (levels >= 1)):
        raise DataError("Quantile levels must lie strictly between 0 and 1.")
    finite_values(q, "quantile predictions")
    out = []
    for i in np.argsort(levels):
        tau = levels[i]
        partner = np.flatnonzero(np.isclose(levels, 1 - tau, rtol=0, atol=1e-9))
        if tau < 0.5 - 1e-9 and partner.size:
            lo, hi = q[:, i], q[:, partner[0]]
            if np.any(lo > hi):
                raise DataError(f"The {tau:g} quantile lies above the {1 - tau:g} quantile in "
                                f"{int(np.count_nonzero(lo > hi)):,} rows.")
            out.append((round(1 - 2 * tau, 10), (float(tau), float(1 - tau)), lo, hi))
    if not out:
        raise DataError("The quantile levels hold no pair τ and 1 − τ, so no central interval can be formed.")
    return out


def coverage(y: np.ndarray, lower: np.ndarray, upper: np.ndarray, w: np.ndarray, nominal: float,
             levels: tuple[float, float], level: float = 0.95) -> Coverage:
    """Share of rows with lower ≤ y ≤ upper (ends included), its Clopper–Pearson interval and the exact binomial test
    against the nominal coverage."""
    n = int(round(w.sum()))
    inside = int(round(w[(y >= lower) & (y <= upper)].sum()))
    if n == 0:
        return Coverage(nominal, levels, 0, 0, np.nan, np.nan, np.nan, np.nan, np.nan)
    low, high = binomial_interval(inside, n, level, "clopper_pearson")
    p = sps.binomtest(inside, n, nominal).pvalue
    return Coverage(nominal, levels, n, inside, inside / n, float(low), float(high), float(p),
                    weighted_mean(upper - lower, w))


def equal_coverage_p(cover: list[Coverage]) -> float:
    """χ² test that every group covers at the same rate (G × 2 table of inside and outside)."""
    table = np.array([[c.inside, c.n - c.inside] for c in cover if c.n > 0], dtype=float)
    if table.shape[0] < 2 or np.any(table.sum(0) == 0):
        return float("nan")
    return float(sps.chi2_contingency(table, correction=False).pvalue)
