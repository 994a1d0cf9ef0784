"""Calibration in the mean of regressions (issue 25): Mincer–Zarnowitz against statsmodels, the group comparison
against anova_lm and compare_f_test, binned means and coverage against direct computations, weights as repeated
rows, planted miscalibration found and calibrated data not, bad input refused in one sentence."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from scipy import stats as sps
from statsmodels.stats.anova import anova_lm

from fairviz.calibration.mincer_zarnowitz import RegressionParams, analyse_regression, regression_calibration
from fairviz.data import DataError

NAMES = ["a", "b", "c"]


def planted(seed: int = 0, n: int = 900, shift: float = 0.0, tilt: float = 0.0):
    """y = ŷ + noise, except group c where y = shift + (1 + tilt)·ŷ + noise."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, n)
    y_hat = rng.normal(10, 3, n)
    y = y_hat + rng.normal(0, 2, n) + np.where(codes == 2, shift + tilt * y_hat, 0.0)
    return y, y_hat, codes


def _ols(y, y_hat, covariance: str):
    """statsmodels' Mincer–Zarnowitz regression y ~ 1 + ŷ with the covariance fairviz is asked for."""
    return sm.OLS(y, sm.add_constant(y_hat)).fit(
        **({} if covariance == "classical" else {"cov_type": "HC1", "use_t": True}))


def test_mincer_zarnowitz_matches_statsmodels_ols_and_f_test():
    y, y_hat, codes = planted(1, shift=1.0, tilt=-0.1)
    for covariance in ("classical", "HC1"):
        result = regression_calibration(y, y_hat, codes, NAMES, params=RegressionParams(covariance=covariance))
        for k, name in enumerate(NAMES):
            m = codes == k
            fit = _ols(y[m], y_hat[m], covariance)
            mz = result.group(name).mz
            assert mz.intercept.estimate == pytest.approx(fit.params[0], abs=1e-10)
            assert mz.slope.estimate == pytest.approx(fit.params[1], abs=1e-10)
            assert mz.intercept.se == pytest.approx(fit.bse[0], abs=1e-10)
            assert mz.slope.se == pytest.approx(fit.bse[1], abs=1e-10)
            low, high = fit.conf_int()[1]
            assert (mz.slope.low, mz.slope.high) == pytest.approx((low, high), abs=1e-10)
            assert mz.intercept.p == pytest.approx(fit.pvalues[0], abs=1e-10)
            slope_test = fit.t_test((np.array([[0.0, 1.0]]), np.array([1.0])))      # slope against 1
            assert mz.slope.p == pytest.approx(float(slope_test.pvalue), abs=1e-10)
            joint = fit.f_test((np.eye(2), np.array([0.0, 1.0])))
            assert mz.joint.statistic == pytest.approx(float(joint.fvalue), abs=1e-10)
            assert mz.joint.p == pytest.approx(float(joint.pvalue), abs=1e-10)
            assert mz.joint.df_den == fit.df_resid


def test_group_comparison_matches_anova_lm_and_compare_f_test():
    y, y_hat, codes = planted(2, shift=0.8, tilt=0.05)
    result = regression_calibration(y, y_hat, codes, NAMES)
    frame = pd.DataFrame({"y": y, "x": y_hat, "g": np.array(NAMES)[codes]})
    full = smf.ols("y ~ C(g) * x", frame).fit()
    shared = smf.ols("y ~ x", frame).fit()
    slopes = smf.ols("y ~ C(g) + x", frame).fit()
    table = anova_lm(shared, full)
    assert result.same_line.statistic == pytest.approx(table["F"].iloc[1], abs=1e-10)
    assert result.same_line.p == pytest.approx(table["Pr(>F)"].iloc[1], abs=1e-10)
    assert result.same_line.df_num == 4 and result.same_line.df_den == full.df_resid
    f, p, df = full.compare_f_test(slopes)
    assert result.same_slope.statistic == pytest.approx(f, abs=1e-10)
    assert result.same_slope.p == pytest.approx(p, abs=1e-10)
    assert result.same_slope.df_num == df == 2


def test_mincer_zarnowitz_and_group_tests_hold_their_relative_precision_on_large_targets():
    """methods.md: statsmodels to a relative 1e-9 (issue 34: an absolute 1e-10 was stated and broken, 1.05e-10). A
    target near 1e6 (prices in hundredths × 1e4, 20,000 rows) moves the intercept by 1e-9 in absolute terms, which no
    absolute bound of 1e-10 holds; relative to each number every difference stays below 1e-10 (8e-11 at 200,000
    rows), ten times inside the stated 1e-9."""
    rng = np.random.default_rng(7)
    n = 20_000
    codes = rng.integers(0, 3, n)
    price = rng.uniform(100, 200, n).round(2)
    y, y_hat = price * 1e4, (price + rng.normal(0, 5, n) + (codes == 2) * 0.5) * 1e4
    for covariance in ("classical", "HC1"):
        result = regression_calibration(y, y_hat, codes, NAMES, params=RegressionParams(covariance=covariance))
        for k, name in enumerate(NAMES):
            m = codes == k
            fit = _ols(y[m], y_hat[m], covariance)
            mz = result.group(name).mz
            joint = fit.f_test((np.eye(2), np.array([0.0, 1.0])))
            slope_test = fit.t_test((np.array([[0.0, 1.0]]), np.array([1.0])))
            ours = [mz.intercept.estimate, mz.slope.estimate, mz.intercept.se, mz.slope.se, mz.slope.low,
                    mz.slope.high, mz.intercept.p, mz.slope.p, mz.joint.statistic, mz.joint.p]
            theirs = [*fit.params, *fit.bse, *fit.conf_int()[1], fit.pvalues[0], float(slope_test.pvalue),
                      float(joint.fvalue), float(joint.pvalue)]
            assert ours == pytest.approx(theirs, rel=1e-9)
    frame = pd.DataFrame({"y": y, "x": y_hat, "g": np.array(NAMES)[codes]})
    full = smf.ols("y ~ C(g) * x", frame).fit()
    line = anova_lm(smf.ols("y ~ x", frame).fit(), full)
    f, p, _ = full.compare_f_test(smf.ols("y ~ C(g) + x", frame).fit())
    result = regression_calibration(y, y_hat, codes, NAMES)
    assert [result.same_line.statistic, result.same_line.p, result.same_slope.statistic, result.same_slope.p] == \
        pytest.approx([line["F"].iloc[1], line["Pr(>F)"].iloc[1], f, p], rel=1e-9)


def test_binned_means_are_the_bins_mean_and_t_interval():
    y, y_hat, codes = planted(3)
    result = regression_calibration(y, y_hat, codes, NAMES, params=RegressionParams(n_bins=5))
    edges = np.quantile(y_hat, np.linspace(0, 1, 6))             # equal-count bins on all rows' ŷ
    table = result.group("b").bins
    assert table.lower == pytest.approx(edges[:-1], abs=1e-12)
    m = codes == 1
    idx = np.clip(np.searchsorted(edges, y_hat[m], side="right") - 1, 0, 4)
    for b in range(5):
        rows = y[m][idx == b]
        assert table.n[b] == rows.size
        assert table.mean_y[b] == pytest.approx(rows.mean(), abs=1e-12)
        assert table.mean_pred[b] == pytest.approx(y_hat[m][idx == b].mean(), abs=1e-12)
        low, high = sps.t.interval(0.95, rows.size - 1, rows.mean(), sps.sem(rows))
        assert (table.ci_low[b], table.ci_high[b]) == pytest.approx((low, high), abs=1e-10)
    uniform = regression_calibration(y, y_hat, codes, NAMES, params=RegressionParams(n_bins=4, strategy="uniform"))
    assert uniform.overall.bins.lower == pytest.approx(np.linspace(y_hat.min(), y_hat.max(), 5)[:-1], abs=1e-12)
    assert "equal-count" in result.notes[0] and "equal-width" in uniform.notes[0]


def test_coverage_of_quantile_intervals_per_group():
    y, y_hat, codes = planted(4)
    z = sps.norm.ppf([0.05, 0.25, 0.75, 0.95])
    width = np.where(codes == 2, 1.0, 2.0)                   # group c's intervals are half as wide as they should be
    quantiles = y_hat[:, None] + width[:, None] * z[None, :]
    result = regression_calibration(y, y_hat, codes, NAMES, quantiles=quantiles,
                                    quantile_levels=[0.05, 0.25, 0.75, 0.95])
    cover = {c.nominal: c for c in result.group("c").coverage}
    assert set(cover) == {0.9, 0.5}
    m = codes == 2
    inside = (y[m] >= quantiles[m, 0]) & (y[m] <= quantiles[m, 3])
    assert cover[0.9].inside == inside.sum() and cover[0.9].rate == pytest.approx(inside.mean(), abs=1e-12)
    assert cover[0.9].p == pytest.approx(sps.binomtest(int(inside.sum()), int(m.sum()), 0.9).pvalue, abs=1e-12)
    low, high = sps.binomtest(int(inside.sum()), int(m.sum())).proportion_ci(0.95, "exact")
    assert (cover[0.9].ci_low, cover[0.9].ci_high) == pytest.approx((low, high), abs=1e-10)
    assert cover[0.9].p < 0.01                                 # the narrow intervals are found
    assert all(c.p > 0.01 for c in result.group("a").coverage)
    assert dict(result.coverage_differs)[0.9] < 0.01


def test_weights_count_as_repeated_rows():
    y, y_hat, codes = planted(5, n=300, shift=0.5)
    rng = np.random.default_rng(0)
    weight = rng.integers(1, 5, y.size)
    weight[:10] = 0                                           # an entry standing for no row is no row
    z = np.array([-1.0, 1.0])
    quantiles = y_hat[:, None] + 2 * z[None, :]
    weighted = regression_calibration(y, y_hat, codes, NAMES, weight, quantiles=quantiles, quantile_levels=[0.2, 0.8])
    rows = np.repeat(np.arange(y.size), weight)
    repeated = regression_calibration(y[rows], y_hat[rows], codes[rows], NAMES, quantiles=quantiles[rows],
                                      quantile_levels=[0.2, 0.8])
    for a, b in zip(weighted.group_rows() + weighted.bin_rows() + weighted.coverage_rows(),
                    repeated.group_rows() + repeated.bin_rows() + repeated.coverage_rows()):
        assert a.keys() == b.keys()
        for key in a:
            _close(a[key], b[key], 1e-12)
    for test in ("same_line", "same_slope"):
        assert getattr(weighted, test).statistic == pytest.approx(getattr(repeated, test).statistic, rel=1e-12)
        assert getattr(weighted, test).p == pytest.approx(getattr(repeated, test).p, rel=1e-10, abs=1e-15)
    hc_w = regression_calibration(y, y_hat, codes, NAMES, weight, RegressionParams(covariance="HC1"))
    hc_r = regression_calibration(y[rows], y_hat[rows], codes[rows], NAMES, params=RegressionParams(covariance="HC1"))
    assert hc_w.group("c").mz.slope.se == pytest.approx(hc_r.group("c").mz.slope.se, rel=1e-12)


def _close(a, b, tol):
    if isinstance(a, list):
        for x, y in zip(a, b):
            _close(x, y, tol)
    elif isinstance(a, float) and b is not None:
        assert a == pytest.approx(b, rel=tol, abs=tol * 1e-3), (a, b)
    else:
        assert a == b


def test_planted_miscalibration_of_one_group_is_found():
    y, y_hat, codes = planted(6, shift=3.5, tilt=-0.25)        # under-predicts by 1 at the mean, slope 0.75
    result = regression_calibration(y, y_hat, codes, NAMES)
    assert result.group("c").mz.joint.p < 0.01 and result.group("c").joint_p_bh < 0.01
    assert result.group("a").mz.joint.p > 0.01 and result.group("b").mz.joint.p > 0.01
    assert result.same_line.p < 0.01 and result.same_slope.p < 0.01


@pytest.mark.parametrize("seed", range(10))
def test_calibrated_null_is_not_flagged(seed):
    y, y_hat, codes = planted(100 + seed)
    result = regression_calibration(y, y_hat, codes, NAMES)
    assert min(g.joint_p_bh for g in result.groups) > 0.01
    assert result.same_line.p > 0.01 and result.same_slope.p > 0.01


def test_a_group_too_small_or_flat_is_not_tested_and_said():
    y, y_hat, codes = planted(7)
    codes = codes.copy()
    codes[:5] = 3                                             # five rows: untested
    result = regression_calibration(y, y_hat, codes, NAMES + ["tiny"])
    assert result.group("tiny").mz.status.startswith("not enough rows")
    assert result.tested == tuple(NAMES)
    assert any("tiny" in note for note in result.notes)


def test_an_exact_line_or_a_constant_target_in_a_group_is_said_not_crashed():
    y, y_hat, codes = planted(10)
    y = np.where(codes == 1, 7.0, y)                          # group b: a constant target
    y = np.where(codes == 2, 2.0 + 0.5 * y_hat, y)            # group c: an exact line
    result = regression_calibration(y, y_hat, codes, NAMES)
    assert result.group("a").mz.ok
    assert "exact straight line" in result.group("b").mz.status          # a constant is a line of slope 0
    assert "exact straight line" in result.group("c").mz.status
    assert result.tested == ("a",) and result.same_line is None
    assert any("cannot be compared" in note for note in result.notes)


@pytest.mark.parametrize("change, message", [
    (lambda y, x, c, names: (y, x, np.zeros_like(c), names), "at least two groups"),
    (lambda y, x, c, names: (y, np.full_like(x, 3.0), c, names), "single value"),
    (lambda y, x, c, names: (np.where(np.arange(y.size) == 3, np.nan, y), x, c, names), "target has 1 missing"),
    (lambda y, x, c, names: (y, np.where(np.arange(y.size) == 3, np.inf, x), c, names), "prediction has 1 missing"),
    (lambda y, x, c, names: (y.astype(str).astype(object) + "kg", x, c, names), "not numbers"),
])
def test_bad_input_is_one_plain_sentence(change, message):
    y, y_hat, codes = planted(8, n=200)
    with pytest.raises(DataError) as error:
        regression_calibration(*change(y, y_hat, codes, NAMES))
    assert len(error.value.problems) == 1 and message in error.value.problems[0]


def test_bad_quantiles_and_weights_are_refused():
    y, y_hat, codes = planted(9, n=200)
    crossed = np.column_stack([y_hat + 1, y_hat - 1])
    with pytest.raises(DataError, match="lies above"):
        regression_calibration(y, y_hat, codes, NAMES, quantiles=crossed, quantile_levels=[0.1, 0.9])
    with pytest.raises(DataError, match="no pair"):
        regression_calibration(y, y_hat, codes, NAMES, quantiles=crossed, quantile_levels=[0.1, 0.7])
    with pytest.raises(DataError, match="whole numbers"):
        regression_calibration(y, y_hat, codes, NAMES, weight=np.full(y.size, 1.5))


def test_analyse_regression_refuses_a_binary_task():
    class Binary:
        task = "binary"
    with pytest.raises(DataError, match="needs a numeric target; these predictions are binary classification"):
        analyse_regression(Binary(), "g")
