"""Calibration in the mean of a numeric prediction, by group: is E[y | ŷ] = ŷ?

Three views, all on entries with integer weights (an entry of weight w counts exactly as w identical rows):

* binned means (``binned_means``): bins of ŷ shared by every group (equal-count: the all-rows quantiles of ŷ, or
  equal-width over ŷ's range), the mean of y in each with a t interval;
* the Mincer–Zarnowitz regression y = a + b·ŷ + e per group (Mincer & Zarnowitz 1969; here): calibrated in the
  mean means a = 0 and b = 1, tested jointly by a Wald F test; and nested-model F tests of whether the groups share
  one intercept and slope (y ~ ŷ against y ~ group·ŷ) or one slope (y ~ group + ŷ against y ~ group·ŷ);
* coverage of central prediction intervals per group (``interval_coverage``) when quantile predictions are given,
  with exact binomial intervals and tests, and a χ² test of equal coverage across groups.

``regression_calibration`` runs all three on arrays; ``analyse_regression`` on ``Predictions`` whose task has a
numeric target (``TaskSpec.numeric_target``).

The covariance of the coefficients is the classical OLS one (constant error variance) or White's HC1; the group
comparison assumes a common error variance, as the F test of nested OLS models does."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from scipy import stats as sps

from fairviz.calibration.binned_means import STRATEGIES, MeanTable, bin_edges, bins_note, mean_table
from fairviz.calibration.entries import OVERALL, ByGroup, entry_weights, finite_values, group_codes, per_group
from fairviz.calibration.entries import json_attr as _attr
from fairviz.calibration.entries import json_scalar as _scalar
from fairviz.calibration.entries import weighted_mean as _mean
from fairviz.calibration.interval_coverage import Coverage, central_bands, coverage, equal_coverage_p
from fairviz.core.stats import benjamini_hochberg
from fairviz.data import DataError
from fairviz.data.tasks import spec_of

COVARIANCES = ("classical", "HC1")


@dataclass(frozen=True)
class RegressionParams:
    n_bins: int = 10
    strategy: str = "quantile"        # equal-count bins of ŷ (all rows' quantiles) or "uniform" (equal width)
    level: float = 0.95
    alpha: float = 0.05
    covariance: str = "classical"     # the coefficients' covariance: "classical" OLS or "HC1" (heteroscedasticity)
    min_rows: int = 10                # a group is tested from this many rows (and two distinct ŷ)

    def __post_init__(self):
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        if self.covariance not in COVARIANCES:
            raise ValueError(f"covariance must be one of {COVARIANCES}, got {self.covariance!r}")
        if not 2 <= self.n_bins <= 100:
            raise ValueError(f"n_bins must be between 2 and 100, got {self.n_bins}")
        if self.min_rows < 3:
            raise ValueError("min_rows must be at least 3 (two coefficients and a residual variance)")


@dataclass(frozen=True)
class Estimate:
    """A coefficient with its standard error, the t test against ``null`` and a t interval."""
    estimate: float
    se: float
    null: float
    t: float
    p: float
    low: float
    high: float


@dataclass(frozen=True)
class FTest:
    statistic: float
    df_num: int
    df_den: float
    p: float


@dataclass(frozen=True)
class MincerZarnowitz:
    """y = a + b·ŷ + e on one group's rows; a = 0 and b = 1 when the group is calibrated in the mean."""
    intercept: Estimate | None
    slope: Estimate | None
    joint: FTest | None           # a = 0 and b = 1 together (Wald F, 2 and n − 2 df)
    rss: float
    status: str = ""              # "" when fitted, else why not

    @property
    def ok(self) -> bool:
        return not self.status


@dataclass(frozen=True)
class RegressionGroup:
    name: str
    n: int
    mean_y: float
    mean_pred: float
    bins: MeanTable
    mz: MincerZarnowitz
    coverage: tuple[Coverage, ...] = ()
    joint_p_bh: float = float("nan")   # the joint test, Benjamini–Hochberg across the tested groups


@dataclass(frozen=True)
class RegressionCalibration(ByGroup):
    attribute: str
    params: RegressionParams
    overall: RegressionGroup
    groups: tuple[RegressionGroup, ...]
    same_line: FTest | None           # y ~ ŷ against y ~ group·ŷ: do the groups share intercept and slope?
    same_slope: FTest | None          # y ~ group + ŷ against y ~ group·ŷ: do they share the slope?
    tested: tuple[str, ...]           # the groups in the comparison
    coverage_differs: tuple[tuple[float, float], ...] = ()   # (nominal, p of the χ² test of equal coverage)
    notes: tuple[str, ...] = field(default=())

    def group_rows(self) -> list[dict]:
        """One record per group (overall first): sizes, means and the Mincer–Zarnowitz fit."""
        rows = []
        for g in self.all_groups:
            mz = g.mz
            row = {"group": g.name, "n": g.n, "mean_y": g.mean_y, "mean_pred": g.mean_pred}
            for key, est in (("intercept", mz.intercept), ("slope", mz.slope)):
                row.update({key: _attr(est, "estimate"), f"{key}_se": _attr(est, "se"), f"{key}_p": _attr(est, "p"),
                            f"{key}_ci": [_attr(est, "low"), _attr(est, "high")]})
            row.update({"f_statistic": _attr(mz.joint, "statistic"), "f_p": _attr(mz.joint, "p"),
                        "f_p_bh": _scalar(g.joint_p_bh), "status": mz.status})
            rows.append(row)
        return rows

    def bin_rows(self) -> list[dict]:
        return [{"group": g.name, "bin": i, **row} for g in self.all_groups for i, row in enumerate(g.bins.rows())]

    def coverage_rows(self) -> list[dict]:
        return [{"group": g.name, "nominal": c.nominal, "n": c.n, "inside": c.inside, "coverage": _scalar(c.rate),
                 "coverage_ci": [_scalar(c.ci_low), _scalar(c.ci_high)], "p": _scalar(c.p),
                 "mean_width": _scalar(c.mean_width)} for g in self.all_groups for c in g.coverage]


# ------------------------------------------------------------------------------------------------ the analysis

def regression_calibration(y, y_hat, codes, names, weight=None, params: RegressionParams = RegressionParams(),
                           attribute: str = "", quantiles=None,
                           quantile_levels: Sequence[float] = ()) -> RegressionCalibration:
    """Calibration in the mean of predictions ``y_hat`` of ``y`` for each group (``codes`` index ``names``).

    ``weight``: rows per entry. ``quantiles`` (K × Q) with ``quantile_levels`` (Q levels in (0, 1)): quantile
    predictions; each pair of levels τ and 1 − τ makes a central interval of nominal coverage 1 − 2τ."""
    y = finite_values(y, "target")
    size = y.size
    y_hat = finite_values(y_hat, "prediction", size)
    w = entry_weights(weight, size)
    codes, names = group_codes(codes, names, size, w)
    used = w > 0
    if np.unique(y_hat[used]).size < 2:
        raise DataError("The predictions take a single value, so E[y | prediction] cannot be compared with them.")
    bands = central_bands(quantiles, quantile_levels, size)
    edges = bin_edges(y_hat[used], w[used], params.n_bins, params.strategy)
    notes = [bins_note(params.strategy, edges, params.level)]

    def analyse_rows(name: str, mask: np.ndarray) -> RegressionGroup:
        yy, xx, ww = y[mask], y_hat[mask], w[mask]
        n = int(ww.sum())
        return RegressionGroup(name, n, _mean(yy, ww), _mean(xx, ww), mean_table(yy, xx, ww, edges, params.level),
                               mincer_zarnowitz(yy, xx, ww, params),
                               tuple(coverage(yy, lo[mask], hi[mask], ww, nominal, levels, params.level)
                                     for nominal, levels, lo, hi in bands))

    overall, groups = per_group(analyse_rows, codes, names, w)
    tested = [g for g in groups if g.mz.ok and g.n >= params.min_rows]
    adjusted = benjamini_hochberg([g.mz.joint.p for g in tested]) if tested else []
    p_bh = {g.name: float(p) for g, p in zip(tested, adjusted)}
    groups = [_with_bh(g, p_bh.get(g.name, np.nan)) for g in groups]
    skipped = [f"{g.name} ({g.mz.status or f'fewer than {params.min_rows} rows'})" for g in groups
               if g.name not in p_bh]
    if skipped:
        notes.append(f"Not tested: {'; '.join(skipped)}.")
    tested_names = tuple(g.name for g in tested)
    same_line = same_slope = None
    if len(tested) >= 2:
        mask = used & np.isin(codes, [names.index(n) for n in tested_names])
        same_line, same_slope = group_f_tests(y[mask], y_hat[mask], codes[mask], w[mask])
    else:
        notes.append("The groups cannot be compared: fewer than two groups can be tested.")
    differs = tuple((nominal, equal_coverage_p([g.coverage[i] for g in groups]))
                    for i, (nominal, *_) in enumerate(bands))
    return RegressionCalibration(attribute, params, overall, tuple(groups), same_line, same_slope, tested_names,
                                 differs, tuple(notes))


def analyse_regression(pred, attribute: str | None = None, params: RegressionParams = RegressionParams(),
                       quantiles=None, quantile_levels: Sequence[float] = ()) -> RegressionCalibration:
    """``regression_calibration`` of ``Predictions`` with a numeric target (``pred.y`` the target, ``pred.score``
    ŷ)."""
    spec = spec_of(pred)
    if not spec.numeric_target:
        raise DataError(f"Calibration in the mean needs a numeric target; these predictions are {spec.title}.")
    view = pred.groups(attribute)
    return regression_calibration(pred.y, pred.score, view.codes, view.names, pred.weight, params, view.attribute,
                                  quantiles, quantile_levels)


# ------------------------------------------------------------------------------------------------ Mincer–Zarnowitz

def mincer_zarnowitz(y: np.ndarray, y_hat: np.ndarray, w: np.ndarray, params: RegressionParams) -> MincerZarnowitz:
    """OLS of y on (1, ŷ) with frequency weights; t tests of a = 0 and b = 1 and their joint Wald F test."""
    n = float(w.sum())
    if n < max(params.min_rows, 3):
        return MincerZarnowitz(None, None, None, np.nan, f"not enough rows (n = {int(n):,})")
    if np.unique(y_hat[w > 0]).size < 2:
        return MincerZarnowitz(None, None, None, np.nan, "a single prediction value: no slope can be fitted")
    root = np.sqrt(w)
    design = np.column_stack([root, root * y_hat])
    q, r = np.linalg.qr(design)
    beta = np.linalg.solve(r, q.T @ (root * y))
    error = y - beta[0] - beta[1] * y_hat
    rss = float(w @ error ** 2)
    if rss <= 1e-24 * max(float(w @ y ** 2), 1.0):
        return MincerZarnowitz(None, None, None, rss, "the target is an exact straight line of the prediction: no "
                                                      "residual variance to test against")
    df = n - 2
    r_inv = np.linalg.inv(r)
    bread = r_inv @ r_inv.T                                  # (X'WX)⁻¹
    if params.covariance == "classical":
        cov = bread * rss / df
    else:                                                    # White's HC1: n/(n − k) · bread · Σ w e² x x' · bread
        scores = design * error[:, None]                     # √w·x·e: Σ scores scoresᵀ = Σ w e² x xᵀ
        cov = bread @ (scores.T @ scores) @ bread * n / df
    se = np.sqrt(np.diag(cov))
    t_crit = sps.t.ppf(0.5 + params.level / 2, df)
    estimates = [Estimate(float(b), float(s), null, float((b - null) / s), float(2 * sps.t.sf(abs((b - null) / s), df)),
                          float(b - t_crit * s), float(b + t_crit * s)) for b, s, null in zip(beta, se, (0.0, 1.0))]
    gap = beta - np.array([0.0, 1.0])
    f = float(gap @ np.linalg.solve(cov, gap) / 2)
    return MincerZarnowitz(estimates[0], estimates[1], FTest(f, 2, df, float(sps.f.sf(f, 2, df))), rss)


def group_f_tests(y: np.ndarray, y_hat: np.ndarray, codes: np.ndarray, w: np.ndarray) -> tuple[FTest, FTest]:
    """Nested OLS F tests against y ~ group·ŷ (an intercept and a slope per group): one shared line (y ~ ŷ), and
    one shared slope with group intercepts (y ~ group + ŷ). Frequency weights, classical variance."""
    present = np.unique(codes)
    k = present.size
    n = float(w.sum())
    full_rss = within_rss = 0.0
    within_sxy = within_sxx = 0.0
    centred = {}
    for code in present:
        m = codes == code
        ww, xx, yy = w[m], y_hat[m], y[m]
        xc, yc = xx - _mean(xx, ww), yy - _mean(yy, ww)
        sxx, sxy = float(ww @ (xc * xc)), float(ww @ (xc * yc))
        slope = sxy / sxx
        full_rss += float(ww @ (yc - slope * xc) ** 2)
        within_sxx, within_sxy = within_sxx + sxx, within_sxy + sxy
        centred[code] = (ww, xc, yc)
    common = within_sxy / within_sxx
    within_rss = sum(float(ww @ (yc - common * xc) ** 2) for ww, xc, yc in centred.values())
    xc, yc = y_hat - _mean(y_hat, w), y - _mean(y, w)
    pooled = float(w @ (xc * yc)) / float(w @ (xc * xc))
    shared_rss = float(w @ (yc - pooled * xc) ** 2)
    df_full = n - 2 * k
    return (_nested(shared_rss, n - 2, full_rss, df_full), _nested(within_rss, n - k - 1, full_rss, df_full))


def _nested(rss_small: float, df_small: float, rss_full: float, df_full: float) -> FTest:
    df_num = int(round(df_small - df_full))
    f = ((rss_small - rss_full) / df_num) / (rss_full / df_full)
    return FTest(float(f), df_num, float(df_full), float(sps.f.sf(f, df_num, df_full)))


# ------------------------------------------------------------------------------------------------ small helpers

def _with_bh(g: RegressionGroup, p: float) -> RegressionGroup:
    return RegressionGroup(g.name, g.n, g.mean_y, g.mean_pred, g.bins, g.mz, g.coverage, float(p))

