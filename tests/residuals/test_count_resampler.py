"""The residual audit's resampler keeps each outcome's cumulative counts over the residual values its rows take
only; medians and W1 read from them must equal those of the full count vectors, also when snapping to the grid
moves a residual of exactly 0 across it (scores of exactly 0 with Y = 0, and 1 with Y = 1)."""
from __future__ import annotations

import numpy as np
import pytest

from fairviz.core import stats
from fairviz.residuals import RDFParams, residuals
from fairviz.residuals.resampling import CountResampler


@pytest.mark.parametrize("distinct", [12, None])              # exact residual values, then the 2,048-point grid
def test_restricted_cumulative_counts_give_the_full_medians_and_distances(distinct):
    rng = np.random.default_rng(11)
    n = 30_000
    score = rng.uniform(0, 1, n)
    if distinct:
        score = np.round(score * (distinct - 1)) / (distinct - 1)
    y = rng.binomial(1, score)
    score[:200], y[:200] = 0.0, 0                               # d = 0 exactly, from both outcomes
    score[200:400], y[200:400] = 1.0, 1
    group = rng.integers(0, 2, n)
    members = [np.flatnonzero(group == g) for g in (0, 1)]
    resampler = CountResampler(residuals(score, y), y, members, RDFParams(resamples=200, seed=4))
    support = resampler.compressed.support
    for g in (0, 1):
        boot = stats.bootstrap_counts(resampler.counts[g], 200, np.random.default_rng([4, 1, g]))
        full = resampler.split(boot)
        for outcome, counts in full.items():
            assert resampler.medians(g)[outcome] == pytest.approx(stats.weighted_median(support, counts), abs=0)
    other = resampler.split(stats.bootstrap_counts(resampler.counts[1], 200, np.random.default_rng([4, 1, 1])))
    first = resampler.split(stats.bootstrap_counts(resampler.counts[0], 200, np.random.default_rng([4, 1, 0])))
    for outcome in ("all", "y0", "y1"):
        cols = resampler.columns[outcome]
        kept = stats.wasserstein_of_cumulative(support[cols], resampler.resampled(0)[outcome],
                                               resampler.resampled(1)[outcome])
        assert kept == pytest.approx(stats.wasserstein_counts(support, first[outcome], other[outcome]), abs=1e-12)
