"""The calibration concept's settings and result types: small frozen dataclasses, no figures, no computation.

``CalibrationAudit`` offers its tables once (``group_rows``, ``bin_rows``, ``pair_rows``, ``difference_rows``): the
JSON (``fairviz.calibration.reliability_display.calibration_to_dict``) and every displayed table (page, HTML report, terminal)
are built from these records, so they cannot disagree."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import stats as sps

from fairviz.core import stats
from fairviz.core.ece import SCORE_CELLS, ece_regime

EPS = 1e-6                 # p̂ is clipped to [EPS, 1 − EPS] before logit: logit(0) and logit(1) are infinite ([2] §4.5)
CELLS = SCORE_CELLS        # equal cells on [0, 1] for the smooth ECE and every resample above this many distinct scores
CURVE_POINTS = 120         # points of a drawn smooth curve
SMECE_MIN_SIGMA = 1e-3     # the smallest bandwidth the smooth ECE searches (as relplot's eps)
MAX_ITER = 60
OVERALL = "overall"
CI_METHODS = ("beta_uniform", "jeffreys", "clopper_pearson", "wilson", "wald")
STRATEGIES = ("uniform", "quantile")
# Harrell's knot quantiles for restricted cubic splines (Regression Modeling Strategies, §2.4.6).
RCS_QUANTILES = {3: (0.10, 0.50, 0.90), 4: (0.05, 0.35, 0.65, 0.95), 5: (0.05, 0.275, 0.50, 0.725, 0.95),
                 6: (0.05, 0.23, 0.41, 0.59, 0.77, 0.95), 7: (0.025, 0.1833, 0.3417, 0.50, 0.6583, 0.8167, 0.975)}
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class CalibrationParams:
    n_bins: int = 10                     # reliability diagram bins (the lecture uses 10)
    strategy: str = "uniform"            # the strategy reported in JSON: "uniform" (equal width) or "quantile"
    level: float = 0.95
    ci_method: str = "beta_uniform"      # Beta(n₁+1, n−n₁+1), equal-tailed: reproduces the lecture's table
    spline_knots: int = 4                # restricted cubic spline knots (3–7) for the smooth curve and the test
    resamples: int = 1000                # bootstrap resamples for ECE, smooth ECE and performance intervals
    seed: int = 0
    min_events: int = 10                 # a test needs this many rows of each outcome in the group
    alpha: float = 0.05

    def __post_init__(self):
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        if self.ci_method not in CI_METHODS:
            raise ValueError(f"ci_method must be one of {CI_METHODS}, got {self.ci_method!r}")
        if not 2 <= self.n_bins <= 100:
            raise ValueError(f"n_bins must be between 2 and 100, got {self.n_bins}")
        if self.spline_knots not in RCS_QUANTILES:
            raise ValueError(f"spline_knots must be between 3 and 7, got {self.spline_knots}")


@dataclass(frozen=True)
class ReliabilityTable:
    """One row per bin: bins are [lower, upper) and the last one is closed. Empty bins have n = 0 and NaNs."""
    strategy: str
    lower: np.ndarray
    upper: np.ndarray
    n: np.ndarray
    n_pos: np.ndarray
    mean_pred: np.ndarray          # the lecture's bin_avg
    observed: np.ndarray           # n_pos / n (the lecture's "p_hat" column: an observed rate)
    post_mean: np.ndarray          # (n_pos + 1) / (n + 2), the lecture's p_1
    ci_low: np.ndarray
    ci_high: np.ndarray
    wald_moe: np.ndarray           # z·sqrt(p(1 − p)/n), the lecture's moe

    @property
    def nonempty(self) -> np.ndarray:
        return self.n > 0

    def rows(self) -> list[dict]:
        keys = ("lower", "upper", "n", "n_pos", "mean_pred", "observed", "post_mean", "ci_low", "ci_high", "wald_moe")
        return [{k: _scalar(getattr(self, k)[i]) for k in keys} for i in range(self.n.size)]


@dataclass(frozen=True)
class Coefficient:
    estimate: float
    se: float
    z: float
    p: float

    def interval(self, level: float = 0.95) -> stats.Interval:
        half = sps.norm.ppf(0.5 + level / 2) * self.se
        return stats.Interval(self.estimate - half, self.estimate + half, level)


@dataclass(frozen=True)
class LRTest:
    statistic: float
    df: int
    p: float


@dataclass(frozen=True)
class LinearBiasTest:
    """logit P(Y=1) = β₀ + β₁·logit p̂ + offset(logit p̂); calibrated means β₀ = β₁ = 0 (§4.5)."""
    intercept: Coefficient | None
    slope: Coefficient | None
    joint: LRTest | None                 # β₀ = β₁ = 0, likelihood ratio χ²(2) against the offset-only model
    in_the_large: Coefficient | None     # intercept-only model with the offset: the average log-odds gap
    deviance_offset: float               # −2 log L of p̂ itself (no free parameter)
    deviance_fit: float
    status: str = ""                     # "" when the test ran; else why not, e.g. "not enough data (n = 7)"
    deviance_in_the_large: float = float("nan")    # −2 log L of the intercept-only model with the offset

    @property
    def ok(self) -> bool:
        return not self.status

    @property
    def calibration_slope(self) -> float:
        return float("nan") if self.slope is None else 1.0 + self.slope.estimate


@dataclass(frozen=True)
class SplineBiasTest:
    """logit P(Y=1) = b(logit p̂) + offset(logit p̂) with b a restricted cubic spline (§4.6)."""
    knots: tuple[float, ...]             # on the logit scale
    vs_calibrated: LRTest | None         # b ≡ 0, df = number of spline parameters
    vs_linear: LRTest | None             # the non-linear part is 0, df = knots − 2
    deviance: float
    status: str = ""

    @property
    def ok(self) -> bool:
        return not self.status


@dataclass(frozen=True)
class SmoothCurve:
    """Logistic regression on a restricted cubic spline of logit p̂, on a grid of p̂, with a pointwise band."""
    p: np.ndarray
    fitted: np.ndarray
    low: np.ndarray
    high: np.ndarray
    status: str = ""


@dataclass(frozen=True)
class Performance:
    auroc: float
    auroc_ci: stats.Interval
    log_loss: float
    log_loss_ci: stats.Interval
    brier: float
    brier_ci: stats.Interval
    status: str = ""                     # e.g. "insufficient data (3 positives)": estimates are shown, but noisy


@dataclass(frozen=True)
class GroupCalibration:
    name: str
    n: int
    n_pos: int
    mean_score: float
    observed_rate: float
    n_clipped: int
    reliability: dict                    # strategy → ReliabilityTable
    ece: float
    ece_ci: stats.Interval
    smooth_ece: float
    smooth_ece_ci: stats.Interval
    smooth_sigma: float                  # the bandwidth chosen by the smooth ECE's fixed point
    linear: LinearBiasTest
    spline: SplineBiasTest
    curve: SmoothCurve
    performance: Performance
    joint_p_adjusted: float = float("nan")       # Benjamini–Hochberg across the groups (overall: NaN)
    nonlinear_p_adjusted: float = float("nan")

    @property
    def ece_regime(self) -> str:
        return ece_regime(self.ece)


@dataclass(frozen=True)
class PairGap:
    """Calibration error of group i minus group j, with percentile intervals from independent resamples."""
    group_i: str
    group_j: str
    ece_diff: float
    ece_diff_ci: stats.Interval
    smooth_ece_diff: float
    smooth_ece_diff_ci: stats.Interval


@dataclass(frozen=True)
class GroupDifferenceTest:
    """Does calibration differ by group? Group-specific (β₀, β₁) against one shared pair (LR χ², 2(G−1) df),
    and group-specific calibration-in-the-large against a shared one (G−1 df)."""
    groups: tuple[str, ...]
    excluded: tuple[str, ...]
    linear: LRTest | None
    in_the_large: LRTest | None
    differences: dict                    # group → {"intercept": Coefficient, "slope": Coefficient} vs reference
    reference: str
    status: str = ""

    @property
    def p_value(self) -> float:
        """The headline answer: the smaller p of the two tests, Bonferroni-corrected for the two (NaN if untested)."""
        if self.linear is None or self.in_the_large is None:
            return float("nan")
        return min(1.0, 2 * min(self.linear.p, self.in_the_large.p))


@dataclass(frozen=True)
class CalibrationAudit:
    attribute: str
    params: CalibrationParams
    groups: list[GroupCalibration]
    overall: GroupCalibration
    pairs: list[PairGap]
    difference: GroupDifferenceTest
    n_clipped: int
    notes: tuple[str, ...] = ()

    def group(self, name: str) -> GroupCalibration:
        if name == OVERALL:
            return self.overall
        return next(g for g in self.groups if g.name == name)

    @property
    def all_groups(self) -> list[GroupCalibration]:
        return [*self.groups, self.overall]

    def key(self, g: GroupCalibration) -> str:
        """A group's name in the JSON and the tables: a group literally named "overall" reads "overall (group)"."""
        return g.name if g.name != OVERALL or g is self.overall else f"{g.name} (group)"

    def group_rows(self) -> list[dict]:
        """One record per group and one for all rows (last), keyed as in the JSON: every per-group number the
        section shows. Undefined values are None or NaN, never 0."""
        return [_group_row(self.key(g), g, g is self.overall) for g in self.all_groups]

    def bin_rows(self, strategy: str | None = None) -> list[dict]:
        """The reliability bins of every group and of all rows (``strategy``: the params' one by default)."""
        strategy = strategy or self.params.strategy
        return [{"group": self.key(g), "bin": k + 1, **row}
                for g in self.all_groups for k, row in enumerate(g.reliability[strategy].rows())]

    def pair_rows(self) -> list[dict]:
        """Calibration error gaps of each ordered pair (i minus j) with their percentile intervals."""
        return [{"group_i": p.group_i, "group_j": p.group_j, "ece_diff": p.ece_diff,
                 "ece_diff_ci": _pair(p.ece_diff_ci), "smooth_ece_diff": p.smooth_ece_diff,
                 "smooth_ece_diff_ci": _pair(p.smooth_ece_diff_ci)} for p in self.pairs]

    def difference_rows(self) -> list[dict]:
        """Each tested group's intercept and slope minus the reference group's, from the model with group terms."""
        diff = self.difference
        return [{"group_i": name, "group_j": diff.reference,
                 "intercept_diff": d["intercept"].estimate, "intercept_diff_p": d["intercept"].p,
                 "slope_diff": d["slope"].estimate, "slope_diff_p": d["slope"].p}
                for name, d in diff.differences.items()]


def _group_row(key: str, g: GroupCalibration, overall: bool) -> dict:
    linear, spline, perf = g.linear, g.spline, g.performance
    intercept, slope, joint, large = linear.intercept, linear.slope, linear.joint, linear.in_the_large
    return {
        "group": key, "n": g.n, "n_pos": g.n_pos, "mean_score": g.mean_score, "observed_rate": g.observed_rate,
        "n_clipped": g.n_clipped, "status": linear.status or None,
        "ece": g.ece, "ece_ci": _pair(g.ece_ci), "ece_regime": g.ece_regime,
        "smooth_ece": g.smooth_ece, "smooth_ece_ci": _pair(g.smooth_ece_ci), "smooth_ece_bandwidth": g.smooth_sigma,
        "intercept": intercept.estimate if intercept else None, "intercept_se": intercept.se if intercept else None,
        "intercept_p": intercept.p if intercept else None,
        "slope": slope.estimate if slope else None, "slope_se": slope.se if slope else None,
        "slope_p": slope.p if slope else None,
        "calibration_slope": linear.calibration_slope if slope else None,
        "lr_statistic": joint.statistic if joint else None, "lr_p_value": joint.p if joint else None,
        "calibration_in_the_large": large.estimate if large else None,
        "calibration_in_the_large_p": large.p if large else None,
        "lr_p_value_bh": None if overall else g.joint_p_adjusted,
        "nonlinear_p_value": spline.vs_linear.p if spline.vs_linear else None,
        "nonlinear_p_value_bh": None if overall else g.nonlinear_p_adjusted,
        "spline_vs_calibrated_p_value": spline.vs_calibrated.p if spline.vs_calibrated else None,
        "spline_status": spline.status or None,
        "auroc": perf.auroc, "auroc_ci": _pair(perf.auroc_ci), "log_loss": perf.log_loss,
        "log_loss_ci": _pair(perf.log_loss_ci), "brier": perf.brier, "brier_ci": _pair(perf.brier_ci),
        "performance_status": perf.status or None,
    }


def _pair(interval: stats.Interval) -> tuple[float, float]:
    """An interval as (low, high): JSON writes it as [low, high] (NaN as null), tables as "[low, high]"."""
    return float(interval.low), float(interval.high)


def _scalar(value):
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value
