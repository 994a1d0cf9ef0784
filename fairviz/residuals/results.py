"""What a Residual Distribution Fairness analysis returns ([1]): small frozen dataclasses, no figures.

``ResidualAudit`` is the whole concept for one attribute (groups, pairs, knee error concentration, D*);
``ThresholdCheckResult`` ([1] Theorem 6.1 at one τ), ``KneeConcentrationResult`` ([1] §8.2) and
``ThresholdInvarianceResult`` ([1] App. D.1) are single tests. Each result offers its tables once
(``group_table``, ``pair_table``, …): the JSON rows, the page's tables and the report's tables are read from them.
Pair metrics are defined for an ordered pair (i, j) and every signed quantity means "i minus j".
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable

import numpy as np
import pandas as pd

from fairviz.core import stats
from fairviz.core.counts import difference
from fairviz.data.tasks import BINARY, spec_of
from fairviz.residuals.knees import Knee, KneeParams

if TYPE_CHECKING:
    from fairviz.residuals.regions import DStar

REGION_EPS = 0.05
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class RDFParams:
    region_eps: float = REGION_EPS
    region_mode: str = "percentile"      # "percentile" (default, [1] §7.1) or "residual" ([1] Alg. 1)
    knees: KneeParams = field(default_factory=KneeParams)
    resamples: int = 1000                # bootstrap and permutation
    knee_resamples: int = 200            # end-to-end bootstrap of F_h / F_v (knees re-detected each time)
    seed: int = 0
    threshold: float = 0.5


@dataclass(frozen=True)
class Curve:
    """A downsampled sorted-residual curve: percentile (fraction), residual, and the row behind each point."""
    percentile: np.ndarray
    residual: np.ndarray
    row: np.ndarray              # position in the Predictions arrays (weighted data: in ``Predictions.rows()``)


@dataclass(frozen=True)
class GroupSummary:
    name: str
    n: int
    positives: int
    base_rate: float
    mean_score: float
    mean_residual: float
    median_residual: float
    median_residual_y0: float
    median_residual_y1: float
    ece: float
    ece_regime: str
    left_knee: Knee | None
    right_knee: Knee | None
    knee_rows: int               # rows of this group in its knee regions
    mean_target: float = float("nan")   # regression: the group's mean y (a binary task reads ``base_rate``)

    @property
    def knees(self) -> list[Knee]:
        return [k for k in (self.left_knee, self.right_knee) if k is not None]


@dataclass(frozen=True)
class PairMetrics:
    group_i: str
    group_j: str
    f_pattern: float
    f_pattern_y0: float
    f_pattern_y1: float
    f_pattern_mean: float
    f_dist: float
    f_dist_y0: float
    f_dist_y1: float
    f_h: float
    f_v: float
    f_h_abs: float
    f_v_abs: float
    mean_decomposition: dict      # [1] Theorem A.1: μ_i − μ_j = MD − Δ_base
    ci: dict                      # metric → stats.Interval
    p_median: float               # permutation test of |m_i − m_j|, two-sided
    p_dist: float                 # permutation test of F_dist (upper tail)
    warnings: tuple[str, ...] = ()
    pooled_knees: tuple = (None, None)   # (left, right) knees of the pair's pooled residuals: F_h/F_v's normalisers


@dataclass(frozen=True)
class KneeConcentrationResult:
    """[1] §8.2: mean |D| in knee regions against elsewhere, read against the calibration regime."""
    knee_mean: float
    nonknee_mean: float
    ratio: float
    ratio_ci: stats.Interval
    knee_mean_ci: stats.Interval
    nonknee_mean_ci: stats.Interval
    mann_whitney: stats.MannWhitney
    ece: float
    ece_ci: stats.Interval
    regime: str
    verdict: str                  # "supported" / "not supported" / "undefined"
    borderline: bool
    n_knee: int
    n_nonknee: int


@dataclass(frozen=True)
class ThresholdCheckResult:
    """[1] Theorem 6.1 at one threshold: each group's rates counted directly and read off the residual CDFs."""
    threshold: float
    groups: list[str]
    direct: dict                  # group → {"ppr", "tpr", "fpr"}
    from_residuals: dict          # group → {"ppr", "tpr", "fpr"}
    counts: dict                  # group → ConfusionCounts
    gaps: list[dict]              # per pair: dp/eo gaps both ways

    def gap_table(self) -> pd.DataFrame:
        """Per pair: each gap counted and read off the residuals (they agree, Theorem 6.1)."""
        return pd.DataFrame([{"pair": f"{g['group_i']} vs {g['group_j']}", **g} for g in self.gaps],
                            columns=["pair", "group_i", "group_j", *GAP_COLUMNS])


GAP_COLUMNS = ("dp_diff_direct", "dp_diff_residual", "eo_tpr_diff_direct", "eo_tpr_diff_residual",
               "eo_fpr_diff_direct", "eo_fpr_diff_residual")
GROUP_COLUMNS = ("n", "positives", "base_rate", "tp", "fp", "tn", "fn", "ppr", "tpr", "fpr", "mean_score",
                 "mean_residual", "median_residual", "median_residual_y0", "median_residual_y1", "ece", "ece_regime",
                 "knee_rows")
PAIR_COLUMNS = ("group_i", "group_j", "f_pattern", "f_dist", "f_h", "f_v", "f_h_abs", "f_v_abs", "f_pattern_y0",
                "f_pattern_y1", "f_pattern_mean", "f_dist_y0", "f_dist_y1", "ci", "p_value_median", "p_value_dist",
                "dp_diff", "eo_tpr_diff", "eo_fpr_diff", "mean_decomposition", "warnings")
# a regression has no outcome to split by and no threshold: its groups and pairs keep the rest
REGRESSION_GROUP_COLUMNS = ("n", "mean_target", "mean_prediction", "mean_residual", "median_residual", "knee_rows")
REGRESSION_PAIR_COLUMNS = ("group_i", "group_j", "f_pattern", "f_dist", "f_h", "f_v", "f_h_abs", "f_v_abs",
                           "f_pattern_mean", "ci", "p_value_median", "p_value_dist", "mean_decomposition", "warnings")


@dataclass(frozen=True)
class ResidualAudit:
    attribute: str
    params: RDFParams
    groups: list[GroupSummary]
    curves: dict                  # group → outcome ("all", "y0", "y1") → Curve
    pairs: list[PairMetrics]
    concentration: KneeConcentrationResult
    region_rows: np.ndarray       # per entry of the Predictions (a row, or a cell of weighted data): its rows in D*
    warnings: tuple[str, ...] = ()
    _d_star: "DStar | None" = field(default=None, repr=False, compare=False)
    # the rates at the audit's threshold (``analysis.at_threshold``): the residual curves do not depend on τ,
    # so the page keeps the audit and attaches the check of the τ in the sidebar
    at_threshold: ThresholdCheckResult | None = field(default=None, compare=False)
    knee_search_cells: int | None = None   # knees searched with residuals at this many score cells (large inputs)
    task: str = BINARY.name       # the task's name (the JSON's ``task``); its spec says what D is
    unit: str = ""                # a numeric target: the target column's name, the unit D is measured in
    span: float = 2.0             # the range of D that F_pattern divides by: 2 (D = p − y), max D − min D (numeric)

    @property
    def numeric_target(self) -> bool:
        """D = ŷ − y in the target's units (no outcome to split by, no threshold), not a probability minus a 0/1
        label."""
        return spec_of(self.task).numeric_target

    @property
    def _d_star_rows(self) -> tuple[np.ndarray, np.ndarray]:
        return self._d_star.per_row         # both per-row arrays in one pass (a million rows: ~0.3 s), kept

    @property
    def in_knee_region(self) -> np.ndarray:
        """bool per row: the diagnostic set D* (weighted data: per row of ``Predictions.rows()``, built on demand)."""
        return self._d_star_rows[0]

    @property
    def nearest_knee(self) -> np.ndarray:
        """per row: "left"/"right"/"" (which knee put it in D*), in the order of ``in_knee_region``."""
        return self._d_star_rows[1]

    def d_star_segments(self) -> pd.DataFrame:
        """D* as runs of entries: ``entry``, ``skip``, ``take`` (the entry's rows in D*, counted in residual order)
        and the ``knee`` ("left"/"right") — what a query for the input rows of weighted data needs."""
        return self._d_star.segments()

    def group(self, name: str) -> GroupSummary:
        return next(g for g in self.groups if g.name == name)

    def pair(self, i: str, j: str) -> PairMetrics:
        return next(p for p in self.pairs if (p.group_i, p.group_j) == (i, j))

    def with_rates(self, check: ThresholdCheckResult) -> "ResidualAudit":
        """This audit with the rates at one threshold attached (D*, once built, is shared)."""
        return replace(self, at_threshold=check)

    def _check(self) -> ThresholdCheckResult:
        if self.at_threshold is None:
            raise ValueError("the rates at a threshold are attached by fairviz.residuals.at_threshold")
        return self.at_threshold

    def group_table(self) -> pd.DataFrame:
        """One row per group: the JSON's ``groups`` records (with ``group`` ahead) and the knees as read."""
        if self.numeric_target:
            return pd.DataFrame([{
                "group": g.name, "n": g.n, "mean_target": g.mean_target, "mean_prediction": g.mean_score,
                "mean_residual": g.mean_residual, "median_residual": g.median_residual, "knee_rows": g.knee_rows,
                "left_knee": _knee_text(g.left_knee), "right_knee": _knee_text(g.right_knee)} for g in self.groups],
                columns=["group", *REGRESSION_GROUP_COLUMNS, "left_knee", "right_knee"])
        counts = self._check().counts
        rows = []
        for g in self.groups:
            c = counts[g.name]
            rows.append({
                "group": g.name, "n": g.n, "positives": g.positives, "base_rate": g.base_rate,
                "tp": c.tp, "fp": c.fp, "tn": c.tn, "fn": c.fn, "ppr": c.ppr(), "tpr": c.tpr(), "fpr": c.fpr(),
                "mean_score": g.mean_score, "mean_residual": g.mean_residual, "median_residual": g.median_residual,
                "median_residual_y0": g.median_residual_y0, "median_residual_y1": g.median_residual_y1,
                "ece": g.ece, "ece_regime": g.ece_regime, "knee_rows": g.knee_rows,
                "left_knee": _knee_text(g.left_knee), "right_knee": _knee_text(g.right_knee)})
        return pd.DataFrame(rows, columns=["group", *GROUP_COLUMNS, "left_knee", "right_knee"])

    def pair_table(self) -> pd.DataFrame:
        """One row per ordered pair: the JSON's ``pairs`` records, ``pair`` ahead and each interval as a column."""
        if self.numeric_target:
            return pd.DataFrame([{
                "pair": f"{p.group_i} vs {p.group_j}", "group_i": p.group_i, "group_j": p.group_j,
                "f_pattern": p.f_pattern, "f_dist": p.f_dist, "f_h": p.f_h, "f_v": p.f_v,
                "f_h_abs": p.f_h_abs, "f_v_abs": p.f_v_abs, "f_pattern_mean": p.f_pattern_mean,
                "ci": {name: interval.to_list() for name, interval in p.ci.items()},
                "p_value_median": p.p_median, "p_value_dist": p.p_dist,
                "mean_decomposition": p.mean_decomposition, "warnings": list(p.warnings),
                **_interval_columns(p)} for p in self.pairs],
                columns=["pair", *REGRESSION_PAIR_COLUMNS, "f_pattern_ci", "f_dist_ci", "f_h_ci", "f_v_ci"])
        counts = self._check().counts
        rows = []
        for p in self.pairs:
            a, b = counts[p.group_i], counts[p.group_j]
            rows.append({
                "pair": f"{p.group_i} vs {p.group_j}",
                "group_i": p.group_i, "group_j": p.group_j,
                "f_pattern": p.f_pattern, "f_dist": p.f_dist, "f_h": p.f_h, "f_v": p.f_v,
                "f_h_abs": p.f_h_abs, "f_v_abs": p.f_v_abs,
                "f_pattern_y0": p.f_pattern_y0, "f_pattern_y1": p.f_pattern_y1, "f_pattern_mean": p.f_pattern_mean,
                "f_dist_y0": p.f_dist_y0, "f_dist_y1": p.f_dist_y1,
                "ci": {name: interval.to_list() for name, interval in p.ci.items()},
                "p_value_median": p.p_median, "p_value_dist": p.p_dist,
                "dp_diff": difference(a.ppr(), b.ppr()), "eo_tpr_diff": difference(a.tpr(), b.tpr()),
                "eo_fpr_diff": difference(a.fpr(), b.fpr()),
                "mean_decomposition": p.mean_decomposition, "warnings": list(p.warnings),
                **_interval_columns(p)})
        return pd.DataFrame(rows, columns=["pair", *PAIR_COLUMNS, "f_pattern_ci", "f_dist_ci", "f_h_ci", "f_v_ci"])

    def decomposition_table(self) -> pd.DataFrame:
        """[1] Theorem A.1 per pair: the gap in mean residual = gap in mean score − gap in base rate (regression:
        gap in mean prediction − gap in mean target)."""
        if self.numeric_target:
            return pd.DataFrame([{"pair": f"{p.group_i} vs {p.group_j}", **p.mean_decomposition} for p in self.pairs],
                                columns=["pair", "mean_residual_gap", "mean_prediction_gap", "mean_target_gap",
                                         "f_pattern_mean"])
        return pd.DataFrame([{"pair": f"{p.group_i} vs {p.group_j}", **p.mean_decomposition} for p in self.pairs],
                            columns=["pair", "mean_residual_gap", "mean_score_gap", "base_rate_gap", "f_pattern_mean"])

    def knee_table(self) -> dict:
        """The JSON's ``knees``: each group's knees."""
        return {g.name: [k.to_dict() for k in g.knees] for g in self.groups}

    def pooled_knee_table(self) -> list[dict]:
        """The JSON's ``pooled_knees``: per pair, the knees of the two groups' pooled residuals, which normalise F_h
        and F_v ([1] Eq. 2–3), and the resolution the knee search read the residuals at."""
        return [{"group_i": p.group_i, "group_j": p.group_j,
                 "left": None if p.pooled_knees[0] is None else p.pooled_knees[0].to_dict(),
                 "right": None if p.pooled_knees[1] is None else p.pooled_knees[1].to_dict(),
                 "search_cells": self.knee_search_cells} for p in self.pairs]

    def concentration_record(self) -> dict:
        """The JSON's ``knee_concentration``."""
        c = self.concentration
        if self.numeric_target:          # no ECE, so no regime and no verdict of the paper's rule
            return {"ratio": c.ratio, "ratio_ci": c.ratio_ci.to_list(), "p_value": c.mann_whitney.p_two_sided,
                    "p_value_greater": c.mann_whitney.p_greater, "verdict": c.verdict,
                    "knee_mean_abs_residual": c.knee_mean, "nonknee_mean_abs_residual": c.nonknee_mean,
                    "n_knee": c.n_knee, "n_nonknee": c.n_nonknee,
                    "region": {"mode": self.params.region_mode, "eps": self.params.region_eps}}
        return {
            "ratio": c.ratio, "ratio_ci": c.ratio_ci.to_list(), "p_value": c.mann_whitney.p_two_sided,
            "p_value_greater": c.mann_whitney.p_greater, "ece": c.ece, "ece_ci": c.ece_ci.to_list(),
            "regime": c.regime, "verdict": c.verdict, "borderline": c.borderline,
            "knee_mean_abs_residual": c.knee_mean, "nonknee_mean_abs_residual": c.nonknee_mean,
            "n_knee": c.n_knee, "n_nonknee": c.n_nonknee,
            "region": {"mode": self.params.region_mode, "eps": self.params.region_eps},
        }

    def settings_record(self) -> dict:
        """The JSON's ``rdf_settings``."""
        p = self.params
        return {"resamples": p.resamples, "knee_resamples": p.knee_resamples, "seed": p.seed,
                "lowess_frac": p.knees.frac, "lowess_iterations": p.knees.iterations,
                "kneedle_sensitivity": p.knees.sensitivity}


def _interval_columns(p: PairMetrics) -> dict:
    return {f"{name}_ci": p.ci[name].to_list() if name in p.ci else None for name in ("f_pattern", "f_dist", "f_h", "f_v")}


def _knee_text(knee: Knee | None) -> str:
    """A knee as the Groups table reads it: "percentile% / residual"."""
    return "—" if not knee else f"{100 * knee.percentile:.1f}% / {knee.residual:.3f}"


# ----------------------------------------------------------------------------------------------- threshold invariance

@dataclass(frozen=True)
class PairInvariance:
    group_i: str
    group_j: str
    values: dict          # metric → list of 9 values (None where undefined at that τ)
    cv: dict              # metric → CV% or None
    cv_reason: dict       # metric → why the CV is undefined (only for undefined ones)

    def to_dict(self) -> dict:
        return {"group_i": self.group_i, "group_j": self.group_j, "cv": dict(self.cv),
                "cv_undefined_reason": dict(self.cv_reason), "values": {k: list(v) for k, v in self.values.items()}}


@dataclass(frozen=True)
class ThresholdInvarianceResult:
    """[1] App. D.1, Table 5: the coefficient of variation of each metric over the thresholds, per pair."""
    attribute: str
    thresholds: tuple[float, ...]
    pairs: list[PairInvariance]

    def pair(self, i: str, j: str) -> PairInvariance:
        return next(p for p in self.pairs if (p.group_i, p.group_j) == (i, j))

    def cv_table(self, metrics: tuple[str, ...]) -> pd.DataFrame:
        """One row per pair: the CV% of each of ``metrics`` (None where undefined)."""
        return pd.DataFrame([{"pair": f"{p.group_i} vs {p.group_j}", "group_i": p.group_i, "group_j": p.group_j,
                              **{m: p.cv.get(m) for m in metrics}} for p in self.pairs],
                            columns=["pair", "group_i", "group_j", *metrics])

    def to_dict(self) -> dict:
        return {"attribute": self.attribute, "thresholds": list(self.thresholds),
                "cv_formula": "100 * std(ddof=0) / |mean| over the thresholds",
                "gap_form": "absolute gaps |i - j| (Fairlearn style) and min/max ratios",
                "pairs": [p.to_dict() for p in self.pairs]}
