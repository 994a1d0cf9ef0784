"""DeLong's paired AUROC test against its direct definition, frequency weights, scikit-learn and the paired
bootstrap."""
import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

from fairviz.core.delong import delong_paired


def _direct(y, a, b):
    """The 1988 definition, O(m·n): ψ(x, y) = 1 if x > y, ½ if equal, 0 otherwise."""
    pos, neg = y == 1, y == 0

    def components(s):
        psi = (s[pos][:, None] > s[neg][None, :]) + 0.5 * (s[pos][:, None] == s[neg][None, :])
        return psi.mean(axis=1), psi.mean(axis=0), psi.mean()

    v10a, v01a, auc_a = components(a)
    v10b, v01b, auc_b = components(b)
    s10 = np.cov(np.vstack([v10a, v10b]))
    s01 = np.cov(np.vstack([v01a, v01b]))
    var = (s10[0, 0] + s10[1, 1] - 2 * s10[0, 1]) / pos.sum() + (s01[0, 0] + s01[1, 1] - 2 * s01[0, 1]) / neg.sum()
    return auc_a, auc_b, np.sqrt(var)


def _correlated(seed, n=400):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(int)
    latent = y + rng.normal(0, 1, n)
    a = np.round(1 / (1 + np.exp(-latent)), 2)                          # ties on purpose
    b = np.round(1 / (1 + np.exp(-(0.7 * latent + rng.normal(0, 0.7, n)))), 2)
    return y, a, b


def test_equals_the_direct_definition_and_sklearn():
    y, a, b = _correlated(0)
    result = delong_paired(y, a, b)
    auc_a, auc_b, se = _direct(y, a, b)
    assert result.auc_a == pytest.approx(auc_a, abs=1e-12) == pytest.approx(roc_auc_score(y, a), abs=1e-12)
    assert result.auc_b == pytest.approx(auc_b, abs=1e-12)
    assert result.se == pytest.approx(se, rel=1e-10)


def test_frequency_weights_equal_the_expanded_rows():
    y, a, b = _correlated(1, n=300)
    keys, counts = np.unique(np.column_stack([y, a, b]), axis=0, return_counts=True)
    weighted = delong_paired(keys[:, 0], keys[:, 1], keys[:, 2], weight=counts)
    rows = delong_paired(y, a, b)
    assert weighted.difference == pytest.approx(rows.difference, abs=1e-12)
    assert weighted.se == pytest.approx(rows.se, rel=1e-10)
    assert weighted.p_value == pytest.approx(rows.p_value, rel=1e-9)


def test_agrees_with_the_paired_bootstrap_within_monte_carlo_error():
    y, a, b = _correlated(2, n=1500)
    result = delong_paired(y, a, b)
    rng = np.random.default_rng(7)
    rows = rng.integers(0, y.size, (1000, y.size))          # one resample of rows feeds both models (paired)

    def auc(yy, ss):                                         # Mann–Whitney form, per resample (midranks: ties ½)
        ranks = np.apply_along_axis(rankdata, 1, ss)
        m = yy.sum(axis=1)
        return ((ranks * yy).sum(axis=1) - m * (m + 1) / 2) / (m * (yy.shape[1] - m))

    diffs = auc(y[rows], a[rows]) - auc(y[rows], b[rows])
    boot_se = np.std(diffs, ddof=1)
    # the bootstrap SE's own Monte Carlo error with B = 1000 is about SE/sqrt(2B) ≈ 2.2%
    assert result.se == pytest.approx(boot_se, rel=0.1)


def test_identical_models_and_one_outcome():
    y, a, _ = _correlated(3)
    same = delong_paired(y, a, a)
    assert same.difference == 0 and same.p_value == 1.0
    with pytest.raises(ValueError, match="both outcomes"):
        delong_paired(np.ones(5), np.arange(5), np.arange(5))
