"""Permutation nulls of a group pair ([1] §5): group labels permuted with the group sizes kept."""
from __future__ import annotations

import numpy as np

from fairviz.core import stats
from fairviz.residuals.resampling import CountResampler


def permutation_p_values(resampler: CountResampler, i: int, j: int) -> tuple[float, float]:
    """Permutation tests of |m_i − m_j| (two-sided) and of F_dist (upper tail), group sizes kept."""
    support = resampler.compressed.support
    obs_i, obs_j = resampler.split(resampler.counts[i])["all"], resampler.split(resampler.counts[j])["all"]
    rng = np.random.default_rng([resampler.seed, 2, i, j])
    perm_i, _ = stats.permutation_counts(obs_i + obs_j, int(obs_i.sum()), resampler.resamples, rng)
    cum_i = np.cumsum(perm_i, axis=-1)
    cum_j = np.cumsum(obs_i + obs_j)[None, :] - cum_i             # the other group holds the rest
    obs_gap = abs(stats.weighted_median(support, obs_i)[0] - stats.weighted_median(support, obs_j)[0])
    null_gap = np.abs(stats.median_of_cumulative(support, cum_i) - stats.median_of_cumulative(support, cum_j))
    obs_dist = stats.wasserstein_counts(support, obs_i, obs_j)[0]
    null_dist = stats.wasserstein_of_cumulative(support, cum_i, cum_j)
    return stats.permutation_p_value(obs_gap, null_gap), stats.permutation_p_value(obs_dist, null_dist)
