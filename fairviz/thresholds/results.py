"""Per-group thresholds as post-processing (Hardt, Price and Srebro, NeurIPS 2016): typed results."""
from __future__ import annotations

from dataclasses import dataclass

CONSTRAINTS = ("equal_selection", "equal_tpr", "equalized_odds")
CONSTRAINT_TITLES = {"equal_selection": "equal selection rates (demographic parity)",
                     "equal_tpr": "equal true positive rates (equal opportunity)",
                     "equalized_odds": "equal true and false positive rates (equalized odds)"}


@dataclass(frozen=True)
class ThresholdParams:
    constraint: str = "equal_tpr"
    slack: float = 0.0           # the largest allowed gap between any group's rate and the common rate
    seed: int = 0                # the draw that realises randomised decisions (label-blind)

    def __post_init__(self):
        if self.constraint not in CONSTRAINTS:
            raise ValueError(f"unknown constraint '{self.constraint}' (known: {', '.join(CONSTRAINTS)})")
        if not 0 <= self.slack <= 1:
            raise ValueError("the slack is a rate gap in [0, 1]")


@dataclass(frozen=True)
class GroupRule:
    """A group's decision rule: positive with probability ``mix[k]`` using threshold ``thresholds[k]`` ("score ≥
    threshold"; +inf selects nobody). One threshold when no randomisation is needed."""
    group: str
    thresholds: tuple[float, ...]
    mix: tuple[float, ...]
    n: int
    positives: float
    negatives: float
    tpr: float                   # expected rates of the rule
    fpr: float
    selection_rate: float

    @property
    def randomised(self) -> bool:
        return sum(m > 1e-12 for m in self.mix) > 1

    def positive_probability(self, scores) -> "object":
        import numpy as np
        scores = np.asarray(scores, float)
        return sum(m * (scores >= t) for t, m in zip(self.thresholds, self.mix))


@dataclass(frozen=True)
class ThresholdPolicy:
    params: ThresholdParams
    attribute: str
    rules: tuple[GroupRule, ...]
    accuracy: float              # expected accuracy of the adjusted decisions
    max_gap: float               # the largest gap left in the constrained rate(s)

    def rule(self, group: str) -> GroupRule:
        return next(r for r in self.rules if r.group == group)


@dataclass(frozen=True)
class TradeOffPoint:
    slack: float
    accuracy: float
    max_gap: float


@dataclass(frozen=True)
class ThresholdAudit:
    """The chosen policy, the accuracy/fairness trade-off curve over the slack, and where a single threshold τ for
    everyone sits on the same axes."""
    policy: ThresholdPolicy
    curve: tuple[TradeOffPoint, ...]
    single_threshold: TradeOffPoint
