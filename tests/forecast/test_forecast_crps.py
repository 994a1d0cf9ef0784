"""CRPS (Eq. 5.5–5.7) in its three forms, the ordering penalty (Eq. 5.8), pinball loss, coverage, PIT, skill."""
import numpy as np
import pytest
from scipy import integrate
from sklearn.metrics import mean_pinball_loss

from fairviz.forecast import crps as C


def test_spec_example_and_levels():
    assert C.crps_ensemble(np.array([0.0, 1.0, 2.0]), np.array(1.0)) == pytest.approx(2 / 9, abs=1e-15)
    tau = C.levels()
    assert tau.size == 111 and tau[0] == pytest.approx(0.5 / 111) and tau[55] == pytest.approx(0.5)


def test_sorted_sum_equals_pairwise_and_quantile_form():
    rng = np.random.default_rng(0)
    q = rng.standard_t(3, size=(40, 16, 111))
    y = rng.normal(size=(40, 16))
    energy = C.crps_ensemble(q, y)
    assert np.abs(energy - C.crps_pairwise(q, y)).max() < 1e-9
    assert np.abs(energy - C.crps_quantiles(np.sort(q, -1), y, C.levels())).max() < 1e-9
    assert np.allclose(C.crps_forecast(q, y), energy.mean(-1))


def test_crps_equals_the_integral_of_the_squared_cdf_gap():
    """CRPS(F, y) = ∫ (F(x) − 1{x ≥ y})² dx for the ensemble's step CDF."""
    rng = np.random.default_rng(1)
    q = np.sort(rng.normal(size=9))
    y = 0.3
    f = lambda x: (np.searchsorted(q, x, side="right") / q.size - (x >= y)) ** 2  # noqa: E731
    points = np.sort(np.concatenate([q, [y]]))
    value = sum(integrate.quad(f, a, b)[0] for a, b in zip(points[:-1], points[1:]))
    assert C.crps_ensemble(q, np.array(y)) == pytest.approx(value, abs=1e-10)


def test_crps_properties():
    rng = np.random.default_rng(2)
    q = rng.normal(size=111)
    y = np.array(0.4)
    assert C.crps_ensemble(q, y) == pytest.approx(C.crps_ensemble(rng.permutation(q), y), abs=1e-12)
    assert C.crps_ensemble(np.full(111, 2.5), np.array(2.5)) == 0
    assert C.crps_ensemble(q, y) >= 0


def test_gaussian_quantiles_approach_the_closed_form():
    rng = np.random.default_rng(3)
    y = rng.normal(size=5000)
    q = C.gaussian_quantiles(np.zeros(5000), np.ones(5000), C.levels())
    assert C.crps_quantiles(q, y, C.levels()).mean() == pytest.approx(C.crps_gaussian(0, 1, y).mean(), rel=2e-3)


def test_order_penalty():
    assert C.order_penalty(np.array([2.0, 1.0, 0.0])) == pytest.approx(1.0)          # τ_t = 1, c_t = 3
    rng = np.random.default_rng(4)
    assert C.order_penalty(np.sort(rng.normal(size=(5, 16, 111)), -1)) == 0.0
    assert C.order_penalty(rng.normal(size=(5, 16, 111))) > 0


def test_pinball_matches_scikit_learn():
    rng = np.random.default_rng(5)
    y = rng.normal(size=300)
    q = rng.normal(size=300)
    for tau in (0.05, 0.5, 0.9):
        ours = C.pinball(q[:, None], y, np.array([tau]))[:, 0].mean()
        assert ours == pytest.approx(mean_pinball_loss(y, q, alpha=tau), abs=1e-12)


def test_coverage_of_true_gaussian_quantiles():
    """Central 90% band from the true quantiles covers 0.90 ± 0.01 of Gaussian draws (and 50% → 0.50)."""
    rng = np.random.default_rng(6)
    n = 40_000
    mu, sd = rng.normal(size=n), rng.uniform(0.5, 2, n)
    y = rng.normal(mu, sd)
    tau = np.array([0.005, 0.05, 0.25, 0.5, 0.75, 0.95, 0.995])
    q = C.gaussian_quantiles(mu, sd, tau)
    assert np.nanmean(C.inside(q, y, tau, 0.9)) == pytest.approx(0.90, abs=0.01)
    assert np.nanmean(C.inside(q, y, tau, 0.5)) == pytest.approx(0.50, abs=0.01)
    assert np.nanmean(C.inside(q, y, tau, 0.99)) == pytest.approx(0.99, abs=0.003)
    fine = C.levels()                                          # PIT needs dense levels: with 7 it is piecewise linear
    hist = C.pit_histogram(C.pit(C.gaussian_quantiles(mu, sd, fine), y, fine), bins=10)
    assert np.abs(hist - 0.1).max() < 0.01


def test_bands_outside_the_levels_are_undefined():
    tau = np.array([0.1, 0.5, 0.9])
    q = np.array([[0.0, 1.0, 2.0]])
    assert C.band_supported(tau, 0.8) and not C.band_supported(tau, 0.9)
    assert np.isnan(C.inside(q, np.array([1.0]), tau, 0.9)).all()
    lo, hi = C.central_band(q, tau, 0.4)                      # levels 0.3 and 0.7 by interpolation
    assert lo[0] == pytest.approx(0.5) and hi[0] == pytest.approx(1.5)


def test_pit_interpolates_and_handles_tails():
    tau = np.array([0.25, 0.5, 0.75])
    q = np.array([[0.0, 1.0, 2.0]] * 3)
    p = C.pit(q, np.array([0.5, -3.0, 9.0]), tau)
    assert p[0] == pytest.approx(0.375) and p[1] == pytest.approx(0.125) and p[2] == pytest.approx(0.875)


def test_skill_scores():
    rng = np.random.default_rng(7)
    base = rng.gamma(2, 1, 1000)
    same = C.skill(base, base)
    assert same.quartiles == pytest.approx((0.0, 0.0, 0.0)) and same.outperformed == 1.0
    half = C.skill(base / 2, base)
    assert half.quartiles == pytest.approx((0.5, 0.5, 0.5)) and half.outperformed == 1.0
    worse = C.skill(base * 2, base)
    assert worse.quartiles == pytest.approx((-1, -1, -1)) and worse.outperformed == 0.0


def test_table_5_2_has_the_seed_values():
    t = C.TABLE_5_2
    values = [t["First quartile"], t["Second quartile"], t["Third quartile"], t["Percent of forecasts outperformed by PTN"]]
    assert sum(len(v) for v in values) == 16
    assert t["Second quartile"][0] == 0.57 and t["Percent of forecasts outperformed by PTN"] == [94.3, 99.8, 96.4, 77.5]


def test_mode_count_finds_routes_not_ripples():
    from scipy import optimize
    from scipy import stats as sps

    from fairviz.forecast.density import mode_count
    tau = C.levels()

    def mixture(means, weights, sd):
        cdf = lambda x, t: sum(w * sps.norm.cdf(x, m, sd) for w, m in zip(weights, means)) - t  # noqa: E731
        return np.array([optimize.brentq(cdf, -60, 60, args=(t,)) for t in tau])

    rows = np.stack([sps.norm.ppf(tau), mixture([-8, 0, 8], [1 / 3] * 3, 0.5), mixture([-3, 3], [0.5, 0.5], 1.0),
                     sps.gamma.ppf(tau, 2), mixture([-3, 3], [0.95, 0.05], 1.0), mixture([-4, 0, 4], [1 / 3] * 3, 0.7)])
    # normal, tri-modal (Fig 5.6), bimodal, skewed, a 5% bump (a tail, not a route), close tri-modal
    assert mode_count(rows).tolist() == [1, 3, 2, 1, 1, 3]
    jitter = np.sort(sps.norm.ppf(tau) + np.random.default_rng(0).normal(0, 0.02, tau.size))
    assert mode_count(jitter[None])[0] == 1                   # learned quantiles are never exactly smooth
