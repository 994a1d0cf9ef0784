"""What scale a score column is on, and the one conversion to a probability: percentages (0–100) are divided by
100 and logits go through the logistic function. Guessed from the values, always shown, changeable (app) or given
(``--score-scale``); a score that fits none of them is named with its range."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

SCALES = ("probability", "percent", "logit")
SCALE_TITLES = {"probability": "a probability in [0, 1]", "percent": "a percentage in [0, 100]",
                "logit": "a logit (log-odds)"}


@dataclass(frozen=True)
class ScaleGuess:
    scale: str | None            # None: none of the three fits
    low: float
    high: float
    reason: str


def guess_scale(values) -> ScaleGuess:
    """probability when every finite value is in [0, 1]; percent when they are in [0, 100] and some exceed 1;
    logit when some are negative (log-odds are unbounded both ways); otherwise none (e.g. 300–850 credit points)."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return ScaleGuess(None, float("nan"), float("nan"), "the score column has no finite values")
    low, high = float(v.min()), float(v.max())
    if low >= 0 and high <= 1:
        return ScaleGuess("probability", low, high, "every value is in [0, 1]")
    if low >= 0 and high <= 100:
        return ScaleGuess("percent", low, high, f"values run {low:g} to {high:g}, within [0, 100]")
    if low < 0 and high > 0:
        return ScaleGuess("logit", low, high, f"values run {low:g} to {high:g}, on both sides of 0")
    return ScaleGuess(None, low, high, f"values run {low:g} to {high:g}: not a probability, a percentage or a logit")


def to_probability(values, scale: str) -> np.ndarray:
    """The score as a probability. Values outside the scale's range are left for validation to name."""
    v = np.asarray(values, float)
    if scale == "probability":
        return v
    if scale == "percent":
        return v / 100.0
    if scale == "logit":
        return expit(v)
    raise ValueError(f"unknown score scale '{scale}' (known: {', '.join(SCALES)})")
