"""Knees as [1] §7.1 finds them: Q(p) = d₍⌈np⌉₎ over all n points, LOWESS (span 0.1,
it = 3), Kneedle (S = 1). The references are statsmodels' ``lowess`` and kneed's ``KneeLocator`` themselves."""
from __future__ import annotations

import numpy as np
import pytest
from kneed import KneeLocator
from statsmodels.nonparametric.smoothers_lowess import lowess

from fairviz.data.samples import load_sample
from fairviz.residuals import knees as K


def _reference(sorted_d: np.ndarray, frac: float = 0.1, it: int = 3):
    """The paper's procedure with the libraries, on all n points p_j = j/n."""
    n = sorted_d.size
    p = np.arange(1, n + 1) / n
    smooth = lowess(sorted_d, p, frac=frac, it=it, return_sorted=False)
    kw = dict(S=1.0, direction="increasing", interp_method="interp1d", online=False)
    left = KneeLocator(p, smooth, curve="concave", **kw).knee
    right = KneeLocator(p, smooth, curve="convex", **kw).knee
    return smooth, left, right


@pytest.fixture(scope="module")
def compas_race():
    pred = load_sample("compas")
    view = pred.groups("race")
    d = pred.score - pred.y
    return {name: np.sort(d[view.codes == g]) for g, name in enumerate(view.names)}


def test_compas_race_knees_match_lowess_and_kneedle_on_all_points(compas_race):
    checked = 0
    for name, d in compas_race.items():
        if d.size < K.MIN_N:
            assert K.detect_knees(d, sorted_input=True) == (None, None)
            continue
        _, left, right = _reference(d)
        ours = K.detect_knees(d, sorted_input=True)
        assert ours[0].percentile == pytest.approx(left, abs=0.01), name
        assert ours[1].percentile == pytest.approx(right, abs=0.01), name
        # the knee's residual is the raw quantile there (not the smoothed one)
        assert ours[0].residual == d[int(round(ours[0].percentile * d.size)) - 1]
        checked += 1
    assert checked == 4
    black = K.detect_knees(compas_race["African-American"], sorted_input=True)
    assert (round(black[0].percentile, 3), round(black[1].percentile, 3)) == (0.136, 0.883)


@pytest.mark.parametrize("n, frac, it", [(50, 0.1, 3), (377, 0.1, 3), (1001, 0.1, 3), (2454, 0.1, 0), (999, 0.25, 2)])
def test_lowess_uniform_is_statsmodels_lowess(n, frac, it):
    rng = np.random.default_rng(n)
    p = rng.uniform(size=(3, n))
    curves = np.sort(p - rng.binomial(1, p), axis=1)
    curves[2] = np.sort(np.round(curves[2], 1))                  # tied, step-shaped
    x = np.arange(1, n + 1) / n
    ours = K.lowess_uniform(curves, frac, it)
    for row, y in zip(ours, curves):
        np.testing.assert_allclose(row, lowess(y, x, frac=frac, it=it, return_sorted=False), atol=1e-6)
    np.testing.assert_allclose(ours[:2], [lowess(y, x, frac=frac, it=it, return_sorted=False) for y in curves[:2]],
                               atol=1e-10)


def test_kneedle_is_kneed_index_for_index():
    rng = np.random.default_rng(4)
    n = 800
    x = np.arange(1, n + 1) / n
    curves = []
    for _ in range(12):
        p = rng.beta(rng.uniform(0.3, 3), rng.uniform(0.3, 3), n)
        curves.append(lowess(np.sort(p - rng.binomial(1, p)), x, frac=0.1, return_sorted=False))
    curves.append(np.linspace(0, 1, n))                           # a line: kneed finds nothing
    left, right = K.kneedle(x, np.array(curves))
    kw = dict(S=1.0, direction="increasing", interp_method="interp1d", online=False)
    for c, li, ri in zip(curves, left, right):
        expected_left = KneeLocator(x, c, curve="concave", **kw).knee
        expected_right = KneeLocator(x, c, curve="convex", **kw).knee
        assert (None if li < 0 else x[li]) == expected_left
        assert (None if ri < 0 else x[ri]) == expected_right


def test_above_the_cutoff_the_curve_is_q_on_an_even_percentile_grid():
    rng = np.random.default_rng(5)
    d = np.sort(rng.normal(0, 0.3, 5000))
    settings = K.KneeParams(max_points=1000)
    grid = K.quantile_curve(d, 1000)
    assert np.array_equal(grid, d[np.ceil(5000 * np.arange(1, 1001) / 1000).astype(int) - 1])
    _, left, right = _reference(grid)                             # the libraries on the 1,000-point curve
    ours = K.detect_knees(d, settings, sorted_input=True)
    assert (ours[0].percentile, ours[1].percentile) == (left, right)
    assert np.array_equal(K.quantile_curve(d, 5000), d)           # at m = n the grid is every point


def test_bootstrap_curves_from_counts_equal_the_expanded_samples():
    rng = np.random.default_rng(6)
    support = np.array([-0.9, -0.4, 0.1, 0.3, 0.8])
    counts = rng.multinomial(337, [0.1, 0.2, 0.4, 0.2, 0.1], size=4)
    for m in (337, 100):
        curves = K.quantiles_from_counts(support, counts, m)
        for row, c in zip(curves, counts):
            assert np.array_equal(row, K.quantile_curve(np.repeat(support, c), m))


@pytest.mark.parametrize("seed", [0, 1])
def test_lowess_uniform_is_statsmodels_lowess_on_heavy_tailed_curves(seed):
    """Sorted t₁ residuals: robustness iterations zero the tails' weights, leaving windows whose few weighted points
    sit far from the point fitted (an extrapolation). Counting a window's points on tricube × robustness weight
    (statsmodels' test) and fitting such windows in two passes keeps statsmodels' lowess: to 1e-10 of the MAD at
    it = 0, and after robustness iterations to 1e-7 of it, or to twice what statsmodels itself moves when y moves by
    1e-15 relative (1.2e-3 off at it = 1 before, 1.13 on 20,000 points)."""
    n = 5000
    rng = np.random.default_rng(seed)
    y = np.sort(rng.standard_t(1, n))
    x = np.arange(1, n + 1) / n
    mad = np.median(np.abs(y - np.median(y)))
    nudged = y * (1 + 1e-15 * rng.standard_normal(n))
    for it in (0, 1, 3):
        reference = lowess(y, x, frac=0.1, it=it, return_sorted=False)
        own_rounding = np.abs(lowess(nudged, x, frac=0.1, it=it, return_sorted=False) - reference).max()
        error = np.abs(K.lowess_uniform(y[None, :], 0.1, it)[0] - reference).max()
        assert error <= (1e-10 * mad if it == 0 else max(1e-7 * mad, 2 * own_rounding)), (it, error, own_rounding)
