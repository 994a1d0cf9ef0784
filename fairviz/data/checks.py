"""Checks of what the mapping claims, on the data itself: does the score run the way the mapping says?

A score that is the probability of the *other* label value (``p_default`` beside ``approved = yes``) reverses every
conclusion while every page still runs. Two signs give it away, each with its uncertainty: an AUROC below 0.5 whose
95% interval excludes 0.5 (DeLong's variance), and a calibration slope (logistic regression of the label on
logit p̂) whose 95% interval is below 0. Either one stops the audit until the user confirms the direction.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import statsmodels.api as sm
from scipy.special import logit
from scipy.stats import norm

from fairviz.core.delong import delong_paired

EPS = 1e-6


@dataclass(frozen=True)
class DirectionCheck:
    auroc: float
    auroc_ci: tuple[float, float]
    slope: float | None
    slope_ci: tuple[float, float] | None
    reversed: bool

    def describe(self, score: str, label: str, positive) -> str:
        """One plain sentence for the user, naming the columns and the label value."""
        slope = (f" and the calibration slope is {self.slope:+.2f} (95% CI {self.slope_ci[0]:+.2f} to "
                 f"{self.slope_ci[1]:+.2f})" if self.slope is not None and self.slope_ci else "")
        return (f"The score '{score}' runs the other way: its AUROC for {label} = {positive} is {self.auroc:.2f} "
                f"(95% CI {self.auroc_ci[0]:.2f} to {self.auroc_ci[1]:.2f}){slope}. Higher scores go with "
                f"{label} ≠ {positive}: the score is probably the probability of the other value. Flip the score "
                f"(1 − score) or choose the other positive label value.")


def check_direction(y, score, weight=None) -> DirectionCheck:
    """AUROC with DeLong's 95% interval and the calibration slope with its Wald interval; ``reversed`` when either
    interval lies entirely on the wrong side (AUROC < 0.5, slope < 0)."""
    y = np.asarray(y).astype(int)
    score = np.asarray(score, float)
    w = np.ones(y.size) if weight is None else np.asarray(weight, float)
    single = delong_paired(y, score, np.full(score.size, 0.5), w)     # vs a constant score: AUROC 0.5, no variance
    half = norm.ppf(0.975) * single.se
    auroc_ci = (single.auc_a - half, single.auc_a + half)
    slope, slope_ci = _calibration_slope(y, score, w)
    reversed_ = auroc_ci[1] < 0.5 or (slope_ci is not None and slope_ci[1] < 0)
    return DirectionCheck(single.auc_a, auroc_ci, slope, slope_ci, reversed_)


def _calibration_slope(y, score, w) -> tuple[float | None, tuple[float, float] | None]:
    x = logit(np.clip(score, EPS, 1 - EPS))
    if np.ptp(x) == 0 or y.min() == y.max():
        return None, None
    try:
        fit = sm.GLM(y, sm.add_constant(x), family=sm.families.Binomial(), freq_weights=w).fit()
    except (ValueError, np.linalg.LinAlgError):
        return None, None
    slope, se = float(fit.params[1]), float(fit.bse[1])
    if not (math.isfinite(slope) and math.isfinite(se)):
        return None, None
    return slope, (slope - 1.96 * se, slope + 1.96 * se)
