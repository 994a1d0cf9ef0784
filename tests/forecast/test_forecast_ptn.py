"""The PTN (torch): lazy import, shapes, the loss against the numpy CRPS, saving, and a short training run that
must beat the Gaussian-NVAR baseline."""
import subprocess
import sys

import numpy as np
import pytest

from fairviz.forecast import crps as C
from fairviz.forecast import pipeline as demo

torch = pytest.importorskip("torch")
torch.set_num_threads(1)
from fairviz.core import runtime  # noqa: E402
from fairviz.forecast import genetic, ptn  # noqa: E402
from tests.devices import devices, tolerance  # noqa: E402

TINY = demo.ForecastDataParams(fit_systems=4, fit_initial=6, train_systems=3, train_initial=6, arch_systems=2,
                       arch_initial=4, test_systems=2, test_initial=4, stride=24, seed=1)


@pytest.fixture(scope="module")
def tiny_data():
    return demo.prepare(TINY)


def test_importing_fairviz_forecast_does_not_import_torch():
    code = ("import sys; import fairviz.forecast.ptn, fairviz.forecast.pipeline, fairviz.forecast.fairness, "
            "fairviz.forecast.genetic, fairviz.forecast.figures; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("device", devices())
def test_forward_shape_and_cells(tiny_data, device):
    config = ptn.PTNParams(d=24, history_heads=3, forecast_heads=6, norm="batch")
    model = ptn.build(config).to(device)
    w = tiny_data.train.take(np.arange(5))
    out = model(*(torch.as_tensor(a, dtype=torch.float32, device=device) for a in (w.static, w.history, w.forecasts)))
    assert tuple(out.shape) == (5, 16, 111)
    assert set(model.cells()) == {"history", "forecasts_collapse", "forecasts"}
    assert model.cells()["history"].names == ["attention", "conv1d", "bigru"]


def test_invalid_config_is_refused():
    with pytest.raises(ValueError, match="heads"):
        ptn.PTNParams(d=32, history_heads=3).check()
    with pytest.raises(ValueError, match="odd"):
        ptn.PTNParams(history_kernel=4).check()
    with pytest.raises(ValueError, match="unknown"):
        ptn.PTNParams.from_dict({"depth": 3})


def test_torch_loss_equals_numpy_crps_plus_penalty():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(6, 16, 111))
    y = rng.normal(size=(6, 16))
    loss, crps = ptn.crps_loss(torch.as_tensor(q), torch.as_tensor(y), omega=0.0075)
    assert float(crps) == pytest.approx(C.crps_ensemble(q, y).mean(), abs=1e-10)
    assert float(loss) == pytest.approx(C.crps_ensemble(q, y).mean() + 0.0075 * C.order_penalty(q), abs=1e-10)
    qs = np.sort(q, axis=-1)
    loss_sorted, crps_sorted = ptn.crps_loss(torch.as_tensor(qs), torch.as_tensor(y))
    assert float(loss_sorted) == pytest.approx(float(crps_sorted))          # no penalty on sorted outputs


def test_static_ablation_ignores_the_static_input(tiny_data):
    model = ptn.build(ptn.PTNParams(use_static=False)).eval()
    w = tiny_data.train.take(np.arange(4))
    args = [torch.as_tensor(a, dtype=torch.float32) for a in (w.static, w.history, w.forecasts)]
    first = model(*args)
    args[0] = args[0] + 5
    assert torch.allclose(first, model(*args))


@pytest.mark.parametrize("device", devices())
def test_training_saving_and_loading(tiny_data, tmp_path, device):
    """Trained on each device; the saved weights load on the same device (bit-identical forecasts) and on the CPU
    (the same forecasts within GPU tolerance)."""
    settings = ptn.PTNTrainParams(epochs=2, weight_steps=2, arch_steps=1, batch=16, device=device)
    seen = []
    config = ptn.PTNParams(d=24, history_heads=2, forecast_heads=2)
    trained = ptn.train(tiny_data.train, tiny_data.arch, config, settings, on_epoch=lambda h: seen.append(len(h)))
    assert seen == [1, 2] and len(trained.history) == 2 and trained.device == device
    weights = trained.arch_weights["history"]
    assert set(weights) == {"attention", "conv1d", "bigru"} and sum(weights.values()) == pytest.approx(1, abs=1e-5)
    q = ptn.predict(trained, tiny_data.test, device=device)
    assert q.shape == (tiny_data.test.n, 16, 111) and np.all(np.diff(q, axis=-1) >= 0)
    ptn.save(trained, tmp_path / "m.npz")
    again = ptn.load(tmp_path / "m.npz")
    assert again.config == trained.config and again.history == trained.history and again.device == device
    part = tiny_data.test.take(np.arange(min(64, tiny_data.test.n)))
    assert np.array_equal(ptn.predict(again, part, device=device), q[:part.n])
    assert ptn.predict(again, part, device="cpu") == pytest.approx(q[:part.n], abs=tolerance(device, 1e-6))
    twice = ptn.train(tiny_data.train, tiny_data.arch, config, settings)          # local generators: reproducible
    assert twice.history[-1]["val"] == trained.history[-1]["val"]
    assert all(np.array_equal(twice.state[k], trained.state[k]) for k in trained.state)


def test_training_draws_nothing_from_the_global_generator(tiny_data):
    settings = ptn.PTNTrainParams(epochs=1, weight_steps=2, arch_steps=1, batch=16, device="cpu")
    torch.manual_seed(5)
    expected = torch.rand(4)
    torch.manual_seed(5)
    ptn.train(tiny_data.train, tiny_data.arch, ptn.PTNParams(d=16, history_heads=2, forecast_heads=2), settings)
    assert torch.equal(torch.rand(4), expected)


class Stop(BaseException):
    """What Streamlit raises at the next element call after a click on Stop."""


def _raise_after(k: int, calls: list):
    def progress(fraction, message):
        calls.append(message)
        if len(calls) >= k:
            raise Stop
    return progress


@pytest.mark.parametrize("device", devices())
def test_training_stops_within_one_step(tiny_data, monkeypatch, device):
    monkeypatch.setattr(runtime, "BEAT_INTERVAL_S", 0.0)
    steps, calls = [], []
    real_step = ptn._step
    monkeypatch.setattr(ptn, "_step", lambda *a: steps.append(len(calls)) or real_step(*a))
    with pytest.raises(Stop):
        ptn.train(tiny_data.train, tiny_data.arch, ptn.PTNParams(d=16, history_heads=2, forecast_heads=2),
                  ptn.PTNTrainParams(epochs=5, weight_steps=4, arch_steps=2, batch=16, device=device),
                  progress=_raise_after(5, calls))
    assert len(calls) == 5 and steps == [0, 1, 2, 3, 4]          # one step between two progress calls, none after


def test_the_genetic_search_stops_inside_a_candidate(tiny_data, monkeypatch):
    monkeypatch.setattr(runtime, "BEAT_INTERVAL_S", 0.0)
    steps, calls = [], []
    real_step = ptn._step
    monkeypatch.setattr(ptn, "_step", lambda *a: steps.append(len(calls)) or real_step(*a))
    with pytest.raises(Stop):
        genetic.ptn_search(tiny_data, population=2, generations=2, epochs=3, weight_steps=2, arch_steps=1,
                           progress=_raise_after(4, calls))
    assert len(calls) == 4 and max(steps) < 4 and "generation 1, agent 0: training" in calls[0]


@pytest.mark.slow
def test_short_cpu_training_beats_the_gaussian_nvar_baseline():
    """A smoke test, loose: median-CRPS skill > 0 and ≥ 60% of forecasts outperformed (seed 0)."""
    data = demo.prepare(demo.ForecastDataParams(fit_systems=8, fit_initial=15, train_systems=6, train_initial=15,
                                        arch_systems=2, arch_initial=15, test_systems=3, test_initial=10, seed=0))
    trained = ptn.train(data.train, data.arch, ptn.PTNParams(d=32),
                        ptn.PTNTrainParams(epochs=14, weight_steps=20, arch_steps=3, seed=0))
    q = ptn.predict(trained, data.test)
    assert np.all(np.diff(q, axis=-1) >= 0)
    result = demo.evaluate(q, data)
    assert result.skill.quartiles[1] > 0
    assert result.skill.outperformed >= 0.6


def test_genetic_search_over_ptn_candidates(tiny_data):
    from fairviz.forecast import genetic
    result = genetic.ptn_search(tiny_data, population=2, generations=2, epochs=1, weight_steps=2, arch_steps=1)
    assert 2 <= len(result.ranking) <= 4
    assert result.settings["device"] == runtime.pick_device() and result.settings["device_label"]
    for agent in result.ranking:
        assert np.isfinite(agent.fitness) and np.isfinite(agent.val_fitness) and agent.seconds > 0
        ptn.PTNParams.from_dict({**agent.genes})
    parts = genetic.split_for_search(tiny_data.arch)
    trajectories = [set(np.unique(p.trajectory)) for p in parts]
    assert all(not (a & b) for i, a in enumerate(trajectories) for b in trajectories[i + 1:])


def test_test_partition_is_reproducible(tiny_data):
    again = demo.test_set(TINY)
    assert np.array_equal(again.states, tiny_data.test_set.states)
