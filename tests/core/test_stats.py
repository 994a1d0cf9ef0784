"""Shared statistics: count-based resampling equals row resampling in law; medians, W1, BH, counts."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from fairviz.core import stats
from fairviz.core.counts import ConfusionCounts, confusion_by_group, decisions


def test_weighted_median_equals_numpy_median():
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 10, 101, 1000):
        values = rng.integers(-20, 20, n) / 10
        comp = stats.compress(values, -2, 2)
        assert stats.weighted_median(comp.support, comp.counts())[0] == np.median(values)


def test_wasserstein_counts_equals_scipy():
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 50, 300) / 50, rng.integers(0, 50, 500) / 50
    comp = stats.compress(np.r_[a, b], 0, 1)
    counts_a, counts_b = np.bincount(comp.codes[:300], minlength=comp.support.size), \
        np.bincount(comp.codes[300:], minlength=comp.support.size)
    assert stats.wasserstein_counts(comp.support, counts_a, counts_b)[0] == pytest.approx(
        sps.wasserstein_distance(a, b), abs=1e-12)


def test_compress_snaps_many_values_to_a_grid():
    values = np.random.default_rng(2).uniform(-1, 1, 50_000)
    comp = stats.compress(values, -1, 1)
    assert comp.support.size == stats.MAX_SUPPORT and comp.step > 0
    assert np.abs(comp.support[comp.codes] - values).max() <= comp.step / 2 + 1e-12


def test_bootstrap_counts_keep_total_and_match_row_bootstrap_spread():
    rng = np.random.default_rng(3)
    values = rng.integers(0, 10, 400).astype(float)
    comp = stats.compress(values, 0, 10)
    boot = stats.bootstrap_counts(comp.counts(), 4000, np.random.default_rng(4))
    assert (boot.sum(1) == 400).all()
    means = boot @ comp.support / 400
    assert means.std() == pytest.approx(values.std() / np.sqrt(400), rel=0.05)


def test_permutation_counts_are_exact_splits():
    pooled = np.array([5, 0, 3, 7, 0, 2])
    first, second = stats.permutation_counts(pooled, 6, 20_000, np.random.default_rng(5))
    assert (first.sum(1) == 6).all() and (first >= 0).all() and (second >= 0).all()
    assert first.mean(0) == pytest.approx(pooled * 6 / 17, abs=0.02)


def test_percentile_interval_and_p_value():
    interval = stats.percentile_interval(np.arange(1001, dtype=float))
    assert (interval.low, interval.high) == pytest.approx((25.0, 975.0))
    assert np.isnan(stats.percentile_interval(np.full(100, np.nan)).low)
    assert stats.permutation_p_value(5.0, np.arange(10.0)) == pytest.approx(6 / 11)
    assert stats.permutation_p_value(1000.0, np.arange(999.0)) == pytest.approx(1 / 1000)


def test_benjamini_hochberg_matches_statsmodels():
    p = np.array([0.01, 0.04, 0.03, 0.2, np.nan, 0.001, 0.5])
    ok = np.isfinite(p)
    expected = multipletests(p[ok], method="fdr_bh")[1]
    assert stats.benjamini_hochberg(p)[ok] == pytest.approx(expected)
    assert np.isnan(stats.benjamini_hochberg(p)[4])


def test_mann_whitney_matches_scipy():
    rng = np.random.default_rng(6)
    x, y = rng.normal(0.2, 1, 300), rng.normal(0, 1, 400)
    result = stats.mann_whitney(x, y)
    assert result.p_two_sided == pytest.approx(sps.mannwhitneyu(x, y).pvalue, rel=1e-12)
    assert result.p_greater == pytest.approx(sps.mannwhitneyu(x, y, alternative="greater").pvalue, rel=1e-12)
    assert result.statistic == sps.mannwhitneyu(x, y).statistic
    assert 0.5 < result.effect_size < 0.65


@pytest.mark.parametrize("x, y", [
    (np.round(np.random.default_rng(1).normal(0, 1, 500), 1), np.round(np.random.default_rng(2).normal(0.1, 1, 70), 1)),
    (np.r_[np.zeros(20), np.ones(5)], np.r_[np.zeros(10), np.ones(30)]),                 # heavy ties
    (np.full(12, 0.3), np.full(15, 0.3)),                                                 # all equal: p = 1
    (np.array([0.1, 0.5, 0.9]), np.array([0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 1.0, 1.1, 1.2, 1.3])),  # small: exact
])
def test_mann_whitney_equals_scipy_with_ties_and_small_samples(x, y):
    result = stats.mann_whitney(x, y)
    for alternative, ours in (("two-sided", result.p_two_sided), ("greater", result.p_greater)):
        assert ours == pytest.approx(sps.mannwhitneyu(x, y, alternative=alternative).pvalue, rel=1e-10, abs=1e-15)


def test_bootstrap_rows_is_seeded():
    x = np.random.default_rng(7).normal(size=200)
    first = stats.bootstrap_rows(np.mean, (x,), 300, seed=1)
    assert first == stats.bootstrap_rows(np.mean, (x,), 300, seed=1)
    assert first.low < x.mean() < first.high


def test_confusion_by_group_and_undefined_rates():
    y = np.array([1, 1, 0, 0, 1, 0, 0, 0])
    score = np.array([.9, .2, .8, .1, .6, .4, .3, .2])
    codes = np.array([0, 0, 0, 0, 1, 1, 1, 2])
    counts = confusion_by_group(y, decisions(score, 0.5), codes, 3)
    assert counts[0] == ConfusionCounts(tp=1, fn=1, fp=1, tn=1)
    assert counts[1] == ConfusionCounts(tp=1, fn=0, fp=0, tn=2)
    assert counts[2].tpr() is None and counts[2].fpr() == 0.0 and counts[2].ppr() == 0.0


def test_large_samples_use_the_poisson_bootstrap_with_the_row_bootstrap_spread():
    """From POISSON_FROM rows a cell of c rows draws Poisson(c): sizes vary by √n, the mean's spread stays a row
    bootstrap's, and the draws depend only on the seed (not on how many cores drew them)."""
    rng = np.random.default_rng(7)
    values = rng.integers(0, 50, 40_000).astype(float)
    comp = stats.compress(values, 0, 50)
    counts = comp.counts()
    boot = stats.bootstrap_counts(counts, 3000, np.random.default_rng(8))
    sizes = boot.sum(1)
    assert sizes.std() == pytest.approx(np.sqrt(values.size), rel=0.1) and abs(sizes.mean() - values.size) < 30
    means = boot @ comp.support / sizes
    assert means.std() == pytest.approx(values.std() / np.sqrt(values.size), rel=0.08)
    workers = stats.WORKERS
    try:
        stats.WORKERS = 1
        serial = stats.bootstrap_counts(counts, 3000, np.random.default_rng(8))
    finally:
        stats.WORKERS = workers
    assert (serial == boot).all() or workers == 1


def test_small_samples_keep_their_size():
    counts = np.array([3000, 0, 4000, 2999])                # one row under POISSON_FROM: multinomial
    boot = stats.bootstrap_counts(counts, 50, np.random.default_rng(1))
    assert (boot.sum(1) == counts.sum()).all() and (boot[:, 1] == 0).all()
