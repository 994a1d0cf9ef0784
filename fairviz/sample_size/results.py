"""What the sample-size significance audit ([3] ch. 4) holds: MATCH per group and metric, CPS-smoothed counts,
expected-error curves, jaggedness bands, and the whole section (MATCH and CPS composed once)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fairviz.core.confusion_metrics import METRICS as CM_METRICS, flip
from fairviz.core.counts import ConfusionCounts

MATCH_METRICS = ("acc", "prev", "ppr", "tpr", "fnr", "tnr", "fpr", "ppv", "fdr", "npv", "for", "benefit",
                 "mcc", "f1", "pt", "ofi")
METRIC_LABELS = {**{k: m.label for k, m in CM_METRICS.items()}, "ofi": "OFI vs reference"}
# taken on the benefit (the negative prediction's, when it is the benefit); every other metric on the label, as the
# data defines Y = 1 and a positive prediction (score ≥ τ): FPR is the same FPR on every page
BENEFIT_METRICS = ("benefit", "ofi")
ENUMERATION_LIMIT = 60          # exact enumeration of every matrix up to this n (C(63, 3) = 39,711 matrices)
CPS_LAMBDA = 5.0                # [3]'s prior scale for Cross-Prior Smoothing
LEVELS = (1, 10, 25, 50, 75, 90, 99)   # the percentile bands of a jaggedness plot


def on_the_benefit(counts: ConfusionCounts | None, metric: str, benefit: str) -> ConfusionCounts | None:
    """The label's counts as ``metric`` takes them: flipped (TP↔TN, FN↔FP) for 𝓑 and OFI when the negative
    prediction is the benefit, as they are otherwise."""
    if counts is None or benefit != "negative" or metric not in BENEFIT_METRICS:
        return counts
    return flip(counts)


def scalar(values: np.ndarray) -> float | None:
    """A one-element metric array as a number; None when undefined."""
    v = float(np.ravel(values)[0])
    return v if math.isfinite(v) else None


@dataclass(frozen=True)
class MatchParams:
    reference: str = "complement"       # "complement" (all rows minus the group), "population", or a group's name
    method: str = "exact"               # "exact", "normal" or "peizer_pratt" (approximations used only where valid)
    metrics: tuple[str, ...] = MATCH_METRICS
    draws: int = 10_000                 # Monte Carlo draws (MCC, F1, PT above the enumeration limit; OFI)
    seed: int = 0
    alpha: float = 0.05
    condition_on_defined: bool = True   # joint-ratio nulls among defined outcomes (False: [3]'s sum)
    enumeration_limit: int = ENUMERATION_LIMIT


@dataclass(frozen=True)
class MatchResult:
    group: str
    metric: str
    n: int
    score: float | None                 # the group's observed metric
    reference_score: float | None       # the reference's own metric (its expected value at large n)
    cdf: float | None                   # P(S ≤ score | defined) at the group's size under the reference
    p_lower: float | None
    p_upper: float | None
    p_value: float | None               # two-sided
    undefined_probability: float | None # P(metric undefined) for a group of n rows under the reference
    method: str
    error_bound: float | None = None    # Berry–Esseen bound on |F − Φ| for a normal approximation
    note: str = ""
    p_adjusted: float | None = None     # Benjamini–Hochberg across the table

    def to_dict(self) -> dict:
        return {"score": self.score, "reference_score": self.reference_score, "cdf": self.cdf,
                "p_lower": self.p_lower, "p_upper": self.p_upper, "p_value": self.p_value,
                "p_adjusted": self.p_adjusted, "undefined_probability": self.undefined_probability,
                "method": self.method, "n": self.n, "note": self.note or None}


@dataclass(frozen=True)
class MatchAudit:
    attribute: str
    params: MatchParams
    names: tuple[str, ...]
    counts: dict                     # group → ConfusionCounts on the label (Y = 1, score ≥ τ)
    references: dict                 # group → ConfusionCounts it was compared with (None: it is the reference)
    results: list[MatchResult]
    reference_label: str
    benefit: str = "positive"        # which prediction 𝓑 and OFI take as the benefit

    def counts_for(self, group: str, metric: str) -> ConfusionCounts:
        """A group's counts as ``metric`` takes them (on the benefit for 𝓑 and OFI)."""
        return on_the_benefit(self.counts[group], metric, self.benefit)

    def reference_for(self, group: str, metric: str) -> ConfusionCounts | None:
        return on_the_benefit(self.references[group], metric, self.benefit)

    def get(self, group: str, metric: str) -> MatchResult | None:
        return next((r for r in self.results if r.group == group and r.metric == metric), None)

    def significant(self) -> list[MatchResult]:
        return [r for r in self.results if r.p_adjusted is not None and r.p_adjusted < self.params.alpha]


@dataclass(frozen=True)
class CPSRow:
    group: str
    n: int
    raw: ConfusionCounts
    smoothed: ConfusionCounts
    raw_metrics: dict                # metric → float | None
    smoothed_metrics: dict


@dataclass(frozen=True)
class ErrorCurves:
    """Exact expected squared error of a small sample's metric vs the full group's value, per sample size."""

    metric: str
    sizes: np.ndarray
    target: float                    # the full group's metric
    mse: dict                        # estimator label → array over sizes (mean over defined outcomes)
    defined_mass: dict               # estimator label → P(defined) over sizes


@dataclass(frozen=True)
class Jaggedness:
    """Percentile bands of a metric over random subsamples (without replacement) of a group, per size (Fig. 4.1)."""

    metric: str
    sizes: np.ndarray
    quantiles: dict                  # level (percent) → array over sizes (NaN where too few defined draws)
    undefined_share: np.ndarray      # share of draws where the metric is undefined, per size
    full_value: float | None         # the whole group's metric
    draws: int
    seed: int


@dataclass(frozen=True)
class NullPlot:
    """A null distribution aggregated for drawing: probability mass at (or in bins around) each value."""

    values: np.ndarray
    mass: np.ndarray
    width: float
    binned: bool


@dataclass(frozen=True)
class SignificanceParams:
    """The section's knobs: which prediction is the benefit (𝓑 and OFI are taken on it), MATCH's and CPS's."""
    threshold: float = 0.5
    benefit: str = "positive"
    match: MatchParams = MatchParams()
    cps_lambda: float = CPS_LAMBDA


@dataclass(frozen=True)
class SignificanceAudit:
    """The sample-size significance of every group: MATCH per group and metric and the CPS-smoothed counts."""
    match: MatchAudit
    cps: list[CPSRow]
    cps_lambda: float
