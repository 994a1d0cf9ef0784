"""Shared statistics: resampling on compressed samples, intervals, tests and multiple-testing correction.

Bootstraps and permutation tests on a million rows cannot copy the rows B times. Every statistic we
resample (medians, Wasserstein distances, binned calibration sums, region means) depends on the rows only
through the counts of distinct values, so a sample is compressed to ``(support, counts)`` once and each
resample draws a count vector: multinomial (or, from ``POISSON_FROM`` rows, Poisson) counts for the bootstrap, a
multivariate hypergeometric split for a permutation of group labels. Above ``MAX_SUPPORT`` distinct values the values are snapped to a uniform grid
(the error of any quantile is at most half a grid step), and the result says so.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import stats as sps

MAX_SUPPORT = 2048
DEFAULT_RESAMPLES = 1000
POISSON_FROM = 10_000          # rows from which a bootstrap draws Poisson cell counts (see bootstrap_counts)
POISSON_BLOCK = 250            # resamples per random stream: blocks are drawn in parallel, the same on any core count
WORKERS = max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    level: float = 0.95
    resamples: int = 0

    def to_list(self) -> list[float | None]:
        return [_finite_or_none(self.low), _finite_or_none(self.high)]


@dataclass(frozen=True)
class Compressed:
    """Distinct values of a sample and a code per row; ``step`` > 0 when values were snapped to a grid."""

    support: np.ndarray     # sorted values
    codes: np.ndarray       # index into support, one per row
    step: float = 0.0

    def counts(self, mask: np.ndarray | None = None) -> np.ndarray:
        codes = self.codes if mask is None else self.codes[mask]
        return np.bincount(codes, minlength=self.support.size).astype(np.int64)


def compress(values: np.ndarray, lo: float, hi: float, max_support: int = MAX_SUPPORT) -> Compressed:
    """Exact distinct values when there are few; else a uniform grid on [lo, hi] of ``max_support`` points."""
    values = np.asarray(values, dtype=float)
    support, codes = np.unique(values, return_inverse=True)
    if support.size <= max_support:
        return Compressed(support, codes.astype(np.int32))
    grid = np.linspace(lo, hi, max_support)
    step = grid[1] - grid[0]
    codes = np.clip(np.rint((values - lo) / step), 0, max_support - 1).astype(np.int32)
    return Compressed(grid, codes, step)


def bootstrap_counts(counts: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Resample rows with replacement: (resamples, K) count vectors.

    Up to ``POISSON_FROM`` rows, a multinomial draw (the resample keeps the sample's size). From there on, the
    Poisson bootstrap (each row appears Poisson(1) times, so a cell of c rows draws Poisson(c), independently; the
    resample size varies by about 1/√n, which no statistic here notices because each one is normalised by its own
    resample): the bootstrap of TensorFlow Model Analysis and of Hanley & MacGibbon (2006) for large data. It costs
    about half the multinomial's sequential binomials (measured) and runs on several cores."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    out = np.zeros((resamples, counts.size), dtype=np.int64)
    if not total or resamples <= 0:
        return out
    used = np.flatnonzero(counts)                      # empty cells cost time and can never be drawn
    if total < POISSON_FROM:
        out[:, used] = rng.multinomial(total, counts[used] / total, size=resamples)
        return out
    edges = np.append(np.arange(0, resamples, POISSON_BLOCK), resamples)
    streams = rng.spawn(edges.size - 1)                # one stream per block: the same draws on any core count
    dense = used.size == counts.size

    def draw(k: int) -> None:
        block = streams[k].poisson(counts[used], size=(edges[k + 1] - edges[k], used.size))
        if dense:
            out[edges[k]:edges[k + 1]] = block
        else:
            out[edges[k]:edges[k + 1], used] = block

    in_parallel(draw, range(edges.size - 1))
    return out


def in_parallel(task, items, progress: Callable[[float], None] | None = None) -> list:
    """``[task(x) for x in items]`` on up to ``WORKERS`` threads (numpy's generators, FFTs and array loops release
    the GIL). ``progress(fraction done)`` is called from this thread only, at least every half second, so a Stop
    raised there interrupts the wait; tasks not yet started are then cancelled."""
    items = list(items)
    if len(items) <= 1 or WORKERS <= 1:
        out = []
        for k, x in enumerate(items):
            out.append(task(x))
            if progress is not None:
                progress((k + 1) / len(items))
        return out
    from threadpoolctl import threadpool_limits
    # our threads already fill the cores: BLAS threads on top only spin (2× slower on 2 cores, measured). The limit
    # is process-wide; the app runs with OMP_NUM_THREADS=1 (Makefile), so concurrent visitors cannot disturb it.
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(max_workers=min(WORKERS, len(items))) as pool:
        futures = [pool.submit(task, x) for x in items]
        pending = set(futures)
        try:
            while pending:
                _, pending = wait(pending, timeout=0.5)
                if progress is not None:
                    progress(1 - len(pending) / len(futures))
        except BaseException:
            for future in futures:
                future.cancel()
            raise
        return [f.result() for f in futures]


def permutation_counts(pooled: np.ndarray, n_first: int, resamples: int,
                       rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Split pooled counts into a random group of ``n_first`` rows and the rest, ``resamples`` times.

    Equivalent to permuting group labels: the counts of the first group follow a multivariate
    hypergeometric law (numpy's ``multivariate_hypergeometric``, marginals method: one C loop over the cells).
    """
    pooled = pooled.astype(np.int64)
    first = np.zeros((resamples, pooled.size), dtype=np.int64)
    used = np.flatnonzero(pooled)                      # empty cells can never be drawn
    if used.size and resamples > 0:
        first[:, used] = rng.multivariate_hypergeometric(pooled[used], int(n_first), size=resamples,
                                                         method="marginals")
    return first, pooled[None, :] - first


def weighted_median(support: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Median of each row of ``counts`` (shape (..., K)) over ``support``, as ``np.median`` defines it."""
    return median_of_cumulative(support, np.cumsum(np.atleast_2d(counts), axis=-1))


def median_of_cumulative(support: np.ndarray, cum: np.ndarray) -> np.ndarray:
    """``weighted_median`` from cumulative counts (rows of ``cum``), which callers often have already."""
    total = cum[..., -1]
    lower_rank = (total - 1) // 2          # 0-based ranks of the two middle order statistics
    upper_rank = total // 2
    lower = support[np.minimum((cum <= lower_rank[..., None]).sum(-1), support.size - 1)]
    upper = support[np.minimum((cum <= upper_rank[..., None]).sum(-1), support.size - 1)]
    out = (lower + upper) / 2
    return np.where(total > 0, out, np.nan)


def wasserstein_counts(support: np.ndarray, counts_a: np.ndarray, counts_b: np.ndarray) -> np.ndarray:
    """W1 between the distributions given by count rows on a shared sorted support: ∫|F_a − F_b| dx."""
    counts_a, counts_b = np.atleast_2d(counts_a), np.atleast_2d(counts_b)
    return wasserstein_of_cumulative(support, np.cumsum(counts_a, -1), np.cumsum(counts_b, -1))


def wasserstein_of_cumulative(support: np.ndarray, cum_a: np.ndarray, cum_b: np.ndarray) -> np.ndarray:
    """``wasserstein_counts`` from cumulative counts."""
    n_a, n_b = cum_a[..., -1:].astype(float), cum_b[..., -1:].astype(float)
    gap = cum_a[..., :-1] / np.maximum(n_a, 1)
    gap -= cum_b[..., :-1] / np.maximum(n_b, 1)
    out = np.abs(gap, out=gap) @ np.diff(support)              # in place: (B, K) arrays are big
    return np.where((n_a[..., 0] == 0) | (n_b[..., 0] == 0), np.nan, out)


MIN_INTERVAL_RESAMPLES = 10     # a percentile interval from fewer resamples is not computed (NaN: "—", null)


def percentile_interval(samples: np.ndarray, level: float = 0.95) -> Interval:
    """Percentile bootstrap interval; NaN resamples (statistic undefined there) are ignored."""
    samples = np.asarray(samples, dtype=float)
    finite = samples[np.isfinite(samples)]
    if finite.size < max(MIN_INTERVAL_RESAMPLES, 0.5 * samples.size):
        return Interval(np.nan, np.nan, level, samples.size)
    alpha = (1 - level) / 2
    low, high = np.quantile(finite, [alpha, 1 - alpha])
    return Interval(float(low), float(high), level, samples.size)


def basic_interval(samples: np.ndarray, observed: float, level: float = 0.95) -> Interval:
    """The basic (reverse percentile) bootstrap interval [2θ̂ − q_hi, 2θ̂ − q_lo]. Unlike the percentile interval it
    corrects the bias the bootstrap sees: for a difference of two ECEs (biased upwards, differently for each model)
    the percentile interval covered the true difference in 68% of simulated data sets and this one in 95%
    (``tests/compare``)."""
    pct = percentile_interval(samples, level)
    if not np.isfinite(observed):
        return Interval(np.nan, np.nan, level, pct.resamples)
    return Interval(2 * observed - pct.high, 2 * observed - pct.low, level, pct.resamples)


def bootstrap_rows(statistic, arrays: tuple[np.ndarray, ...], resamples: int = DEFAULT_RESAMPLES,
                   seed: int = 0, level: float = 0.95, strata: np.ndarray | None = None) -> Interval:
    """Percentile CI of ``statistic(*arrays)`` by resampling whole rows (for small samples or complex stats).

    With ``strata``, rows are resampled within each stratum so that its size is kept.
    """
    rng = np.random.default_rng(seed)
    n = arrays[0].shape[0]
    values = np.empty(resamples)
    groups = None if strata is None else [np.flatnonzero(strata == s) for s in np.unique(strata)]
    for b in range(resamples):
        if groups is None:
            idx = rng.integers(0, n, n)
        else:
            idx = np.concatenate([g[rng.integers(0, g.size, g.size)] for g in groups])
        values[b] = statistic(*(a[idx] for a in arrays))
    return percentile_interval(values, level)


def permutations_can_reject(permutations, alpha: float) -> bool:
    """Whether a permutation test of ``permutations`` draws can be significant at ``alpha``: its smallest p-value is
    1/(B + 1) (the +1 correction), so with at most 1/α − 1 draws (19 at α = 0.05; none with --resamples 0) it
    never rejects, and its p-value would read as "tested, nothing found". Such a test counts as untested."""
    return permutations is not None and (int(permutations) + 1) * alpha > 1


def fewest_permutations(alpha: float) -> int:
    """The fewest permutations whose test can reject at ``alpha`` (20 at α = 0.05)."""
    b = max(int(np.floor(1 / alpha)) - 1, 0)
    while not permutations_can_reject(b, alpha):
        b += 1
    return b


def permutation_p_value(observed: float, null: np.ndarray) -> float:
    """Upper-tail p-value with the +1 correction: (1 + #{T* ≥ T}) / (B + 1). Use |T| for a two-sided test."""
    null = np.asarray(null, dtype=float)
    null = null[np.isfinite(null)]
    if not np.isfinite(observed) or null.size == 0:
        return float("nan")
    return float((1 + np.count_nonzero(null >= observed - 1e-12)) / (null.size + 1))


@dataclass(frozen=True)
class MannWhitney:
    statistic: float
    p_two_sided: float
    p_greater: float            # H1: the first sample tends to be larger
    effect_size: float          # common-language effect size P(X > Y) + ½P(X = Y)


def mann_whitney(x: np.ndarray, y: np.ndarray) -> MannWhitney:
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.size == 0 or y.size == 0:
        return MannWhitney(np.nan, np.nan, np.nan, np.nan)
    if x.size <= 8 or y.size <= 8:                 # scipy may pick its exact null here
        two = sps.mannwhitneyu(x, y, alternative="two-sided")
        greater = sps.mannwhitneyu(x, y, alternative="greater")
        return MannWhitney(float(two.statistic), float(two.pvalue), float(greater.pvalue),
                           float(two.statistic / (x.size * y.size)))
    u, p_two, p_greater = _mann_whitney_asymptotic(x, y)
    return MannWhitney(u, p_two, p_greater, u / (x.size * y.size))


def mann_whitney_counts(values: np.ndarray, count_x: np.ndarray, count_y: np.ndarray) -> MannWhitney:
    """``mann_whitney`` of two samples given as counts over shared values (weighted data, or a region split):
    tie-corrected mid-ranks from the pooled counts per distinct value, never expanding rows (except ≤ 8 rows a side,
    where scipy may use its exact null)."""
    values = np.asarray(values, float)
    count_x, count_y = np.asarray(count_x, np.int64), np.asarray(count_y, np.int64)
    n1, n2 = int(count_x.sum()), int(count_y.sum())
    if n1 == 0 or n2 == 0 or n1 <= 8 or n2 <= 8:
        return mann_whitney(np.repeat(values, count_x), np.repeat(values, count_y))
    support, inverse = np.unique(values, return_inverse=True)
    tx = np.bincount(inverse, weights=count_x, minlength=support.size)
    ties = tx + np.bincount(inverse, weights=count_y, minlength=support.size)
    midrank = np.cumsum(ties) - (ties - 1) / 2                      # 1-based mid-rank of each distinct value
    u1 = float(tx @ midrank) - n1 * (n1 + 1) / 2
    p_two, p_greater = _mann_whitney_tails(u1, n1, n2, ties[ties > 0])
    return MannWhitney(u1, p_two, p_greater, u1 / (n1 * n2))


def _mann_whitney_asymptotic(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """scipy's asymptotic MWU (tie-corrected, continuity-corrected) for both alternatives from one sort.

    scipy ranks the pooled sample once per alternative; at a million rows that second ranking was a third of the
    residual audit's point estimates. Mid-ranks come from binary search in the sorted pool.
    """
    n1, n2 = x.size, y.size
    pooled = np.sort(np.concatenate([x, y]))
    # rank the smaller sample, its values sorted (cache-friendly searches); U of x follows from U_x + U_y = n1·n2
    small = np.sort(x if n1 <= n2 else y)
    rank_sum = float(np.sum(np.searchsorted(pooled, small, "left") + np.searchsorted(pooled, small, "right") + 1)) / 2
    u_small = rank_sum - small.size * (small.size + 1) / 2
    u1 = u_small if n1 <= n2 else n1 * n2 - u_small
    run_starts = np.flatnonzero(np.concatenate([[True], pooled[1:] != pooled[:-1], [True]]))
    p_two, p_greater = _mann_whitney_tails(u1, n1, n2, np.diff(run_starts).astype(float))
    return u1, p_two, p_greater


def _mann_whitney_tails(u1: float, n1: int, n2: int, ties: np.ndarray) -> tuple[float, float]:
    """Two-sided and 'greater' p-values of U from the normal approximation with tie and continuity corrections."""
    n = n1 + n2
    sd = np.sqrt(n1 * n2 / 12 * ((n + 1) - np.sum(ties ** 3 - ties) / (n * (n - 1))))
    mu = n1 * n2 / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        p_two = min(1.0, 2 * float(sps.norm.sf((max(u1, n1 * n2 - u1) - mu - 0.5) / sd)))
        p_greater = min(1.0, float(sps.norm.sf((u1 - mu - 0.5) / sd)))
    return p_two, p_greater


def benjamini_hochberg(p_values) -> np.ndarray:
    """BH-adjusted p-values (step-up, monotone, capped at 1); NaNs stay NaN and are not counted."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    m = int(ok.sum())
    if m == 0:
        return out
    order = np.argsort(p[ok])
    ranked = p[ok][order] * m / np.arange(1, m + 1)
    adjusted = np.minimum.accumulate(ranked[::-1])[::-1].clip(max=1.0)
    values = np.empty(m)
    values[order] = adjusted
    out[ok] = values
    return out


def _finite_or_none(x: float) -> float | None:
    return float(x) if x is not None and np.isfinite(x) else None
