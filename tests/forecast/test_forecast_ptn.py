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
from fairviz.forecast import ptn  # noqa: E402

TINY = demo.DataConfig(fit_systems=4, fit_initial=6, train_systems=3, train_initial=6, arch_systems=2,
                       arch_initial=4, test_systems=2, test_initial=4, stride=24, seed=1)


@pytest.fixture(scope="module")
def tiny_data():
    return demo.prepare(TINY)


def test_importing_fairviz_forecast_does_not_import_torch():
    code = ("import sys; import fairviz.forecast.ptn, fairviz.forecast.pipeline, fairviz.forecast.fairness, "
            "fairviz.forecast.genetic, fairviz.forecast.figures; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_forward_shape_and_cells(tiny_data):
    config = ptn.PTNConfig(d=24, history_heads=3, forecast_heads=6, norm="batch")
    model = ptn.build(config)
    w = tiny_data.train.take(np.arange(5))
    out = model(torch.as_tensor(w.static, dtype=torch.float32), torch.as_tensor(w.history, dtype=torch.float32),
                torch.as_tensor(w.forecasts, dtype=torch.float32))
    assert tuple(out.shape) == (5, 16, 111)
    assert set(model.cells()) == {"history", "forecasts_collapse", "forecasts"}
    assert model.cells()["history"].names == ["attention", "conv1d", "bigru"]


def test_invalid_config_is_refused():
    with pytest.raises(ValueError, match="heads"):
        ptn.PTNConfig(d=32, history_heads=3).check()
    with pytest.raises(ValueError, match="odd"):
        ptn.PTNConfig(history_kernel=4).check()
    with pytest.raises(ValueError, match="unknown"):
        ptn.PTNConfig.from_dict({"depth": 3})


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
    model = ptn.build(ptn.PTNConfig(use_static=False)).eval()
    w = tiny_data.train.take(np.arange(4))
    args = [torch.as_tensor(a, dtype=torch.float32) for a in (w.static, w.history, w.forecasts)]
    first = model(*args)
    args[0] = args[0] + 5
    assert torch.allclose(first, model(*args))


def test_training_saving_and_loading(tiny_data, tmp_path):
    settings = ptn.TrainSettings(epochs=2, weight_steps=2, arch_steps=1, batch=16)
    seen = []
    trained = ptn.train(tiny_data.train, tiny_data.arch, ptn.PTNConfig(d=24, history_heads=2, forecast_heads=2),
                        settings, on_epoch=lambda h: seen.append(len(h)))
    assert seen == [1, 2] and len(trained.history) == 2 and trained.device == "cpu"
    weights = trained.arch_weights["history"]
    assert set(weights) == {"attention", "conv1d", "bigru"} and sum(weights.values()) == pytest.approx(1, abs=1e-5)
    q = ptn.predict(trained, tiny_data.test)
    assert q.shape == (tiny_data.test.n, 16, 111) and np.all(np.diff(q, axis=-1) >= 0)
    ptn.save(trained, tmp_path / "m.npz")
    again = ptn.load(tmp_path / "m.npz")
    assert again.config == trained.config and again.history == trained.history
    assert np.array_equal(ptn.predict(again, tiny_data.test), q)


@pytest.mark.slow
def test_short_cpu_training_beats_the_gaussian_nvar_baseline():
    """Spec §8.12's smoke test, loose: median-CRPS skill > 0 and ≥ 60% of forecasts outperformed (seed 0)."""
    data = demo.prepare(demo.DataConfig(fit_systems=8, fit_initial=15, train_systems=6, train_initial=15,
                                        arch_systems=2, arch_initial=15, test_systems=3, test_initial=10, seed=0))
    trained = ptn.train(data.train, data.arch, ptn.PTNConfig(d=32),
                        ptn.TrainSettings(epochs=14, weight_steps=20, arch_steps=3, seed=0))
    q = ptn.predict(trained, data.test)
    assert np.all(np.diff(q, axis=-1) >= 0)
    result = demo.evaluate(q, data)
    assert result.skill.quartiles[1] > 0
    assert result.skill.outperformed >= 0.6


def test_genetic_search_over_ptn_candidates(tiny_data):
    from fairviz.forecast import genetic
    result = genetic.ptn_search(tiny_data, population=2, generations=2, epochs=1, weight_steps=2, arch_steps=1)
    assert 2 <= len(result.ranking) <= 4
    for agent in result.ranking:
        assert np.isfinite(agent.fitness) and np.isfinite(agent.val_fitness) and agent.seconds > 0
        ptn.PTNConfig.from_dict({**agent.genes})
    parts = genetic.split_for_search(tiny_data.arch)
    trajectories = [set(np.unique(p.trajectory)) for p in parts]
    assert all(not (a & b) for i, a in enumerate(trajectories) for b in trajectories[i + 1:])


def test_test_partition_is_reproducible(tiny_data):
    again = demo.test_set(TINY)
    assert np.array_equal(again.states, tiny_data.test_set.states)
