"""Residual Distribution Fairness: the acceptance tests of spec 000 §6, on the formulas and on ``analyse``."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from sklearn.metrics import confusion_matrix

from fairviz.core.ece import ece, ece_bin_index, ece_regime
from fairviz.data import ColumnMapping, build_predictions
from fairviz.residuals import (Knee, RDFParams, analyse, concentration_verdict, detect_knees, f_dist, f_h, f_pattern, f_v,
                               knee_region, mean_decomposition, percentile_ranks, rates_from_residuals, residuals,
                               threshold_check)


def _pred(score, y, group) -> object:
    frame = pd.DataFrame({"y": y, "score": score, "group": group})
    return build_predictions(frame, ColumnMapping("y", "score", ("group",)))


def _shift_data(shift=0.1):
    """Spec test 1: group 0 p_i = (i+0.5)/1000, y_i = [i mod 7 < 2]; group 1 = same labels, p + shift."""
    i = np.arange(1000)
    p0 = (i + 0.5) / 1000
    y = (i % 7 < 2).astype(int)
    p1 = np.minimum(p0 + shift, 1.0)
    return p0, p1, y


# ------------------------------------------------------------------ 1. DP via residuals
def test_dp_from_residuals_equals_direct_count_with_shift():
    p0, p1, y = _shift_data()
    direct = abs(np.mean(p0 >= 0.5) - np.mean(p1 >= 0.5))
    assert direct == pytest.approx(0.1, abs=1e-12)
    r0 = rates_from_residuals(residuals(p0, y), y, 0.5)
    r1 = rates_from_residuals(residuals(p1, y), y, 0.5)
    assert abs(r0["ppr"] - r1["ppr"]) == pytest.approx(0.1, abs=1e-12)


@pytest.mark.parametrize("tau", [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
def test_ppr_equals_both_residual_formulas(tau):
    p0, p1, y = _shift_data()
    for p in (p0, p1):
        d = residuals(p, y)
        direct = np.mean(p >= tau)
        mixture = rates_from_residuals(d, y, tau)["ppr"]
        pieces = np.mean(d >= tau) + np.mean((d >= tau - 1) & (d < 0)) + np.mean((d == 0) & (y == 1))
        assert mixture == pytest.approx(direct, abs=1e-12)
        assert pieces == pytest.approx(direct, abs=1e-12)


# ------------------------------------------------------------------ 2. EO via outcome-conditional CDFs
def test_tpr_fpr_from_residuals_match_sklearn_counts():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=200_000)
    y = rng.binomial(1, p)
    d = residuals(p, y)
    for tau in np.linspace(0.05, 0.95, 19):
        tn, fp, fn, tp = confusion_matrix(y, (p >= tau).astype(int)).ravel()
        rates = rates_from_residuals(d, y, tau)
        assert rates["tpr"] == tp / (tp + fn)
        assert rates["fpr"] == fp / (fp + tn)


def test_exact_copy_group_has_no_gaps():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=3000)
    y = rng.binomial(1, p)
    pred = _pred(np.concatenate([p, p]), np.concatenate([y, y]), np.repeat(["a", "b"], 3000))
    for tau in (0.2, 0.5, 0.8):
        gaps = threshold_check(pred, None, tau).gaps[0]
        assert gaps["dp_diff_direct"] == 0 and gaps["eo_tpr_diff_direct"] == 0 and gaps["eo_fpr_diff_direct"] == 0
    audit = analyse(pred, params=RDFParams(resamples=50, knee_resamples=0))
    pair = audit.pairs[0]
    assert pair.f_dist == pair.f_dist_y0 == pair.f_dist_y1 == 0.0
    assert pair.f_h == 0.0 and pair.f_v == 0.0                       # spec test 7: same knees
    assert audit.groups[0].left_knee == audit.groups[1].left_knee


# ------------------------------------------------------------------ 3. F_dist = W1, F_pattern on a shift
def test_f_dist_is_wasserstein_and_f_pattern_on_pure_shift():
    i = np.arange(1000)
    p0 = 0.05 + 0.8 * (i + 0.5) / 1000
    y = (i % 5 < 2).astype(int)
    p1 = p0 + 0.1
    d0, d1 = residuals(p0, y), residuals(p1, y)
    assert f_dist(d0, d1) == pytest.approx(0.1, abs=1e-9)
    assert f_dist(d0, d1) == pytest.approx(sps.wasserstein_distance(d0, d1), abs=1e-12)
    assert f_dist(d0[y == 0], d1[y == 0]) == pytest.approx(0.1, abs=1e-9)
    assert f_dist(d0[y == 1], d1[y == 1]) == pytest.approx(0.1, abs=1e-9)
    assert f_pattern(d0, d1) == pytest.approx(0.95, abs=1e-12)


def test_metric_ranges_on_random_inputs():
    rng = np.random.default_rng(2)
    for _ in range(20):
        a, b = rng.uniform(-1, 1, 300), rng.uniform(-1, 1, 200)
        assert 0 <= f_pattern(a, b) <= 1
        assert 0 <= f_dist(a, b) <= 2


# ------------------------------------------------------------------ 4. Theorem A.1
def test_mean_decomposition_identity_with_float32_inputs():
    rng = np.random.default_rng(3)
    s0, s1 = rng.uniform(size=999).astype(np.float32), rng.uniform(size=1501).astype(np.float32)
    y0, y1 = rng.binomial(1, 0.3, 999), rng.binomial(1, 0.6, 1501)
    dec = mean_decomposition(s0.astype(float), y0, s1.astype(float), y1)
    assert dec["mean_residual_gap"] == pytest.approx(dec["mean_score_gap"] - dec["base_rate_gap"], abs=1e-12)
    mu_gap = np.mean(s0.astype(float) - y0) - np.mean(s1.astype(float) - y1)
    assert dec["f_pattern_mean"] == pytest.approx(1 - abs(mu_gap) / 2, abs=1e-12)


# ------------------------------------------------------------------ 5. ECE
def test_ece_worked_values_and_bins():
    assert ece(np.full(1000, 0.9), np.r_[np.ones(500), np.zeros(500)]) == pytest.approx(0.4)
    assert ece(np.full(1000, 0.3), np.r_[np.ones(300), np.zeros(700)]) == pytest.approx(0.0, abs=1e-12)
    assert ece_bin_index(np.array([1.0]))[0] == 14 and ece_bin_index(np.array([0.0]))[0] == 0
    for k in range(15):
        assert ece_bin_index(np.array([k / 15]))[0] == min(k, 14)
    assert [ece_regime(v) for v in (0.0499, 0.05, 0.1499, 0.15)] == ["good", "moderate", "moderate", "poor"]


def test_ece_of_calibrated_data_is_small():
    rng = np.random.default_rng(4)
    p = rng.uniform(size=100_000)
    assert ece(p, rng.binomial(1, p)) < 0.01


# ------------------------------------------------------------------ 6. knees
def _s_curve(n=20_000, seed=5):
    u = np.random.default_rng(seed).uniform(size=n)
    return np.interp(u, [0, 0.1, 0.9, 1], [-1, -0.1, 0.1, 1])


def test_knees_of_piecewise_linear_s_curve():
    left, right = detect_knees(_s_curve())
    assert 0.07 <= left.percentile <= 0.13
    assert 0.87 <= right.percentile <= 0.93
    # invariant to an increasing affine map (Kneedle normalises y)
    left2, right2 = detect_knees(3 * _s_curve() + 0.5)
    assert (left2.percentile, right2.percentile) == (left.percentile, right.percentile)


def test_percentile_region_holds_twenty_percent():
    d = _s_curve()
    knees = [k for k in detect_knees(d) if k]
    mask, _ = knee_region(d, knees, 0.05, "percentile")
    assert mask.mean() == pytest.approx(0.20, abs=0.01)


def test_constant_residuals_have_no_knees_and_nan_knee_metrics():
    assert detect_knees(np.full(500, 0.2)) == (None, None)
    k = Knee("left", 0.1, -0.2)
    assert np.isnan(f_h((k, None), (k, k), (k, k)))
    assert np.isnan(f_v((k, k), (None, k), (k, k)))


def test_region_membership_matches_brute_force():
    rng = np.random.default_rng(6)
    d = rng.normal(0, 0.3, 2000).clip(-1, 1)
    knees = [Knee("left", 0.12, -0.35), Knee("right", 0.9, 0.4)]
    mask, _ = knee_region(d, knees, 0.05, "residual")
    assert np.array_equal(mask, (np.abs(d + 0.35) < 0.05) | (np.abs(d - 0.4) < 0.05))
    u = percentile_ranks(d)
    mask, which = knee_region(d, knees, 0.05, "percentile")
    assert np.array_equal(mask, (np.abs(u - 0.12) <= 0.05) | (np.abs(u - 0.9) <= 0.05))
    assert set(which[mask]) == {0, 1} and (which[~mask] == -1).all()


# ------------------------------------------------------------------ 8. verdicts on the paper's Table 2
@pytest.mark.parametrize("ece_value, ratio, expected", [
    (0.026, 22.0, ("supported", False)), (0.017, 3.9, ("supported", False)), (0.093, 13.8, ("supported", False)),
    (0.056, 2.0, ("supported", False)), (0.533, 1.2, ("supported", True)), (0.293, 1.1, ("supported", False)),
    # SST-2 uncalibrated: the paper's ✓ holds only after rounding 0.676/0.561 = 1.205 to 1.2
    (0.577, 0.676 / 0.561, ("not supported", True)),
    (0.322, 1.1, ("supported", False)), (0.322, 0.4, ("not supported", False)),
    (0.073, 0.7, ("not supported", False)), (0.333, 1.9, ("not supported", False)),
    (0.187, 1.0, ("supported", False)),
])
def test_verdict_on_table_2_reads_the_unrounded_ratio(ece_value, ratio, expected):
    assert concentration_verdict(ece_value, ratio) == expected


@pytest.mark.parametrize("ece_value, ratio, expected", [
    (0.109, 1.505, ("supported", True)),        # exceeds 1.5, rounds to 1.5: the case
    (0.109, 1.5, ("not supported", True)),      # does not exceed 1.5
    (0.109, 1.46, ("not supported", True)),
    (0.109, 1.44, ("not supported", False)),
    (0.109, 1.56, ("supported", False)),
    (0.2, 0.79, ("not supported", True)),
    (0.2, 0.86, ("supported", False)),
])
def test_verdict_uses_the_unrounded_ratio_and_borderline_is_only_an_extra_word(ece_value, ratio, expected):
    assert concentration_verdict(ece_value, ratio) == expected


# ------------------------------------------------------------------ 9. permutation null and bootstrap
@pytest.mark.slow
def test_permutation_test_is_calibrated_under_random_groups_and_detects_a_shift():
    false_positive, missed = 0, 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        p = rng.uniform(size=2000)
        y = rng.binomial(1, p)
        a = rng.binomial(1, 0.5, 2000)
        params = RDFParams(resamples=200, knee_resamples=0, seed=seed)
        null = analyse(_pred(p, y, np.where(a, "x", "z")), params=params).pairs[0]
        false_positive += null.p_median < 0.05
        shifted = analyse(_pred(np.where(a, np.clip(p + 0.1, 0, 1), p), y, np.where(a, "x", "z")),
                          params=params).pairs[0]
        missed += shifted.p_dist >= 0.05
    assert false_positive / 40 <= 0.10
    assert missed == 0


def test_bootstrap_interval_contains_estimate_and_is_reproducible(two_group_frame):
    pred = build_predictions(two_group_frame, ColumnMapping("y", "score", ("group",)))
    params = RDFParams(resamples=300, knee_resamples=50, seed=11)
    first, second = analyse(pred, params=params), analyse(pred, params=params)
    pair = first.pairs[0]
    assert pair.ci["f_dist"].low <= pair.f_dist <= pair.ci["f_dist"].high
    assert pair.ci["f_pattern"].low <= pair.f_pattern <= pair.ci["f_pattern"].high
    assert pair.ci == second.pairs[0].ci and pair.p_dist == second.pairs[0].p_dist
    assert first.concentration.ratio_ci == second.concentration.ratio_ci
    # B was shifted by +0.1 on 2,000 rows: the distance is real, the permutation test says so
    assert pair.f_dist == pytest.approx(0.1, abs=0.03) and pair.p_dist < 0.01


# ------------------------------------------------------------------ 10. threshold invariance
def test_rdf_metrics_do_not_depend_on_the_threshold_but_dp_does():
    p0, p1, y = _shift_data()
    pred = _pred(np.r_[p0, p1], np.r_[y, y], np.repeat(["g0", "g1"], 1000))
    params = [RDFParams(resamples=20, knee_resamples=0, threshold=t) for t in np.arange(1, 10) / 10]
    metrics = [(a.pairs[0].f_pattern, a.pairs[0].f_dist, a.pairs[0].f_h, a.pairs[0].f_v)
               for a in (analyse(pred, params=p) for p in params[::4])]
    assert len(set(metrics)) == 1
    dp = [abs(threshold_check(pred, None, t).gaps[0]["dp_diff_direct"]) for t in np.arange(1, 10) / 10]
    assert np.std(dp) > 0


# ------------------------------------------------------------------ analysis end to end
def test_analysis_summary_on_known_groups(two_group_frame):
    pred = build_predictions(two_group_frame, ColumnMapping("y", "score", ("group",)))
    audit = analyse(pred, params=RDFParams(resamples=100, knee_resamples=0))
    a, b = audit.group("A"), audit.group("B")
    assert a.n == b.n == 2000
    frame = two_group_frame
    assert b.mean_score == pytest.approx(frame.score[frame.group == "B"].mean(), abs=1e-12)
    assert a.median_residual == pytest.approx(np.median(pred.score[:2000] - pred.y[:2000]), abs=1e-12)
    assert b.base_rate == pytest.approx(frame.y[frame.group == "B"].mean(), abs=1e-12)
    assert audit.in_knee_region.sum() == a.knee_rows + b.knee_rows
    for name in ("A", "B"):
        curve = audit.curves[name]["all"]
        assert curve.percentile.size == 2000 and np.all(np.diff(curve.residual) >= 0)


def test_curves_are_thinned_to_two_thousand_points():
    rng = np.random.default_rng(8)
    n = 50_000
    p = rng.uniform(size=n)
    pred = _pred(p, rng.binomial(1, p), rng.choice(["u", "v"], n))
    audit = analyse(pred, params=RDFParams(resamples=20, knee_resamples=0))
    for outcome in ("all", "y0", "y1"):
        curve = audit.curves["u"][outcome]
        assert curve.percentile.size <= 2000
        assert np.all(np.diff(curve.residual) >= 0)
    all_u = audit.curves["u"]["all"]
    d_u = (pred.score - pred.y)[pred.groups().codes == pred.groups().names.index("u")]
    assert all_u.residual[0] == d_u.min() and all_u.residual[-1] == d_u.max()


def test_linear_time_wasserstein_equals_scipy_with_ties_and_unequal_sizes():
    from fairviz.residuals import wasserstein_sorted
    rng = np.random.default_rng(9)
    for n_a, n_b in ((1, 1), (3, 7), (1000, 999), (5000, 123)):
        a = np.round(rng.normal(size=n_a), 1)          # rounding makes ties
        b = np.round(rng.normal(0.3, 2, size=n_b), 1)
        assert wasserstein_sorted(np.sort(a), np.sort(b)) == pytest.approx(sps.wasserstein_distance(a, b), abs=1e-12)


def test_sorted_residual_curves_are_svg_lines_of_at_most_2000_points():
    """Every drawn curve has ≤ 2,000 points whatever n is, and is drawn as one SVG path (no WebGL context, which
    takes seconds where the browser renders WebGL in software); longer lines would switch to WebGL."""
    from fairviz.residuals import figures as figs
    from fairviz.residuals import CURVE_POINTS
    rng = np.random.default_rng(5)
    n = 30_000
    p = rng.uniform(0, 1, n)
    frame = pd.DataFrame({"y": rng.binomial(1, p), "s": p, "g": rng.choice(["a", "b"], n)})
    pred = build_predictions(frame, ColumnMapping("y", "s", ("g",)), source="t.csv")
    audit = analyse(pred, "g", RDFParams(resamples=0, knee_resamples=0))
    for fig in (figs.sorted_residual_plot(audit), figs.outcome_panels(audit)):
        lines = [t for t in fig.data if t.mode == "lines"]
        assert lines and all(t.type == "scatter" and len(t.x) <= CURVE_POINTS for t in lines)
    assert figs._line_trace(figs.SVG_MAX_POINTS + 1) is figs.go.Scattergl
