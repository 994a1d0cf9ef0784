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
from fairviz.data.model import DataError, plain_value

EPS = 1e-6
MIN_PER_CLASS = 10      # fewer rows of a label value: DeLong's normal interval means little (4 rows give "0 to 0")


@dataclass(frozen=True)
class DirectionCheck:
    auroc: float
    auroc_ci: tuple[float, float]
    slope: float | None
    slope_ci: tuple[float, float] | None
    reversed: bool

    def describe(self, score: str, label: str, positive, other=None) -> str:
        """One plain sentence for the user, naming the columns and the label values."""
        positive, other = plain_value(positive), plain_value(other)
        slope = (f" and the calibration slope is {self.slope:+.2f} (95% CI {self.slope_ci[0]:+.2f} to "
                 f"{self.slope_ci[1]:+.2f})" if self.slope is not None and self.slope_ci else "")
        went = f"{label} = {other}" if other is not None else f"{label} ≠ {positive}"
        return (f"The score '{score}' runs the other way: higher scores go with {went}, not with {label} = "
                f"{positive} (AUROC for {label} = {positive}: {self.auroc:.2f}, 95% CI {self.auroc_ci[0]:.2f} to "
                f"{self.auroc_ci[1]:.2f}{slope}). It is probably the probability of {went}: use 1 − {score} as the "
                f"probability of {label} = {positive}, or choose the other label value.")


class ScoreDirectionError(DataError):
    """The score runs the other way from what the mapping says: the audit stops until the user confirms the
    direction (the app's button, the CLI's --score-direction). ``check`` holds the numbers."""

    def __init__(self, message: str, check: DirectionCheck):
        super().__init__(message)
        self.check = check


def confirm_direction(y, score, weight, *, score_name: str, label: str, positive, other,
                      direction: str | None) -> str:
    """Run the check unless the user already said which way the score runs. A reversed score with an unconfirmed
    direction raises ``ScoreDirectionError``; confirmed as it is, the disagreement becomes a note (returned, '' when
    there is nothing to say)."""
    y = np.asarray(y)
    w = np.ones(y.size) if weight is None else np.asarray(weight, float)
    if direction == "reversed" or min(w[y == 1].sum(), w[y == 0].sum()) < MIN_PER_CLASS:
        return ""
    check = check_direction(y, score, weight, always_slope=False)
    if not check.reversed:
        return ""
    message = check.describe(score_name, label, positive, other)
    if direction is None:
        raise ScoreDirectionError(message, check)
    return f"Audited as it is, as asked, although {message[0].lower()}{message[1:]}"


def check_direction(y, score, weight=None, always_slope: bool = True) -> DirectionCheck:
    """AUROC with DeLong's 95% interval and the calibration slope with its Wald interval; ``reversed`` when either
    interval lies entirely on the wrong side (AUROC < 0.5, slope < 0). Without ``always_slope`` the slope's fit
    (≈ 1 s a million rows) is skipped when the AUROC's interval lies wholly above 0.5: the score then runs the right
    way."""
    y = np.asarray(y).astype(int)
    score = np.asarray(score, float)
    w = np.ones(y.size) if weight is None else np.asarray(weight, float)
    single = delong_paired(y, score, np.full(score.size, 0.5), w)     # vs a constant score: AUROC 0.5, no variance
    half = norm.ppf(0.975) * single.se
    auroc_ci = (single.auc_a - half, single.auc_a + half)
    clear = auroc_ci[0] > 0.5 and not always_slope
    slope, slope_ci = (None, None) if clear else _calibration_slope(y, score, w)
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
