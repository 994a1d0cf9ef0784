"""Paired model comparison: point estimates equal scikit-learn's, weights equal rows, and the paired interval is
narrower than the unpaired one while still covering the true difference."""
import numpy as np
import pytest
from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score

from fairviz.compare import paired_differences, unpaired_interval
from fairviz.core.ece import ece


def _two_models(rng, n):
    """Model a over-predicts by 0.05, model b by 0.10 with extra noise: correlated through the shared noise."""
    p = rng.beta(2, 3, n)
    y = (rng.random(n) < p).astype(int)
    noise = rng.normal(0, 0.03, n)
    a = np.clip(p + 0.05 + noise, 0.001, 0.999)
    b = np.clip(p + 0.10 + noise + rng.normal(0, 0.02, n), 0.001, 0.999)
    return y, a, b


def test_point_estimates_equal_the_peers():
    y, a, b = _two_models(np.random.default_rng(0), 3000)
    r = paired_differences(y, a, b, resamples=100, permutations=100)
    assert r["ece"].difference == pytest.approx(ece(a, y) - ece(b, y), abs=1e-12)
    assert r["log_loss"].difference == pytest.approx(log_loss(y, a) - log_loss(y, b), abs=1e-12)
    assert r["brier"].difference == pytest.approx(brier_score_loss(y, a) - brier_score_loss(y, b), abs=1e-12)
    assert r["auroc"].difference == pytest.approx(roc_auc_score(y, a) - roc_auc_score(y, b), abs=1e-12)
    assert r["ece"].p_value < 0.02 and r["ece"].ci.high < 0            # b is clearly worse calibrated
    assert r["auroc"].test.startswith("DeLong")


def test_counts_equal_rows():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 600)
    a = np.round(rng.uniform(0, 1, 600), 1)
    b = np.round(np.clip(a + rng.normal(0, 0.1, 600), 0, 1), 1)
    keys, counts = np.unique(np.column_stack([y, a, b]), axis=0, return_counts=True)
    rows = paired_differences(y, a, b, resamples=50, permutations=50)
    table = paired_differences(keys[:, 0], keys[:, 1], keys[:, 2], weight=counts, resamples=50, permutations=50)
    for m in rows:
        assert table[m].difference == pytest.approx(rows[m].difference, abs=1e-12)


def test_identical_models_do_not_differ():
    y, a, _ = _two_models(np.random.default_rng(2), 1000)
    r = paired_differences(y, a, a, resamples=100, permutations=100)
    assert all(d.difference == 0 for d in r.values())
    assert r["ece"].p_value == 1.0 and r["ece"].ci.low == r["ece"].ci.high == 0


@pytest.mark.slow
def test_the_paired_interval_is_narrower_and_covers_the_truth():
    y, a, b = _two_models(np.random.default_rng(123), 4_000_000)
    truth = ece(a, y) - ece(b, y)                 # the population's binned ECE gap (4M rows)
    covered, narrower = 0, 0
    for seed in range(200):
        y, a, b = _two_models(np.random.default_rng(seed), 2000)
        paired = paired_differences(y, a, b, resamples=200, permutations=0, seed=seed,
                                    metrics=("ece",))["ece"].ci
        unpaired = unpaired_interval(y, a, b, "ece", resamples=200, seed=seed)
        covered += paired.low <= truth <= paired.high
        narrower += (paired.high - paired.low) < (unpaired.high - unpaired.low)
    assert covered >= 0.93 * 200
    assert narrower == 200
