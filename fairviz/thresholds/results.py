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

    def bands(self) -> list[tuple[float, float, float]]:
        """(lower, upper, probability): the scores in [lower, upper) that get a yes with a probability strictly
        between 0 and 1 (upper is +inf when no threshold above them selects anyone for sure)."""
        ordered = sorted(zip(self.thresholds, self.mix), key=lambda tm: -tm[0])
        out = []
        for k in range(len(ordered) - 1):
            chance = sum(m for _, m in ordered[k + 1:])        # the thresholds at or below the band's scores
            if 1e-12 < chance < 1 - 1e-12:
                out.append((ordered[k + 1][0], ordered[k][0], chance))
        return out

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


CONSTRAINT_SHORT = {"equal_selection": "equal selection", "equal_tpr": "equal TPR", "equalized_odds": "equalized odds"}


def policy_dict(policy: ThresholdPolicy, model: str | None = None) -> dict:
    """The policy as JSON: each group's thresholds with their mixing weights and its expected rates."""
    return {"model": model, "attribute": policy.attribute, "constraint": policy.params.constraint,
            "slack": policy.params.slack, "expected_accuracy": policy.accuracy, "max_gap": policy.max_gap,
            "rule": "positive when score ≥ threshold; with several thresholds, threshold k is used with probability "
                    "mix[k]",
            "groups": [{"group": r.group, "thresholds": [None if t == float("inf") else t for t in r.thresholds],
                        "selects_nobody": [t == float("inf") for t in r.thresholds], "mix": list(r.mix),
                        "randomised": r.randomised, "n": r.n, "positives": r.positives, "negatives": r.negatives,
                        "tpr": r.tpr, "fpr": r.fpr, "selection_rate": float(r.selection_rate)}
                       for r in policy.rules]}


@dataclass(frozen=True)
class RealisedRates:
    """A group's rates of the realised decisions, and the spread (one standard deviation) of its TPR had the
    randomised rule been drawn label-blind, as a deployment draws it."""
    group: str
    n: int
    positives: int
    tpr: float
    fpr: float
    selection_rate: float
    label_blind_sd: float


@dataclass(frozen=True)
class AdjustedDecisions:
    """The policy applied to the loaded rows: ``decisions`` (bool per entry of the joint predictions) under
    ``title`` as a new model, with ``note`` saying how it was made."""
    model: str
    attribute: str
    policy: ThresholdPolicy
    decisions: object            # np.ndarray of bool, aligned with the joint predictions' entries
    realised: tuple[RealisedRates, ...]
    title: str
    note: str

    def realised_gap(self) -> float:
        """The largest gap left in the constrained rate(s) by the realised decisions."""
        def spread(values):
            values = [v for v in values if v == v]
            return max(values) - min(values) if values else 0.0
        constraint = self.policy.params.constraint
        if constraint == "equal_tpr":
            return spread([r.tpr for r in self.realised])
        if constraint == "equalized_odds":
            return max(spread([r.tpr for r in self.realised]), spread([r.fpr for r in self.realised]))
        return spread([r.selection_rate for r in self.realised])


@dataclass(frozen=True)
class ThresholdExplorer:
    """What the threshold explorer shows: the audit (policy, trade-off curve, single threshold τ) and the
    decisions."""
    audit: ThresholdAudit
    adjusted: AdjustedDecisions
    tau: float

    def to_dict(self) -> dict:
        a = self.adjusted
        return {**policy_dict(self.audit.policy, a.model), "title": a.title, "note": a.note,
                "seed": self.audit.policy.params.seed, "realised_max_gap": a.realised_gap(),
                "realised": [vars(r).copy() for r in a.realised],
                "single_threshold": {"tau": self.tau, "accuracy": self.audit.single_threshold.accuracy,
                                     "max_gap": self.audit.single_threshold.max_gap},
                "trade_off": [{"slack": p.slack, "accuracy": p.accuracy, "max_gap": p.max_gap}
                              for p in self.audit.curve]}
