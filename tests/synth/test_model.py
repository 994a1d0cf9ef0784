"""The HydraGAN losses: the WGAN-GP term against finite differences, the diversity loss at and off its target."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fairviz.synth import model  # noqa: E402


def _critic(width: int, n_cond: int):
    _, Critic = model._modules()
    critic = Critic(width, n_cond, 16).double()
    model._init(critic, torch.Generator().manual_seed(5))
    return critic


def _finite_difference_norms(critic, points, cond, h=1e-6):
    norms = []
    for row in range(points.shape[0]):
        grad = []
        for k in range(points.shape[1]):
            up, down = points.clone(), points.clone()
            up[row, k] += h
            down[row, k] -= h
            with torch.no_grad():
                grad.append(float((critic(up, cond)[row] - critic(down, cond)[row]) / (2 * h)))
        norms.append(np.linalg.norm(grad))
    return np.array(norms)


def test_gradient_penalty_matches_finite_differences():
    g = torch.Generator().manual_seed(0)
    points = torch.randn((6, 5), generator=g, dtype=torch.float64)
    cond = torch.nn.functional.one_hot(torch.tensor([0, 1, 2, 0, 1, 2]), 3).double()
    critic = _critic(5, 3)
    norms = _finite_difference_norms(critic, points, cond)
    expected = 10.0 * np.mean((norms - 1.0) ** 2)
    got = float(model.penalty_at(critic, points, cond, weight=10.0).detach())
    assert got == pytest.approx(expected, rel=1e-6)
    assert expected > 1e-3                                # a real, non-trivial penalty was compared


def test_gradient_penalty_interpolates_between_real_and_fake():
    critic = _critic(4, 2)
    real = torch.zeros((3, 4), dtype=torch.float64)
    fake = torch.ones((3, 4), dtype=torch.float64)
    cond = torch.nn.functional.one_hot(torch.tensor([0, 1, 0]), 2).double()
    eps = torch.rand((3, 1), generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    expected = model.penalty_at(critic, eps * real + (1 - eps) * fake, cond, 10.0)
    got = model.gradient_penalty(critic, real, fake, cond, 10.0, torch.Generator().manual_seed(9))
    assert float(got.detach()) == pytest.approx(float(expected.detach()), rel=1e-12)


def test_diversity_loss_is_zero_at_the_target_and_the_mse_elsewhere():
    target = torch.tensor([0.5, 0.5])
    at_target = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.7, 0.3], [0.3, 0.7]])
    assert float(model.diversity_loss(at_target, target)) == 0.0
    skewed = torch.tensor([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])   # proportions 0.75 / 0.25
    assert float(model.diversity_loss(skewed, target)) == pytest.approx(0.0625)
    assert float(model.diversity_loss(skewed, torch.tensor([0.75, 0.25]))) == 0.0


def test_gumbel_softmax_rows_sum_to_one_and_follow_the_logits():
    logits = torch.log(torch.tensor([[0.8, 0.2]])).repeat(20000, 1)
    out = model.gumbel_softmax(logits, 0.2, torch.Generator().manual_seed(1))
    assert torch.allclose(out.sum(1), torch.ones(20000))
    assert float((out.argmax(1) == 0).float().mean()) == pytest.approx(0.8, abs=0.01)   # argmax samples p


def test_settings_are_checked():
    with pytest.raises(ValueError, match="epochs"):
        model.GANParams(epochs=0).check()


def test_training_reports_progress_often_and_records_each_head():
    import time

    import pandas as pd

    from fairviz.synth.encoding import fit_encoder

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=300), "y": rng.choice([0, 1], 300)})
    enc = fit_encoder(frame, categorical={"y"})
    heads = [model.realism_head(), model.label_diversity_head(enc.category_span("y"), [0.5, 0.5], 5.0)]
    calls = []
    trained = model.train(enc.encode(frame), rng.integers(0, 2, 300), enc, ["a", "b"], heads,
                          model.GANParams(epochs=3, batch=50, seed=1),
                          progress=lambda f, m: calls.append((time.monotonic(), f, m)))
    fractions = [f for _, f, _ in calls]
    assert fractions[0] == 0.0 and fractions[-1] == 1.0 and fractions == sorted(fractions)
    assert max(b[0] - a[0] for a, b in zip(calls, calls[1:])) < 2.0
    assert set(trained.history) == {"critic", "gradient penalty", "realism", "label diversity"}
    assert all(len(v) == 3 and all(np.isfinite(v)) for v in trained.history.values())
    assert trained.device == "cpu" and trained.heads == (("realism", 1.0), ("label diversity", 5.0))
    again = model.train(enc.encode(frame), rng.integers(0, 2, 300) * 0 + 1, enc, ["a", "b"], heads,
                        model.GANParams(epochs=1, batch=50, seed=1))
    codes = np.array([0, 1, 1, 0])
    assert np.array_equal(model.sample(again, codes, 3), model.sample(again, codes, 3))        # seeded noise
    assert not np.array_equal(model.sample(again, codes, 3), model.sample(again, codes, 4))
