"""Two models on the same rows: each metric's difference with a *paired* interval and test.

Paired means one resample of rows feeds both models (the bootstrap), and the test swaps the two models' scores
within rows (a paired permutation test: under "no difference" the models are exchangeable row by row). The rows'
correlation between the models then cancels in the difference, so the interval is narrower than two independent
intervals and still covers the truth. Entries may stand for several identical rows (``weight``: the engine's counts);
every resample and permutation works on those counts, never on expanded rows.
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import numpy as np
from scipy import sparse

from fairviz.core import stats
from fairviz.core.delong import delong_paired
from fairviz.core.ece import ECE_BINS, ece_bin_index, ece_from_sums

METRICS = ("ece", "log_loss", "brier", "auroc")
METRIC_TITLES = {"ece": "ECE", "log_loss": "log-loss", "brier": "Brier score", "auroc": "AUROC"}
LOWER_IS_BETTER = {"ece": True, "log_loss": True, "brier": True, "auroc": False}
BLOCK = 100                       # resamples per block: (block × entries) counts at a time bound the memory
BLOCK_CELLS = 4_000_000           # … and at most this many counts per block (32 MB of floats) for many entries
EPS = 1e-15


@dataclass(frozen=True)
class PairedDifference:
    metric: str
    value_a: float
    value_b: float
    difference: float             # a minus b
    ci: stats.Interval            # paired bootstrap, basic interval (see ``stats.basic_interval``)
    p_value: float                # two-sided: paired permutation test; DeLong's test for AUROC
    test: str
    delong_ci: tuple[float, float] | None = None   # AUROC only: DeLong's normal interval beside the bootstrap


class _Entries:
    """Entries (y, score_a, score_b, count) laid out so that every metric of a model is a linear function of the
    counts: per-bin sums for ECE, per-entry losses, and per-distinct-score cells for AUROC."""

    def __init__(self, y, score):
        self.y, self.score = y, score
        self.bins = ece_bin_index(score, ECE_BINS)
        clipped = np.clip(score, EPS, 1 - EPS)
        self.log_loss = -(y * np.log(clipped) + (1 - y) * np.log1p(-clipped))
        self.brier = (score - y) ** 2
        self.distinct, self.at = np.unique(score, return_inverse=True)
        self.at = self.at.ravel()

    @cached_property
    def bin_sums(self) -> sparse.csr_matrix:
        """Entry k adds (1, score, y) to its bin's (count, score sum, label sum): a sparse (entries × 3 bins) matrix,
        so a draw's bin sums are one product (a dense one-hot of a million entries would be 360 MB). Built for
        resamples only: one row of counts (an observed value) is a bincount."""
        n = self.score.size
        columns = (self.bins[:, None] + np.array([0, ECE_BINS, 2 * ECE_BINS])).ravel()
        values = np.column_stack([np.ones(n), self.score, self.y]).ravel()
        return sparse.csr_matrix((values, (np.repeat(np.arange(n), 3), columns)), shape=(n, 3 * ECE_BINS))

    @cached_property
    def into_scores(self) -> sparse.csr_matrix:
        """Entry k adds its rows to the positives (or negatives) at its distinct score: one sparse product gives a
        draw's positives and negatives per distinct score, in the scores' order."""
        n, u = self.score.size, self.distinct.size
        return sparse.csr_matrix((np.ones(n), (np.arange(n), self.at + u * (self.y == 0))), shape=(n, 2 * u))

    def metrics(self, counts: np.ndarray, wanted=METRICS) -> dict[str, np.ndarray]:
        """Each wanted metric for a (resamples × entries) matrix of row counts."""
        counts = counts.astype(float, copy=False)
        total = counts.sum(axis=1)
        safe = np.where(total > 0, total, 1)
        out = {}
        if "ece" in wanted:
            sums = self._bin_sums(counts)
            out["ece"] = ece_from_sums(sums[:, :ECE_BINS], sums[:, ECE_BINS:2 * ECE_BINS], sums[:, 2 * ECE_BINS:])
        if "log_loss" in wanted:
            out["log_loss"] = counts @ self.log_loss / safe
        if "brier" in wanted:
            out["brier"] = counts @ self.brier / safe
        if "auroc" in wanted:
            out["auroc"] = self._auroc(counts)
        return out

    def _bin_sums(self, counts: np.ndarray) -> np.ndarray:
        if counts.shape[0] > 1:
            return np.asarray(counts @ self.bin_sums)
        c = counts[0]
        return np.concatenate([np.bincount(self.bins, weights=w, minlength=ECE_BINS)
                               for w in (c, c * self.score, c * self.y)])[None, :]

    def _auroc(self, counts: np.ndarray) -> np.ndarray:
        u = self.distinct.size
        if counts.shape[0] > 1:
            both = np.asarray(counts @ self.into_scores)
            pos, neg = both[:, :u], both[:, u:]
        else:
            c = counts[0]
            pos = np.bincount(self.at, weights=c * self.y, minlength=u)[None, :]
            neg = np.bincount(self.at, weights=c * (1 - self.y), minlength=u)[None, :]
        below = np.cumsum(neg, axis=1) - neg
        P, N = pos.sum(axis=1), neg.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where((P > 0) & (N > 0), (pos * (below + 0.5 * neg)).sum(axis=1) / (P * N), np.nan)


@dataclass(frozen=True)
class PairedSamples:
    """One statistic of both models on the same entries: the observed values, the paired bootstrap's differences
    (a − b, one resample of the entries feeding both models) and the permutation null's (scores swapped within
    entries)."""
    value_a: float
    value_b: float
    bootstrap: np.ndarray
    null: np.ndarray

    @property
    def difference(self) -> float:
        return self.value_a - self.value_b

    def interval(self, level: float = 0.95) -> stats.Interval:
        return stats.basic_interval(self.bootstrap, self.difference, level)

    def p_value(self) -> float:
        return stats.permutation_p_value(abs(self.difference), np.abs(self.null)) if self.null.size else float("nan")


Statistic = Callable[[np.ndarray, np.ndarray, np.ndarray], Callable[[np.ndarray], dict]]


def paired_statistics(statistic: Statistic, score_a, score_b, weight=None, resamples: int = 1000,
                      permutations: int = 1000, seed: int = 0, tested: Statistic | None = None,
                      progress: Callable[[float], None] | None = None) -> dict[str, PairedSamples]:
    """Any statistics of two models on the same entries, paired: ``statistic(index, score, model)`` returns a function
    of a (resamples × len(index)) matrix of row counts giving ``{name: values}``, for sub-entries that copy entry
    ``index[k]``'s label and groups with the score ``score[k]`` of model ``model[k]`` (0: a, 1: b). The bootstrap calls it on the entries themselves
    (``index`` = 0…K−1); the permutation test on 2K sub-entries (each entry's rows split between its two scores), with
    ``tested`` instead when given (the statistics that need a permutation test: AUROC has DeLong's).
    ``progress(fraction done)`` is called after each block (a Stop raised there keeps nothing)."""
    a, b = np.asarray(score_a, float), np.asarray(score_b, float)
    counts = np.ones(a.size, np.int64) if weight is None else np.asarray(weight).astype(np.int64)
    own, first = np.arange(a.size), np.zeros(a.size, np.int8)
    model_a, model_b = statistic(own, a, first), statistic(own, b, first + 1)
    observed_a, observed_b = model_a(counts[None, :]), model_b(counts[None, :])
    boot_rng, perm_rng = np.random.default_rng(seed).spawn(2)
    diffs = {k: [] for k in observed_a}
    total, done, swapped = max(resamples + permutations, 1), [0], [0]
    tell = progress or (lambda _: None)
    stop = threading.Event()
    # the permutation test runs on the second core beside the bootstrap (numpy's generators, sparse products and
    # array loops release the GIL); this thread keeps the progress and Stop
    with ThreadPoolExecutor(max_workers=1) as pool:
        null_job = pool.submit(_permutation_null, tested or statistic, a, b, counts, permutations, perm_rng,
                               lambda k: swapped.__setitem__(0, k), stop) if stats.WORKERS > 1 else None
        try:
            for size in _blocks(resamples, a.size):
                drawn = stats.bootstrap_counts(counts, size, boot_rng)
                ma, mb = model_a(drawn), model_b(drawn)
                for k in diffs:
                    diffs[k].append(ma[k] - mb[k])
                done[0] += size
                tell((done[0] + swapped[0]) / total)
            if null_job is None:
                null = _permutation_null(tested or statistic, a, b, counts, permutations, perm_rng,
                                         lambda k: tell((resamples + k) / total), stop)
            else:
                while not wait([null_job], timeout=0.5).done:
                    tell((done[0] + swapped[0]) / total)
                null = null_job.result()
        except BaseException:
            stop.set()                  # a Stop: the permutations end at their next block
            raise
    return {k: PairedSamples(float(observed_a[k][0]), float(observed_b[k][0]),
                             np.concatenate(diffs[k]) if diffs[k] else np.empty(0), null.get(k, np.empty(0)))
            for k in observed_a}


def metric_statistic(y, metrics=METRICS) -> Statistic:
    """ECE, log-loss, Brier and AUROC as a ``paired_statistics`` statistic."""
    y = np.asarray(y, float)

    def make(index, score, model):
        entries = _Entries(y[index], score)
        return lambda counts: entries.metrics(counts, metrics)
    return make


def paired_differences(y, score_a, score_b, weight=None, resamples: int = 1000, permutations: int = 1000,
                       seed: int = 0, level: float = 0.95, metrics=METRICS) -> dict[str, PairedDifference]:
    y = np.asarray(y, float)
    a, b = np.asarray(score_a, float), np.asarray(score_b, float)
    counts = np.ones(y.size, np.int64) if weight is None else np.asarray(weight).astype(np.int64)
    permuted = tuple(m for m in metrics if m != "auroc")
    samples = paired_statistics(metric_statistic(y, metrics), a, b, counts, resamples, permutations, seed,
                                tested=metric_statistic(y, permuted) if permuted else None)
    return metric_differences(samples, y, a, b, counts, permutations, level, metrics)


def metric_differences(samples: dict[str, PairedSamples], y, a, b, counts, permutations: int, level: float = 0.95,
                       metrics=METRICS) -> dict[str, PairedDifference]:
    """``PairedDifference`` of each metric from its paired samples (``metric_statistic``'s), with DeLong's test for
    AUROC on the entries themselves."""
    both = 0 < (counts * y).sum() < counts.sum()
    delong = delong_paired(y, a, b, counts) if "auroc" in metrics and both else None
    out = {}
    for m in metrics:
        s = samples[m]
        interval = s.interval(level)
        if m == "auroc":       # the standard test of two correlated AUROCs; swapping scores mixes their scales
            p = delong.p_value if delong else float("nan")
            out[m] = PairedDifference(m, s.value_a, s.value_b, s.difference, interval, p,
                                      "DeLong's test (paired)", delong.ci if delong else None)
            continue
        out[m] = PairedDifference(m, s.value_a, s.value_b, s.difference, interval, s.p_value(),
                                  f"paired permutation test ({permutations:,} swaps within rows)")
    return out


def family_statistic(parts: list[tuple[str, np.ndarray | None, Statistic]]) -> Statistic:
    """Several statistics as one, each on a subset of the entries (``(prefix, mask or None, statistic)``; keys come
    out as ``prefix + key``), so that one draw per block resamples them all: a family costs one bootstrap and one
    permutation draw, not one per member. Restricting a draw to a subset is that subset's own resample — the Poisson
    bootstrap and the within-entry swaps draw every entry independently; a multinomial resample (small data) lets
    the subset's size vary, as an unstratified bootstrap does."""
    def make(index: np.ndarray, score: np.ndarray, model: np.ndarray):
        members = []
        for prefix, mask, statistic in parts:
            keep = None if mask is None else np.flatnonzero(mask[index])
            members.append((prefix, keep, statistic(index, score, model) if keep is None
                            else statistic(index[keep], score[keep], model[keep])))

        def compute(counts: np.ndarray) -> dict[str, np.ndarray]:
            counts = counts.astype(float, copy=False)           # once for every member
            out = {}
            for prefix, keep, member in members:
                found = member(counts if keep is None else counts[:, keep])
                out.update({prefix + key: value for key, value in found.items()})
            return out
        return compute
    return make


def _blocks(total: int, entries: int = 0):
    """Block sizes adding up to ``total``: ``BLOCK`` resamples, fewer when the entries are many."""
    block = max(1, min(BLOCK, BLOCK_CELLS // max(entries, 1)))
    while total > 0:
        yield min(block, total)
        total -= block


def _permutation_null(statistic: Statistic, a, b, counts, permutations: int, rng, progress: Callable[[int], None],
                      stop: threading.Event) -> dict[str, np.ndarray]:
    """Differences under the null: in each entry of c rows, Binomial(c, ½) rows have their two scores swapped. The
    two sides are laid out as 2K sub-entries (score a, score b) with counts (c − k, k) and (k, c − k)."""
    if permutations <= 0:                  # the statistics on 2K sub-entries cost as much as the test: skip both
        return {}
    index = np.concatenate([np.arange(a.size), np.arange(a.size)])
    first, second = np.zeros(a.size, np.int8), np.ones(a.size, np.int8)
    side_a = statistic(index, np.concatenate([a, b]), np.concatenate([first, second]))
    side_b = statistic(index, np.concatenate([b, a]), np.concatenate([second, first]))
    null, done = {}, 0
    for size in _blocks(permutations, 2 * counts.size):
        if stop.is_set():
            return {}
        swapped = rng.binomial(counts, 0.5, size=(size, counts.size))
        layout = np.concatenate([counts - swapped, swapped], axis=1)
        ma, mb = side_a(layout), side_b(layout)
        for k in ma:
            null.setdefault(k, []).append(ma[k] - mb[k])
        done += size
        progress(done)
    return {k: np.concatenate(v) for k, v in null.items()}


def unpaired_interval(y, score_a, score_b, metric: str, weight=None, resamples: int = 1000, seed: int = 0,
                      level: float = 0.95) -> stats.Interval:
    """The interval a comparison of two separate audits would give: each model resampled on its own."""
    y = np.asarray(y, float)
    counts = np.ones(y.size, np.int64) if weight is None else np.asarray(weight).astype(np.int64)
    rng_a, rng_b = np.random.default_rng(seed).spawn(2)
    model_a, model_b = _Entries(y, np.asarray(score_a, float)), _Entries(y, np.asarray(score_b, float))
    diffs, wanted = [], (metric,)
    for size in _blocks(resamples):
        diffs.append(model_a.metrics(stats.bootstrap_counts(counts, size, rng_a), wanted)[metric]
                     - model_b.metrics(stats.bootstrap_counts(counts, size, rng_b), wanted)[metric])
    observed = float(model_a.metrics(counts[None, :], wanted)[metric][0]
                     - model_b.metrics(counts[None, :], wanted)[metric][0])
    return stats.basic_interval(np.concatenate(diffs), observed, level)
