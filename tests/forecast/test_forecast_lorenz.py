"""Lorenz-63 generator ([3] §5.3.2) and the NVAR forecaster, against scipy and reference values."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from fairviz.forecast import lorenz, nvar


def test_time_grid_and_shape():
    assert lorenz.TIME_GRID.size == 1000
    assert lorenz.TIME_GRID[0] == 0 and lorenz.TIME_GRID[-1] == 100
    assert np.isclose(lorenz.TIME_GRID[1], 100 / 999)
    data = lorenz.generate(2, 3, seed=1, time=lorenz.TIME_GRID[:50])
    assert data.states.shape == (6, 50, 3)
    assert np.array_equal(data.system, [0, 0, 0, 1, 1, 1])


def test_fixed_point_has_zero_derivative():
    c = np.array([np.sqrt(72), np.sqrt(72), 27.0])
    assert np.allclose(lorenz.derivative(c, 10, 28, 8 / 3), 0, atol=1e-12)


def test_spec_reference_states():
    states = lorenz.simulate(np.array([1.0, 1.0, 1.0]), time=lorenz.TIME_GRID[:21])
    assert np.allclose(states[10], [-9.36829, -8.33590, 29.36226], atol=1e-3)     # t = 1.001001
    assert np.allclose(states[20], [-8.20138, -9.59803, 24.64622], atol=1e-3)     # t = 2.002002


def _dop853(initial, params, t):
    sol = solve_ivp(lambda _, u: lorenz.derivative(u, *params), (0, t[-1]), initial, method="DOP853",
                    t_eval=t, rtol=1e-13, atol=1e-13)
    return sol.y.T


@pytest.mark.parametrize("initial,params", [((1.0, 1.0, 1.0), lorenz.CLASSIC), ((-7.0, 12.0, 30.0), (11.5, 28.05, 2.68))])
def test_rk4_agrees_with_dop853_to_1e6(initial, params):
    t = lorenz.TIME_GRID[:21]                                         # t ≤ 2
    ours = lorenz.simulate(np.array(initial), *params, time=t, substeps=100)
    assert np.abs(ours - _dop853(initial, params, t)).max() < 1e-6
    default = lorenz.simulate(np.array(initial), *params, time=lorenz.TIME_GRID[:51])   # t ≤ 5, h = Δt/10
    assert np.abs(default - _dop853(initial, params, lorenz.TIME_GRID[:51])).max() < 1e-3


def test_rk4_is_fourth_order():
    t = lorenz.TIME_GRID[:11]
    ref = _dop853((1.0, 1.0, 1.0), lorenz.CLASSIC, t)
    coarse = np.abs(lorenz.simulate(np.array([1.0, 1, 1]), time=t, substeps=20) - ref).max()
    fine = np.abs(lorenz.simulate(np.array([1.0, 1, 1]), time=t, substeps=40) - ref).max()
    assert 12 < coarse / fine < 20                                    # 2⁴ = 16


def test_vectorised_equals_one_at_a_time():
    rng = np.random.default_rng(0)
    initial = lorenz.sample_initial(3, rng)
    params = lorenz.sample_params(3, rng)
    t = lorenz.TIME_GRID[:30]
    batch = lorenz.simulate(initial, params[:, 0], params[:, 1], params[:, 2], time=t)
    for k in range(3):
        assert np.allclose(batch[k], lorenz.simulate(initial[k], *params[k], time=t), atol=1e-12)


def test_sampling_ranges():
    data = lorenz.generate(200, 2, seed=3, time=lorenz.TIME_GRID[:2])
    for col, (lo, hi) in enumerate(lorenz.PARAM_RANGES):
        assert data.params[:, col].min() >= lo and data.params[:, col].max() <= hi
    for col, (lo, hi) in enumerate(lorenz.INITIAL_RANGES):
        assert data.initial[:, col].min() >= lo and data.initial[:, col].max() <= hi
    assert data.params[:, 0].max() - data.params[:, 0].min() > 3.5          # the draws fill the range


def test_butterfly_effect():
    div = lorenz.butterfly()                                     # the thesis's (10, 10, 10) vs (10 + 1e-12, 10, 10)
    assert div.distance[0] == pytest.approx(1e-12, rel=1e-3)
    assert div.distance[:50].max() < 1e-6                        # together at first
    assert 20 < div.divergence_time < 45                         # ln(1e12)/0.9 ≈ 31
    assert div.distance[-200:].mean() > 5                        # unrelated at the end
    never = lorenz.butterfly(delta=1e-12, threshold=1.0, time=lorenz.TIME_GRID[:100])
    assert np.isnan(never.divergence_time)


def test_uneven_time_grid_is_refused():
    with pytest.raises(ValueError, match="evenly"):
        lorenz.simulate(np.ones(3), time=np.array([0.0, 0.1, 0.3]))


# ----------------------------------------------------------------------------------------------- NVAR

def test_nvar_feature_count():
    assert nvar.n_features(4) == 91                               # 1 + 12 + 78
    x = nvar.features(np.random.default_rng(0).random((5, 4, 3)))
    assert x.shape == (5, 91) and np.all(x[:, 0] == 1)


def test_nvar_recovers_a_linear_system_exactly():
    """Direct forecasts of x_{t+1} = A x_t are linear in the last state: ridge with λ → 0 finds them."""
    rng = np.random.default_rng(1)
    angle = 0.2
    a = np.array([[np.cos(angle), -np.sin(angle), 0], [np.sin(angle), np.cos(angle), 0], [0, 0, 0.97]])
    trajectories = []
    for _ in range(6):
        s = [rng.uniform(-1, 1, 3)]
        for _ in range(200):
            s.append(a @ s[-1])
        trajectories.append(np.array(s))
    model = nvar.fit(np.array(trajectories), ridge=1e-12)
    test = np.array(trajectories[0])
    pred = nvar.forecast(model, test, np.array([50]))[0]
    truth = test[51:51 + nvar.HORIZON]
    assert np.abs(pred - truth).max() < 1e-6


def test_nvar_on_lorenz_matches_the_spec():
    fit_set = lorenz.generate(6, 10, seed=1)
    test_set = lorenz.generate(2, 5, seed=2)
    model = nvar.fit(fit_set.states, stride=2)
    mae = nvar.lead_mae(model, test_set.states, stride=5)
    assert mae[0] < 0.3                                          # a larger run reaches 0.15 at lead 1
    assert mae[15] < 8                                           # 5.4 at lead 16
    assert np.all(np.diff(mae[:4]) > 0)                          # error grows with the lead
    issued = nvar.forecast_all(model, test_set.states[0])
    assert np.isnan(issued[:3]).all() and np.isfinite(issued[3:]).all()
    with pytest.raises(ValueError, match="origins"):
        nvar.forecast(model, test_set.states[0], np.array([1]))
