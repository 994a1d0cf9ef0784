"""The results of knee probing and augmentation ([1] §7–8, App. D, E, O), and their JSON (``to_dict``): what the
CLI writes, the shipped demo holds and the page draws (``fairviz.probing.readings``).

The settings are kept as their dicts so the results do not depend on the techniques that made them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairviz.core import stats
from fairviz.core.progress import Completion

PROBES = {"demographic_swap": "Demographic swap", "identity_removal": "Identity-term removal"}
STRATEGY_NAMES = {"knees": "RDF knee regions", "uncertainty": "Highest entropy", "confidence": "Highest confidence",
                  "random": "Random"}
AUGMENT_STRATEGIES = {"random": "Random", "uncertainty": "Uncertainty (entropy)", "rdf": "RDF-guided (D*)"}
DELTA_METRICS = ("f_pattern", "f_v", "f_dist")
SEEDS = (42, 123, 456)
ECE_THRESHOLD = 0.15
SIGN_CONVENTION = (
    "ΔF = F(after fine-tuning) − F(before). F_pattern = 1 means equal median residuals, so ΔF_pattern > 0 is fairer; "
    "F_v and F_dist are 0 when fair, so ΔF_v < 0 and ΔF_dist < 0 are fairer. The paper's Tables 3 and 9 read "
    "'negative = improvement' for ΔF_pattern: their numbers are on the median-gap scale |m1 − m0|/2 = 1 − F_pattern, "
    "given here as 'gap' (= −ΔF_pattern). Efficiency = ΔF/k; for F_pattern higher is better.")


@dataclass(frozen=True)
class ProbeSummary:
    """One probe: mean Δd in the knee and non-knee samples, their ratio, its CI and a test."""
    probe: str
    knee_mean: float
    nonknee_mean: float
    ratio: float | None
    ci: stats.Interval
    knee_mean_ci: stats.Interval
    nonknee_mean_ci: stats.Interval
    p_value: float | None          # Mann–Whitney, two-sided, Δd knee vs non-knee
    p_greater: float | None
    n_knee: int
    n_nonknee: int
    changed_knee: float            # share of sampled texts the edit changed at all
    changed_nonknee: float
    note: str

    def to_dict(self) -> dict:
        return {"knee_mean": self.knee_mean, "nonknee_mean": self.nonknee_mean, "ratio": self.ratio,
                "ci": self.ci.to_list(), "knee_mean_ci": self.knee_mean_ci.to_list(),
                "nonknee_mean_ci": self.nonknee_mean_ci.to_list(), "p_value": self.p_value,
                "p_value_greater": self.p_greater, "test": "Mann-Whitney U, two-sided (greater: knee > non-knee)",
                "n_knee": self.n_knee, "n_nonknee": self.n_nonknee, "changed_share_knee": self.changed_knee,
                "changed_share_nonknee": self.changed_nonknee, "note": self.note}


@dataclass(frozen=True)
class StrategySummary:
    strategy: str
    n: int
    demographic_sensitivity: float     # mean Δd_swap ("demographic sensitivity gap", [1] App. D.2)
    identity_dependence: float         # mean Δd_removal
    clear_pattern_share: float         # share with max Δd ≥ threshold
    mean_abs_residual: float

    def to_dict(self) -> dict:
        return {"n": self.n, "demographic_sensitivity": self.demographic_sensitivity,
                "identity_dependence": self.identity_dependence, "clear_pattern_share": self.clear_pattern_share,
                "mean_abs_residual": self.mean_abs_residual}


@dataclass(frozen=True)
class ProbeResult:
    settings: dict                     # ProbeParams.to_dict()
    meta: dict                         # data set, model, pool description
    groups: tuple[str, ...]
    pool_n: int
    pool_knee_share: float
    ece: float
    regime: str
    knees: dict                        # group → [knee dicts]
    probes: dict                       # probe → ProbeSummary
    ratio_average: float | None        # Table 11: average over probe types of knee/non-knee
    strategies: dict                   # strategy → StrategySummary
    error_vs_sensitivity: dict
    examples: pd.DataFrame             # the knee and non-knee samples with their edits and scores
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"meta": self.meta, "settings": self.settings, "groups": list(self.groups),
                "pool": {"n": self.pool_n, "knee_share": self.pool_knee_share, "ece": self.ece, "regime": self.regime,
                         "knees": self.knees, "region": {"mode": self.settings["region_mode"],
                                                         "eps": self.settings["region_eps"]}},
                "probes": {k: v.to_dict() for k, v in self.probes.items()}, "ratio_average": self.ratio_average,
                "strategies": {k: v.to_dict() for k, v in self.strategies.items()},
                "error_vs_sensitivity": self.error_vs_sensitivity,
                "examples": self.examples.to_dict(orient="records"), "warnings": list(self.warnings)}


@dataclass(frozen=True)
class AugmentRecord:
    strategy: str
    k: int
    deltas: dict                 # metric → per-seed Δ (after − before), NaN where a metric is undefined
    shortfall: int = 0           # rdf: rows filled from outside D* (max over seeds)
    unchanged: int = 0           # counterfactual copies identical to their original (nothing to edit)
    t_tests: dict | None = None  # metric → {"t", "p_value"} against random

    def summary(self, metric: str) -> dict:
        values = np.asarray(self.deltas[metric], dtype=float)
        finite = values[np.isfinite(values)]
        return {"mean": float(finite.mean()) if finite.size else None,
                "std": float(finite.std(ddof=1)) if finite.size > 1 else None,
                "values": [None if not np.isfinite(v) else float(v) for v in values]}

    def to_dict(self) -> dict:
        delta = {m: self.summary(m) for m in DELTA_METRICS}
        gap = self.summary("f_pattern")
        delta["gap"] = {"mean": None if gap["mean"] is None else -gap["mean"], "std": gap["std"],
                        "values": [None if v is None else -v for v in gap["values"]]}
        efficiency = {m: (None if delta[m]["mean"] is None or self.k == 0 else delta[m]["mean"] / self.k)
                      for m in DELTA_METRICS}
        return {"strategy": self.strategy, "k": self.k, "delta": delta, "efficiency": efficiency,
                "t_test_vs_random": self.t_tests, "shortfall_from_dstar": self.shortfall,
                "unchanged_counterfactuals": self.unchanged}


@dataclass(frozen=True)
class AugmentResult:
    settings: dict                     # AugmentParams.to_dict()
    meta: dict
    before: dict
    records: list
    control: AugmentRecord | None
    ece: float
    regime: str
    dstar_size: int
    pool_n: int
    warnings: tuple[str, ...] = ()
    reading: str = ""                  # App. E's calibration-conditioned expectation and what this run found
    completion: Completion | None = None   # set when a Stop came first: the seeds that finished

    def record(self, strategy: str, k: int) -> AugmentRecord:
        return next(r for r in self.records if (r.strategy, r.k) == (strategy, k))

    def to_dict(self) -> dict:
        return {"meta": self.meta, "settings": self.settings, "before": self.before,
                "records": [r.to_dict() for r in self.records],
                "control": None if self.control is None else self.control.to_dict(),
                "calibration": {"ece": self.ece, "regime": self.regime, "threshold": ECE_THRESHOLD,
                                "reading": self.reading},
                "dstar_size": self.dstar_size, "pool_n": self.pool_n, "sign_convention": SIGN_CONVENTION,
                "warnings": list(self.warnings),
                **({"partial": self.completion.to_dict()} if self.completion is not None else {})}
