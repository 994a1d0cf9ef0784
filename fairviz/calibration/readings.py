"""What the calibration tests say, in words (slope and calibration-in-the-large)."""
from __future__ import annotations

from fairviz.calibration.results import LinearBiasTest
from fairviz.core.wording import fmt_p


def slope_words(test: LinearBiasTest, alpha: float = 0.05) -> str:
    """What the slope says, in words (calibration slope = 1 + β₁); a slope indistinguishable from 0 says so."""
    if not test.ok:
        return test.status
    b1, p = test.slope.estimate, test.slope.p
    head = f"slope β₁ = {b1:+.3f} (calibration slope {1 + b1:.2f}, p {fmt_p(p)})"
    if not p < alpha:
        return f"{head}: no evidence of over- or under-confidence"
    if b1 > 0:
        return (f"{head} > 0: predictions are under-confident, too close to the average; true risks are more "
                "spread out than the scores")
    return f"{head} < 0: predictions are over-confident, too extreme; high scores are too high and low ones too low"


def in_the_large_words(test: LinearBiasTest, alpha: float = 0.05) -> str:
    c = test.in_the_large
    if c is None:
        return ""
    head = f"calibration-in-the-large {c.estimate:+.3f} on the log-odds scale, p {fmt_p(c.p)}"
    if not c.p < alpha:
        return f"on average the scores match the observed rate ({head})"
    direction = "under-predicts" if c.estimate > 0 else "over-predicts"
    return f"on average the model {direction} the risk ({head})"
