"""Predictive bias and calibration (seed 001): reliability diagrams, calibration errors, calibration tests,
subgroup performance with uncertainty, per group and overall.

``analyse(predictions, attribute, params)`` is the one entry point of the page and the CLI. It returns a
``CalibrationAudit`` of small frozen dataclasses (no figures); ``fairviz.figures.calibration`` draws them.
Recalibration (§5) lives in ``fairviz.recalibration`` and residual analysis over features (§3) in
``fairviz.feature_residuals``; both reuse the building blocks below.

How it stays fast on millions of rows: every statistic here depends on the rows only through counts.
- The logistic calibration models depend on the rows through (logit p̂, y): rows are aggregated on the
  distinct values of logit p̂ (exact when there are at most ``GLM_SUPPORT`` of them, else snapped to a uniform
  grid of that many points, and the result says so), then fitted as binomial GLMs on those counts.
- The smooth calibration error, the ECE resamples and the performance resamples depend on the rows through
  (cell of p̂, y) with ``CELLS`` equal cells on [0, 1]; a bootstrap resample is a multinomial count vector.

Conventions: "slope" is β₁, the coefficient on logit p̂ when logit p̂ is also an offset (0 when calibrated;
the calibration slope is 1 + β₁); an ordered pair (i, j) means "i minus j".
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Callable

import numpy as np
from scipy import fft as sfft
from scipy import special
from scipy import stats as sps

from fairviz.core import stats
from fairviz.core.ece import ECE_BINS, ece, ece_bin_index, ece_from_sums, ece_regime
from fairviz.core.data import Predictions
from fairviz.core.wording import fmt_p
from dataclasses import replace

EPS = 1e-6                 # p̂ is clipped to [EPS, 1 − EPS] before logit (spec D-12)
GLM_SUPPORT = 4096         # distinct logit values fitted exactly; above this, a uniform grid of this many points
CELLS = 2048               # equal cells on [0, 1] for the smooth ECE and every bootstrap resample
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


# ----------------------------------------------------------------------------------------------- results

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


# ----------------------------------------------------------------------------------------------- formulas

def clip_scores(score: np.ndarray, eps: float = EPS) -> tuple[np.ndarray, int]:
    """p̂ clipped to [eps, 1 − eps] (logit needs 0 < p̂ < 1) and how many rows it changed."""
    score = np.asarray(score, dtype=float)
    clipped = np.clip(score, eps, 1 - eps)
    return clipped, int(np.count_nonzero(clipped != score))


def logit(p: np.ndarray) -> np.ndarray:
    return special.logit(np.clip(np.asarray(p, dtype=float), EPS, 1 - EPS))


def binomial_interval(n_pos, n, level: float = 0.95, method: str = "beta_uniform") -> tuple[np.ndarray, np.ndarray]:
    """Interval for a proportion n_pos/n; NaN where n = 0.

    ``beta_uniform`` is the equal-tailed interval of Beta(n₁+1, n−n₁+1), the posterior under a uniform prior: the
    only one that reproduces the lecture's table (spec B3). The others are the usual alternatives."""
    k = np.asarray(n_pos, dtype=float)
    n = np.asarray(n, dtype=float)
    a = (1 - level) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "beta_uniform":
            low, high = sps.beta.ppf(a, k + 1, n - k + 1), sps.beta.ppf(1 - a, k + 1, n - k + 1)
        elif method == "jeffreys":
            low = np.where(k == 0, 0.0, sps.beta.ppf(a, k + 0.5, n - k + 0.5))
            high = np.where(k == n, 1.0, sps.beta.ppf(1 - a, k + 0.5, n - k + 0.5))
        elif method == "clopper_pearson":
            low = np.where(k == 0, 0.0, sps.beta.ppf(a, k, n - k + 1))
            high = np.where(k == n, 1.0, sps.beta.ppf(1 - a, k + 1, n - k))
        elif method in ("wilson", "wald"):
            z = sps.norm.ppf(1 - a)
            p = k / n
            if method == "wald":
                half = z * np.sqrt(p * (1 - p) / n)
                low, high = np.clip(p - half, 0, 1), np.clip(p + half, 0, 1)
            else:
                centre = (p + z * z / (2 * n)) / (1 + z * z / n)
                half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
                low, high = centre - half, centre + half
        else:
            raise ValueError(f"unknown interval method {method!r}")
    empty = n <= 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def bin_edges(score: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    """Equal-width edges on [0, 1], or equal-count edges (quantiles; repeated edges dropped, as pd.qcut does)."""
    if strategy == "uniform":
        return np.round(np.linspace(0.0, 1.0, n_bins + 1), 12)
    if score.size == 0:
        return np.array([0.0, 1.0])
    return np.unique(np.quantile(score, np.linspace(0.0, 1.0, n_bins + 1)))


def bin_index(score: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin of each score: [e_k, e_{k+1}), the last bin closed. Equal-width bins use the ECE rule (no edge drift)."""
    n_bins = max(edges.size - 1, 1)
    if edges.size == n_bins + 1 and edges[0] == 0.0 and edges[-1] == 1.0 and np.allclose(
            edges, np.linspace(0, 1, n_bins + 1), rtol=0, atol=1e-15):
        return ece_bin_index(score, n_bins)
    return np.clip(np.searchsorted(edges, score, side="right") - 1, 0, n_bins - 1)


def reliability_from_sums(lower, upper, n, n_pos, score_sum, level: float = 0.95,
                          ci_method: str = "beta_uniform", strategy: str = "uniform") -> ReliabilityTable:
    n = np.asarray(n, dtype=np.int64)
    n_pos = np.asarray(n_pos, dtype=np.int64)
    safe = np.where(n > 0, n, 1)
    empty = n == 0
    observed = np.where(empty, np.nan, n_pos / safe)
    z = sps.norm.ppf(0.5 + level / 2)
    low, high = binomial_interval(n_pos, n, level, ci_method)
    with np.errstate(invalid="ignore"):
        moe = np.where(empty, np.nan, z * np.sqrt(observed * (1 - observed) / safe))
    return ReliabilityTable(strategy, np.asarray(lower, float), np.asarray(upper, float), n, n_pos,
                            np.where(empty, np.nan, np.asarray(score_sum, float) / safe), observed,
                            np.where(empty, np.nan, (n_pos + 1) / (n + 2)), low, high, moe)


def reliability_table(y: np.ndarray, score: np.ndarray, n_bins: int = 10, strategy: str = "uniform",
                      level: float = 0.95, ci_method: str = "beta_uniform") -> ReliabilityTable:
    """The lecture's binning table (§4.2.2) for one set of rows."""
    score = np.asarray(score, dtype=float)
    y = np.asarray(y)
    edges = bin_edges(score, n_bins, strategy)
    k = edges.size - 1
    idx = bin_index(score, edges)
    return reliability_from_sums(edges[:-1], edges[1:], np.bincount(idx, minlength=k),
                                 np.bincount(idx, weights=y, minlength=k).round().astype(np.int64),
                                 np.bincount(idx, weights=score, minlength=k), level, ci_method, strategy)


def pearson_residuals(y: np.ndarray, score: np.ndarray, eps: float = EPS) -> np.ndarray:
    """(y − p̂)/sqrt(p̂(1 − p̂)) with p̂ clipped to [eps, 1 − eps] so that it is always finite (§3.2)."""
    p = np.clip(np.asarray(score, dtype=float), eps, 1 - eps)
    return (np.asarray(y, dtype=float) - p) / np.sqrt(p * (1 - p))


def rcs_basis(x: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """Restricted (natural) cubic spline basis: [x, s₁(x), …, s_{k−2}(x)], linear beyond the outer knots.

    Harrell's parameterisation, with the non-linear terms divided by (t_k − t_1)² to keep them on the scale of x.
    """
    x = np.asarray(x, dtype=float)
    t = np.asarray(knots, dtype=float)
    k = t.size
    cols = [x]
    scale = (t[-1] - t[0]) ** 2
    tail = t[-1] - t[-2]

    def cube(v):
        return np.maximum(v, 0.0) ** 3

    for j in range(k - 2):
        term = (cube(x - t[j]) - cube(x - t[-2]) * (t[-1] - t[j]) / tail
                + cube(x - t[-1]) * (t[-2] - t[j]) / tail)
        cols.append(term / scale)
    return np.column_stack(cols)


def weighted_quantiles(values: np.ndarray, weights: np.ndarray, q) -> np.ndarray:
    """Quantiles of a sample given as sorted distinct values and their counts (inverse of the weighted CDF)."""
    cum = np.cumsum(weights)
    total = cum[-1]
    pos = np.searchsorted(cum, np.asarray(q) * total, side="left")
    return values[np.clip(pos, 0, values.size - 1)]


def rcs_knots(values: np.ndarray, weights: np.ndarray, k: int) -> np.ndarray:
    """Knots at Harrell's quantiles; fewer when the data have fewer distinct values there."""
    keep = weights > 0
    values, weights = values[keep], weights[keep]
    order = np.argsort(values)
    knots = np.unique(weighted_quantiles(values[order], weights[order], RCS_QUANTILES[k]))
    return knots


# ----------------------------------------------------------------------------------------------- logistic fits

@dataclass(frozen=True)
class LogisticFit:
    coef: np.ndarray
    cov: np.ndarray
    loglik: float
    converged: bool
    iterations: int

    @property
    def deviance(self) -> float:
        """−2 log L (binary data: the saturated model has log L = 0)."""
        return -2.0 * self.loglik


def binomial_loglik(eta: np.ndarray, n: np.ndarray, s: np.ndarray) -> float:
    """Σ s·η − n·log(1 + e^η): the log-likelihood of the rows behind (n, s) at linear predictor η."""
    return float(np.sum(s * eta) - np.sum(n * np.logaddexp(0.0, eta)))


def fit_logistic(X: np.ndarray, n: np.ndarray, s: np.ndarray, offset: np.ndarray | None = None,
                 max_iter: int = MAX_ITER, tol: float = 1e-10) -> LogisticFit:
    """Binomial GLM (logit link) on aggregated rows: n trials and s successes per row of X, by Newton's method
    with step halving. Equivalent to the row-level fit (same likelihood up to a constant)."""
    X = np.asarray(X, dtype=float)
    n = np.asarray(n, dtype=float)
    s = np.asarray(s, dtype=float)
    off = np.zeros(n.size) if offset is None else np.asarray(offset, dtype=float)
    beta = np.zeros(X.shape[1])
    eta = X @ beta + off
    ll = binomial_loglik(eta, n, s)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        mu = special.expit(eta)
        w = n * mu * (1 - mu)
        grad = X.T @ (s - n * mu)
        hess = X.T @ (X * w[:, None])
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        for _ in range(30):                       # halve until the likelihood does not go down
            new_beta = beta + step
            new_eta = X @ new_beta + off
            new_ll = binomial_loglik(new_eta, n, s)
            if new_ll >= ll - 1e-12 * abs(ll):
                break
            step = step / 2
        change = new_ll - ll
        beta, eta, ll = new_beta, new_eta, new_ll
        if abs(change) <= tol * (abs(ll) + 1.0):
            converged = True
            break
    mu = special.expit(eta)
    hess = X.T @ (X * (n * mu * (1 - mu))[:, None])
    try:
        cov = np.linalg.inv(hess)
    except np.linalg.LinAlgError:
        cov = np.full_like(hess, np.nan)
        converged = False
    if not np.all(np.isfinite(beta)):
        converged = False
    return LogisticFit(beta, cov, ll, converged, it)


def separated(fit: LogisticFit, limit: float = 30.0) -> bool:
    """Coefficients this large mean the outcome is (quasi-)separated by the score. The likelihood then converges
    to its supremum while coefficients drift off: LR statistics stay valid, Wald statistics do not."""
    return not fit.converged or bool(np.max(np.abs(fit.coef), initial=0.0) > limit)


def _coefficient(fit: LogisticFit, j: int) -> Coefficient:
    est = float(fit.coef[j])
    se = float(np.sqrt(fit.cov[j, j])) if fit.cov[j, j] > 0 else float("nan")
    z = est / se if se > 0 else float("nan")
    return Coefficient(est, se, z, float(2 * sps.norm.sf(abs(z))) if np.isfinite(z) else float("nan"))


def lr_test(deviance_null: float, deviance_alt: float, df: int) -> LRTest:
    stat = max(float(deviance_null - deviance_alt), 0.0)
    return LRTest(stat, int(df), float(sps.chi2.sf(stat, df)))


# ----------------------------------------------------------------------------------------------- aggregated data

@dataclass(frozen=True)
class LogitCounts:
    """Rows aggregated on logit p̂: support (sorted), trials and successes per group (G × K)."""
    gamma: np.ndarray
    n: np.ndarray
    s: np.ndarray
    step: float = 0.0            # > 0 when logit values were snapped to a grid of this step

    def group(self, g: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.n.sum(0) if g is None else self.n[g]
        s = self.s.sum(0) if g is None else self.s[g]
        keep = n > 0
        return self.gamma[keep], n[keep], s[keep]


def logit_counts(score: np.ndarray, y: np.ndarray, codes: np.ndarray, n_groups: int,
                 max_support: int = GLM_SUPPORT) -> LogitCounts:
    distinct, inverse = np.unique(score, return_inverse=True)
    if distinct.size <= max_support:
        gamma = logit(distinct)
        cell = inverse.astype(np.int64)
        step = 0.0
    else:
        g = logit(score)
        lo, hi = float(g.min()), float(g.max())
        gamma = np.linspace(lo, hi, max_support)
        step = float(gamma[1] - gamma[0])
        cell = np.clip(np.rint((g - lo) / step), 0, max_support - 1).astype(np.int64)
    k = gamma.size
    flat = codes.astype(np.int64) * k + cell
    n = np.bincount(flat, minlength=n_groups * k).reshape(n_groups, k)
    s = np.bincount(flat, weights=y, minlength=n_groups * k).reshape(n_groups, k).round().astype(np.int64)
    return LogitCounts(gamma, n, s, step)


def linear_bias_test(gamma: np.ndarray, n: np.ndarray, s: np.ndarray, min_events: int = 10) -> LinearBiasTest:
    """The lecture's §4.5 glm: intercept and slope with the offset, their Wald tests, and the joint LR test."""
    n_pos = int(s.sum())
    n_tot = int(n.sum())
    deviance_offset = -2.0 * binomial_loglik(gamma, n, s)
    reason = _too_small(n_tot, n_pos, min_events)
    if not reason and np.unique(gamma[n > 0]).size < 2:
        reason = "every score in the group is the same: a slope cannot be estimated"
    if reason:
        return LinearBiasTest(None, None, None, None, deviance_offset, float("nan"), reason)
    fit = fit_logistic(np.column_stack([np.ones_like(gamma), gamma]), n, s, offset=gamma)
    citl = fit_logistic(np.ones((gamma.size, 1)), n, s, offset=gamma)
    if separated(fit):
        return LinearBiasTest(None, None, None, None, deviance_offset, float("nan"),
                              "the fit did not converge (the outcome is perfectly separated by the score)")
    return LinearBiasTest(_coefficient(fit, 0), _coefficient(fit, 1), lr_test(deviance_offset, fit.deviance, 2),
                          _coefficient(citl, 0) if citl.converged else None, deviance_offset, fit.deviance)


def spline_fit(gamma: np.ndarray, n: np.ndarray, s: np.ndarray, knots_wanted: int = 4,
               min_events: int = 10) -> tuple[LogisticFit | None, np.ndarray, str]:
    """Logistic regression of y on [1, RCS(logit p̂)]: the smooth curve and the non-linear test in one fit.
    (With logit p̂ as an offset the fitted values are the same: the basis already holds logit p̂.)"""
    n_pos, n_tot = int(s.sum()), int(n.sum())
    reason = _too_small(n_tot, n_pos, min_events)
    if reason:
        return None, np.empty(0), reason
    knots = rcs_knots(gamma, n, knots_wanted)
    if knots.size < 3:
        return None, knots, f"too few distinct scores for a spline ({np.count_nonzero(n)} distinct)"
    fit = fit_logistic(spline_design(gamma, knots), n, s)
    if not fit.converged:
        return None, knots, "the spline fit did not converge"
    return fit, knots, ""


def spline_design(gamma: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """[1, RCS basis] on logit p̂ centred and scaled by the knots (same fit, better conditioned)."""
    centre, width = (knots[0] + knots[-1]) / 2, max(knots[-1] - knots[0], 1e-9)
    basis = rcs_basis((gamma - centre) / width, (knots - centre) / width)
    return np.column_stack([np.ones(basis.shape[0]), basis])


def spline_bias_test(gamma, n, s, knots_wanted: int = 4, min_events: int = 10,
                     linear: LinearBiasTest | None = None, fitted: tuple | None = None) -> SplineBiasTest:
    fit, knots, reason = fitted if fitted is not None else spline_fit(gamma, n, s, knots_wanted, min_events)
    if reason:
        return SplineBiasTest(tuple(map(float, knots)), None, None, float("nan"), reason)
    linear = linear or linear_bias_test(gamma, n, s, min_events)
    params = fit.coef.size
    vs_cal = lr_test(linear.deviance_offset, fit.deviance, params)
    vs_lin = lr_test(linear.deviance_fit, fit.deviance, params - 2) if linear.ok else None
    return SplineBiasTest(tuple(map(float, knots)), vs_cal, vs_lin, fit.deviance)


def smooth_curve(fit: LogisticFit | None, knots: np.ndarray, gamma: np.ndarray, n: np.ndarray,
                 reason: str = "", level: float = 0.95, points: int = CURVE_POINTS) -> SmoothCurve:
    if fit is None:
        empty = np.empty(0)
        return SmoothCurve(empty, empty, empty, empty, reason or "no fit")
    used = gamma[n > 0]
    grid = np.linspace(used.min(), used.max(), points)
    X = spline_design(grid, knots)
    eta = X @ fit.coef
    se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", X, fit.cov, X), 0.0))
    z = sps.norm.ppf(0.5 + level / 2)
    return SmoothCurve(special.expit(grid), special.expit(eta), special.expit(eta - z * se), special.expit(eta + z * se))


def _too_small(n: int, n_pos: int, min_events: int) -> str:
    n_neg = n - n_pos
    if min(n_pos, n_neg) < min_events:
        return (f"not enough data (n = {n:,}: {n_pos:,} positive, {n_neg:,} negative; "
                f"a test needs {min_events} of each)")
    return ""


# ----------------------------------------------------------------------------------------------- smooth ECE

def smooth_ece_from_masses(residual: np.ndarray, n: np.ndarray | float, sigma_min: float = SMECE_MIN_SIGMA,
                           near: float | None = None, iterations: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """SmoothECE (Błasiok & Nakkiran, ICLR 2024) from residual masses Σ(y − p̂) on equal cells of [0, 1].

    smECE_σ = ∫₀¹ |(1/n) Σ_i K_σ(t, p̂_i)(y_i − p̂_i)| dt with K_σ the Gaussian kernel reflected at 0 and 1, and the
    bandwidth is the fixed point σ* = smECE_σ* (smECE_σ decreases in σ), floored at ``sigma_min`` as relplot does.
    The reflected kernel is diagonal in the cosine basis: K_σ(t, s) = 1 + 2 Σ_k e^{−π²k²σ²/2} cos(πkt) cos(πks), so
    smoothing is a DCT-II, a product and a DCT-III, evaluated on as many points as σ needs (≥ 8 per σ).
    Works on batches (last axis = cells); ``near`` (a bandwidth) narrows the first bracket for resamples.
    Returns (smECE, σ*)."""
    residual = np.atleast_2d(np.asarray(residual, dtype=float))
    batch, m = residual.shape
    n = np.broadcast_to(np.asarray(n, dtype=float), (batch,))
    coef = sfft.dct(residual, type=2, axis=-1) / 2.0               # C_k = Σ_j r_j cos(πk t_j)
    scale = np.maximum(n, 1)[:, None]

    def h(sigma: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """smECE_σ − σ (for all rows, or only the chosen ones: 0 elsewhere)."""
        if rows is None:
            return _smece_at(coef, scale, sigma, m) - sigma
        out = np.zeros(batch)
        if rows.any():
            out[rows] = _smece_at(coef[rows], scale[rows], sigma[rows], m) - sigma[rows]
        return out

    # Root of h (decreasing in σ) by the Illinois variant of regula falsi, inside a bracket [lo, hi].
    lo, hi = np.full(batch, sigma_min), np.ones(batch)
    if near is not None and np.isfinite(near):
        lo_try, hi_try = np.full(batch, max(sigma_min, near / 4)), np.full(batch, min(1.0, near * 4))
        above_lo, below_hi = h(lo_try) > 0, h(hi_try) <= 0
        lo = np.where(above_lo, np.where(below_hi, lo_try, hi_try), lo)
        hi = np.where(above_lo, np.where(below_hi, hi_try, hi), lo_try)
    h_hi = h(hi)
    at_min = lo <= sigma_min
    h_lo = h(lo) if not at_min.any() else h(lo, ~at_min) + h(lo, at_min)   # finest σ costs most: only if needed
    at_floor = h_lo <= 0
    active = ~at_floor & (h_hi < 0)
    for _ in range(iterations):
        if not active.any():
            break
        mid = hi - h_hi * (hi - lo) / np.where(h_hi != h_lo, h_hi - h_lo, -1.0)
        mid = np.where((mid <= lo) | (mid >= hi) | ~np.isfinite(mid), (lo + hi) / 2, mid)
        h_mid = h(mid)
        above = active & (h_mid > 0)
        below = active & ~above
        h_hi = np.where(above, h_hi / 2, np.where(below, h_mid, h_hi))       # Illinois: halve the end kept
        h_lo = np.where(below, h_lo / 2, np.where(above, h_mid, h_lo))
        lo, hi = np.where(above, mid, lo), np.where(below, mid, hi)
        active &= (hi - lo > 1e-6 * hi) & (np.abs(h_mid) > 1e-7)
    sigma = np.where(at_floor, sigma_min, np.where(np.abs(h_lo) <= np.abs(h_hi), lo, hi))
    return _smece_at(coef, scale, sigma, m), sigma


def _smece_at(coef: np.ndarray, scale: np.ndarray, sigma: np.ndarray, m: int) -> np.ndarray:
    """smECE_σ for each row of DCT coefficients at its own σ, on a grid as fine as the smallest σ needs."""
    kmax = int(min(m, np.ceil(4.0 / max(float(sigma.min()), 1e-9)) + 1))   # e^{−π²k²σ²/2} < 1e-34 beyond
    length = int(min(m, max(256, 1 << int(np.ceil(np.log2(2 * kmax))))))
    k = np.arange(min(kmax, length))
    spectrum = np.zeros((coef.shape[0], length))
    spectrum[:, : k.size] = coef[:, : k.size] * np.exp(-((np.pi * k) ** 2 / 2.0)[None, :] * (sigma[:, None] ** 2))
    rho = sfft.dct(spectrum, type=3, axis=-1) / scale
    return np.abs(rho).mean(-1)


def smooth_ece(y: np.ndarray, score: np.ndarray, cells: int = CELLS) -> tuple[float, float]:
    """SmoothECE of one set of rows. Returns (smECE, bandwidth σ*)."""
    score = np.asarray(score, dtype=float)
    if score.size == 0:
        return float("nan"), float("nan")
    cell = _cell_index(score, cells)
    residual = np.bincount(cell, weights=np.asarray(y, float) - score, minlength=cells)
    value, sigma = smooth_ece_from_masses(residual, score.size)
    return float(value[0]), float(sigma[0])


def _cell_index(score: np.ndarray, cells: int = CELLS) -> np.ndarray:
    return np.minimum(np.floor(np.asarray(score, float) * cells), cells - 1).astype(np.int64)


# ----------------------------------------------------------------------------------------------- performance

def auroc_from_counts(neg: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """AUROC from counts of negatives and positives per sorted score value (ties count ½). Batches: last axis."""
    neg = np.atleast_2d(neg).astype(float)
    pos = np.atleast_2d(pos).astype(float)
    below = np.cumsum(neg, -1) - neg
    n0, n1 = neg.sum(-1), pos.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = (pos * (below + 0.5 * neg)).sum(-1) / (n0 * n1)
    return np.where((n0 > 0) & (n1 > 0), value, np.nan)


def auroc(y: np.ndarray, score: np.ndarray) -> float:
    distinct, inverse = np.unique(score, return_inverse=True)
    y = np.asarray(y)
    neg = np.bincount(inverse[y == 0], minlength=distinct.size)
    pos = np.bincount(inverse[y == 1], minlength=distinct.size)
    return float(auroc_from_counts(neg, pos)[0])


def log_loss(y: np.ndarray, score: np.ndarray) -> float:
    p = np.clip(np.asarray(score, float), EPS, 1 - EPS)
    y = np.asarray(y, float)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log1p(-p))) if p.size else float("nan")


def brier(y: np.ndarray, score: np.ndarray) -> float:
    return float(np.mean((np.asarray(score, float) - np.asarray(y, float)) ** 2)) if np.size(y) else float("nan")


# ----------------------------------------------------------------------------------------------- analysis

@dataclass
class _Cells:
    """Per group and outcome: counts, score sums, log-loss and squared-error sums over CELLS cells of p̂."""
    counts: np.ndarray          # (G, 2, M) int
    score_sum: np.ndarray       # (G, 2, M)
    loss_sum: np.ndarray        # (G, 2, M)  Σ −log p̂ (y = 1) or −log(1 − p̂) (y = 0), p̂ clipped
    sq_sum: np.ndarray          # (G, 2, M)
    boot: dict = field(default_factory=dict)

    def resample(self, g: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
        """(B, 2, M) row-bootstrap counts of group g (its size kept)."""
        if g not in self.boot:
            flat = self.counts[g].reshape(-1)
            self.boot[g] = stats.bootstrap_counts(flat, resamples, rng).reshape(resamples, 2, -1)
        return self.boot[g]


def _cells(score: np.ndarray, y: np.ndarray, codes: np.ndarray, n_groups: int, cells: int = CELLS) -> _Cells:
    cell = _cell_index(score, cells)
    flat = (codes.astype(np.int64) * 2 + y.astype(np.int64)) * cells + cell
    size = n_groups * 2 * cells
    p = np.clip(score, EPS, 1 - EPS)
    loss = np.where(y == 1, -np.log(p), -np.log1p(-p))
    shape = (n_groups, 2, cells)
    return _Cells(np.bincount(flat, minlength=size).reshape(shape),
                  np.bincount(flat, weights=score, minlength=size).reshape(shape),
                  np.bincount(flat, weights=loss, minlength=size).reshape(shape),
                  np.bincount(flat, weights=(score - y) ** 2, minlength=size).reshape(shape))


def analyse(pred: Predictions, attribute: str | None = None, params: CalibrationParams = CalibrationParams(),
            progress: Progress | None = None) -> CalibrationAudit:
    report = progress or (lambda *_: None)
    view = pred.groups(attribute)
    names = list(view.names)
    n_groups = len(names)
    score, y, codes = pred.score, pred.y, view.codes
    notes: list[str] = []

    report(0.05, "Binning and aggregating")
    clipped, n_clipped = clip_scores(score)
    clipped_by_group = np.bincount(codes[clipped != score], minlength=n_groups)
    if n_clipped:
        notes.append(f"{n_clipped:,} rows have a score of exactly 0 or 1 (or within {EPS:g} of it): logit(p̂) is "
                     f"undefined there, so they were clipped to [{EPS:g}, 1 − {EPS:g}] for the logistic tests, the "
                     "smooth curve and the log-loss. Bins, ECE and Brier use the scores as given.")
    tables = _reliability_tables(score, y, codes, n_groups, params)
    lc = logit_counts(score, y, codes, n_groups)
    if lc.step:
        notes.append(f"More than {GLM_SUPPORT:,} distinct scores: the logistic tests ran on logit(p̂) rounded to a grid "
                     f"of step {lc.step:.4f} (a negligible change at this sample size).")
    cells = _cells(score, y, codes, n_groups)
    distinct, ranks = np.unique(score, return_inverse=True)

    rng = np.random.default_rng(params.seed)
    results = []
    for g, name in enumerate(names):
        report(0.1 + 0.75 * g / n_groups, f"Group {name}")
        mask = codes == g
        results.append(_group_result(name, g, score[mask], y[mask], ranks[mask], distinct.size, lc, cells,
                                     tables, int(clipped_by_group[g]), params, rng))
    report(0.85, "All rows")
    overall = _group_result(OVERALL, None, score, y, ranks, distinct.size, lc, cells, tables, n_clipped, params, rng)

    report(0.9, "Comparing groups")
    joint_adj = stats.benjamini_hochberg([r.linear.joint.p if r.linear.ok else np.nan for r in results])
    nonlin_adj = stats.benjamini_hochberg([r.spline.vs_linear.p if r.spline.ok and r.spline.vs_linear else np.nan
                                           for r in results])
    results = [_with_adjusted(r, a, b) for r, a, b in zip(results, joint_adj, nonlin_adj)]
    pairs = [_pair_gap(results[i], results[j], cells, i, j, params, rng) for i, j in combinations(range(n_groups), 2)]
    difference = group_difference_test(lc, names, params.min_events)
    for r in results:
        if not r.linear.ok:
            notes.append(f"Group '{r.name}': {r.linear.status}; its tests are not reported.")
        if r.performance.status:
            notes.append(f"Group '{r.name}': {r.performance.status}.")
    report(1.0, "Done")
    return CalibrationAudit(view.attribute, params, results, overall, pairs, difference, n_clipped, tuple(notes))


def _with_adjusted(r: GroupCalibration, joint: float, nonlinear: float) -> GroupCalibration:
    return replace(r, joint_p_adjusted=float(joint), nonlinear_p_adjusted=float(nonlinear))


def _reliability_tables(score, y, codes, n_groups, params: CalibrationParams) -> dict:
    """strategy → list of tables (one per group, then overall). Equal-width bins in one bincount pass."""
    out = {}
    k = params.n_bins
    edges = np.round(np.linspace(0.0, 1.0, k + 1), 12)
    flat = codes.astype(np.int64) * k + ece_bin_index(score, k)
    n = np.bincount(flat, minlength=n_groups * k).reshape(n_groups, k)
    n_pos = np.bincount(flat, weights=y, minlength=n_groups * k).reshape(n_groups, k).round().astype(np.int64)
    sums = np.bincount(flat, weights=score, minlength=n_groups * k).reshape(n_groups, k)
    uniform = [reliability_from_sums(edges[:-1], edges[1:], n[g], n_pos[g], sums[g], params.level,
                                     params.ci_method, "uniform") for g in range(n_groups)]
    uniform.append(reliability_from_sums(edges[:-1], edges[1:], n.sum(0), n_pos.sum(0), sums.sum(0), params.level,
                                         params.ci_method, "uniform"))
    out["uniform"] = uniform
    quantile = []
    for g in [*range(n_groups), None]:
        mask = slice(None) if g is None else codes == g
        quantile.append(reliability_table(y[mask], score[mask], k, "quantile", params.level, params.ci_method))
    out["quantile"] = quantile
    return out


def _group_result(name, g, score, y, ranks, n_distinct, lc: LogitCounts, cells: _Cells, tables, n_clipped,
                  params: CalibrationParams, rng) -> GroupCalibration:
    index = -1 if g is None else g
    gamma, n, s = lc.group(g)
    linear = linear_bias_test(gamma, n, s, params.min_events)
    fitted = spline_fit(gamma, n, s, params.spline_knots, params.min_events)
    spline = spline_bias_test(gamma, n, s, params.spline_knots, params.min_events, linear, fitted)
    curve = smooth_curve(fitted[0], fitted[1], gamma, n, fitted[2], params.level)

    boot = _boot_counts(g, cells, params, rng)                 # (B, 2, M)
    ece_value = ece(score, y)
    residual = np.bincount(_cell_index(score), weights=y - score, minlength=CELLS)
    sm_value, sm_sigma = smooth_ece_from_masses(residual, score.size)
    ece_boot, sm_boot = _error_resamples(cells, g, boot, float(sm_sigma[0]))
    performance = _performance(y, score, ranks, n_distinct, boot, cells, g, params)
    return GroupCalibration(
        name=name, n=int(y.size), n_pos=int(y.sum()), mean_score=float(score.mean()), observed_rate=float(y.mean()),
        n_clipped=n_clipped, reliability={k: v[index] for k, v in tables.items()},
        ece=ece_value, ece_ci=basic_interval(ece_value, ece_boot, params.level, floor=0.0),
        smooth_ece=float(sm_value[0]), smooth_ece_ci=basic_interval(float(sm_value[0]), sm_boot, params.level, 0.0),
        smooth_sigma=float(sm_sigma[0]), linear=linear, spline=spline, curve=curve, performance=performance)


def _boot_counts(g, cells: _Cells, params: CalibrationParams, rng) -> np.ndarray:
    """A group's resamples; the overall resample is the sum of the groups' (a bootstrap stratified by group)."""
    if params.resamples <= 0:
        return np.zeros((0, 2, CELLS), dtype=np.int64)
    if g is None:
        return sum(cells.resample(k, params.resamples, rng) for k in range(cells.counts.shape[0]))
    return cells.resample(g, params.resamples, rng)


def basic_interval(estimate: float, samples: np.ndarray, level: float = 0.95,
                   floor: float | None = None) -> stats.Interval:
    """Basic (reverse-percentile) bootstrap interval [2θ̂ − q_hi, 2θ̂ − q_lo].

    Calibration errors are biased upwards (noise adds to |observed − predicted|), and a resample adds that bias
    again, so percentile intervals sit above the estimate and often exclude it. The basic interval reflects
    the resampling distribution about the estimate, correcting the first-order bias (relplot does the same)."""
    pct = stats.percentile_interval(samples, level)
    if not (np.isfinite(pct.low) and np.isfinite(estimate)):
        return pct
    low, high = 2 * estimate - pct.high, 2 * estimate - pct.low
    if floor is not None:
        low, high = max(low, floor), max(high, floor)
    return stats.Interval(float(low), float(high), level, pct.resamples)


def _error_resamples(cells: _Cells, g, boot: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """ECE and smooth ECE of a group's resamples (cached: the pair gaps reuse them)."""
    key = ("errors", g)
    if key not in cells.boot:
        means = _cell_means(cells, g)
        cells.boot[key] = (_ece_of_counts(boot, means), _smooth_ece_of_counts(boot, means, sigma))
    return cells.boot[key]


def _cell_means(cells: _Cells, g) -> np.ndarray:
    counts = cells.counts.sum(1) if g is not None else cells.counts.sum((0, 1))
    sums = cells.score_sum.sum(1) if g is not None else cells.score_sum.sum((0, 1))
    if g is not None:
        counts, sums = counts[g], sums[g]
    centres = (np.arange(CELLS) + 0.5) / CELLS
    return np.where(counts > 0, sums / np.maximum(counts, 1), centres)


def _ece_of_counts(boot: np.ndarray, means: np.ndarray) -> np.ndarray:
    if boot.shape[0] == 0:
        return np.empty(0)
    used = np.flatnonzero(boot.any((0, 1)))                    # empty cells add nothing
    boot, means = boot[:, :, used], means[used]
    onehot = np.zeros((used.size, ECE_BINS))
    onehot[np.arange(used.size), ece_bin_index(means)] = 1
    total = boot.sum(1)
    return ece_from_sums(total @ onehot, (total * means) @ onehot, boot[:, 1] @ onehot)


def _smooth_ece_of_counts(boot: np.ndarray, means: np.ndarray, near: float | None = None,
                          chunk: int = 250) -> np.ndarray:
    if boot.shape[0] == 0:
        return np.empty(0)
    out = []
    for start in range(0, boot.shape[0], chunk):                # bounded memory on any number of resamples
        part = boot[start:start + chunk]
        residual = part[:, 1] - part.sum(1) * means              # Σ(y − p̂) with p̂ at its cell's mean
        out.append(smooth_ece_from_masses(residual, part.sum((1, 2)), near=near)[0])
    return np.concatenate(out)


def _performance(y, score, ranks, n_distinct, boot, cells: _Cells, g, params: CalibrationParams) -> Performance:
    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    neg = np.bincount(ranks[y == 0], minlength=n_distinct)
    pos = np.bincount(ranks[y == 1], minlength=n_distinct)
    auc = float(auroc_from_counts(neg, pos)[0])
    ll, br = log_loss(y, score), brier(y, score)
    level = params.level
    if boot.shape[0]:
        counts = cells.counts.sum(0) if g is None else cells.counts[g]
        loss = cells.loss_sum.sum(0) if g is None else cells.loss_sum[g]
        sq = cells.sq_sum.sum(0) if g is None else cells.sq_sum[g]
        used = np.flatnonzero(counts.any(0))                   # empty cells add nothing
        boot, counts, loss, sq = boot[:, :, used], counts[:, used], loss[:, used], sq[:, used]
        per_loss = loss / np.maximum(counts, 1)
        per_sq = sq / np.maximum(counts, 1)
        total = boot.sum((1, 2))
        auc_boot = auroc_from_counts(boot[:, 0], boot[:, 1])
        ll_boot = (boot * per_loss).sum((1, 2)) / total
        br_boot = (boot * per_sq).sum((1, 2)) / total
        intervals = [stats.percentile_interval(v, level) for v in (auc_boot, ll_boot, br_boot)]
    else:
        intervals = [stats.Interval(np.nan, np.nan, level)] * 3
    status = ""
    if min(n_pos, n_neg) < 5:
        status = f"insufficient data ({n_pos} positive, {n_neg} negative rows): the estimates are very noisy"
    return Performance(auc, intervals[0], ll, intervals[1], br, intervals[2], status)


def _pair_gap(a: GroupCalibration, b: GroupCalibration, cells: _Cells, i: int, j: int,
              params: CalibrationParams, rng) -> PairGap:
    level = params.level
    if params.resamples <= 0:
        none = stats.Interval(np.nan, np.nan, level)
        return PairGap(a.name, b.name, a.ece - b.ece, none, a.smooth_ece - b.smooth_ece, none)
    ece_i, sm_i = _error_resamples(cells, i, cells.resample(i, params.resamples, rng), a.smooth_sigma)
    ece_j, sm_j = _error_resamples(cells, j, cells.resample(j, params.resamples, rng), b.smooth_sigma)
    ece_gap, sm_gap = a.ece - b.ece, a.smooth_ece - b.smooth_ece
    return PairGap(a.name, b.name, ece_gap, basic_interval(ece_gap, ece_i - ece_j, level),
                   sm_gap, basic_interval(sm_gap, sm_i - sm_j, level))


def group_difference_test(lc: LogitCounts, names: list[str], min_events: int = 10) -> GroupDifferenceTest:
    """LR tests of group-specific calibration against shared calibration, over the groups big enough to test.

    The model with a group term and a group × logit p̂ interaction is the same as one fit per group, so its
    deviance is the sum of the groups' deviances; the Wald tests of the differences use the groups' own fits
    (the interaction model's information matrix is block-diagonal by group)."""
    tested, excluded, fits, citl_dev = [], [], {}, 0.0
    for g, name in enumerate(names):
        gamma, n, s = lc.group(g)
        test = linear_bias_test(gamma, n, s, min_events)
        if not test.ok:
            excluded.append(name)
            continue
        tested.append(g)
        fits[name] = test
        citl_dev += fit_logistic(np.ones((gamma.size, 1)), n, s, offset=gamma).deviance
    reference = names[tested[0]] if tested else ""
    if len(tested) < 2:
        return GroupDifferenceTest(tuple(names[g] for g in tested), tuple(excluded), None, None, {}, reference,
                                   "fewer than two groups have enough data to compare")
    n = lc.n[tested].sum(0)
    s = lc.s[tested].sum(0)
    keep = n > 0
    gamma, n, s = lc.gamma[keep], n[keep], s[keep]
    shared = fit_logistic(np.column_stack([np.ones_like(gamma), gamma]), n, s, offset=gamma)
    shared_citl = fit_logistic(np.ones((gamma.size, 1)), n, s, offset=gamma)
    separate = sum(t.deviance_fit for t in fits.values())
    k = len(tested)
    ref = fits[reference]
    differences = {}
    for name, t in fits.items():
        if name == reference:
            continue
        differences[name] = {"intercept": _difference(t.intercept, ref.intercept),
                             "slope": _difference(t.slope, ref.slope)}
    return GroupDifferenceTest(tuple(fits), tuple(excluded), lr_test(shared.deviance, separate, 2 * (k - 1)),
                               lr_test(shared_citl.deviance, citl_dev, k - 1), differences, reference)


def _difference(a: Coefficient, b: Coefficient) -> Coefficient:
    est = a.estimate - b.estimate
    se = float(np.hypot(a.se, b.se))
    z = est / se if se > 0 else float("nan")
    return Coefficient(est, se, z, float(2 * sps.norm.sf(abs(z))) if np.isfinite(z) else float("nan"))


def _scalar(value):
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


# ----------------------------------------------------------------------------------------------- wording

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

