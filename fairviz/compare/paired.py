"""Two models on the same rows: each metric's difference with a *paired* interval and test.

Paired means one resample of rows feeds both models (the bootstrap), and the test swaps the two models' scores
within rows (a paired permutation test: under "no difference" the models are exchangeable row by row). The rows'
correlation between the models then cancels in the difference, so the interval is narrower than two independent
intervals and still covers the truth. Entries may stand for several identical rows (``weight``: the engine's counts);
every resample and permutation works on those counts, never on expanded rows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

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
        onehot = np.zeros((score.size, ECE_BINS))
        onehot[np.arange(score.size), self.bins] = 1.0
        self.bin_sums = np.hstack([onehot, onehot * score[:, None], onehot * y[:, None]])   # one product per draw
        self.order = np.argsort(score, kind="stable")
        s = score[self.order]
        self.starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])

    def metrics(self, counts: np.ndarray, wanted=METRICS) -> dict[str, np.ndarray]:
        """Each wanted metric for a (resamples × entries) matrix of row counts."""
        counts = counts.astype(float, copy=False)
        total = counts.sum(axis=1)
        safe = np.where(total > 0, total, 1)
        out = {}
        if "ece" in wanted:
            sums = counts @ self.bin_sums
            out["ece"] = ece_from_sums(sums[:, :ECE_BINS], sums[:, ECE_BINS:2 * ECE_BINS], sums[:, 2 * ECE_BINS:])
        if "log_loss" in wanted:
            out["log_loss"] = counts @ self.log_loss / safe
        if "brier" in wanted:
            out["brier"] = counts @ self.brier / safe
        if "auroc" in wanted:
            out["auroc"] = self._auroc(counts)
        return out

    def _auroc(self, counts: np.ndarray) -> np.ndarray:
        c = counts[:, self.order]
        y = self.y[self.order]
        pos = np.add.reduceat(c * y, self.starts, axis=1)
        neg = np.add.reduceat(c * (1 - y), self.starts, axis=1)
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
                      permutations: int = 1000, seed: int = 0, tested: Statistic | None = None) -> dict[str, PairedSamples]:
    """Any statistics of two models on the same entries, paired: ``statistic(index, score, model)`` returns a function
    of a (resamples × len(index)) matrix of row counts giving ``{name: values}``, for sub-entries that copy entry
    ``index[k]``'s label and groups with the score ``score[k]`` of model ``model[k]`` (0: a, 1: b). The bootstrap calls it on the entries themselves
    (``index`` = 0…K−1); the permutation test on 2K sub-entries (each entry's rows split between its two scores), with
    ``tested`` instead when given (the statistics that need a permutation test: AUROC has DeLong's)."""
    a, b = np.asarray(score_a, float), np.asarray(score_b, float)
    counts = np.ones(a.size, np.int64) if weight is None else np.asarray(weight).astype(np.int64)
    own, first = np.arange(a.size), np.zeros(a.size, np.int8)
    model_a, model_b = statistic(own, a, first), statistic(own, b, first + 1)
    observed_a, observed_b = model_a(counts[None, :]), model_b(counts[None, :])
    boot_rng, perm_rng = np.random.default_rng(seed).spawn(2)
    diffs = {k: [] for k in observed_a}
    for size in _blocks(resamples, a.size):
        drawn = stats.bootstrap_counts(counts, size, boot_rng)
        ma, mb = model_a(drawn), model_b(drawn)
        for k in diffs:
            diffs[k].append(ma[k] - mb[k])
    null = _permutation_null(tested or statistic, a, b, counts, permutations, perm_rng)
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


def _blocks(total: int, entries: int = 0):
    """Block sizes adding up to ``total``: ``BLOCK`` resamples, fewer when the entries are many."""
    block = max(1, min(BLOCK, BLOCK_CELLS // max(entries, 1)))
    while total > 0:
        yield min(block, total)
        total -= block


def _permutation_null(statistic: Statistic, a, b, counts, permutations: int, rng) -> dict[str, np.ndarray]:
    """Differences under the null: in each entry of c rows, Binomial(c, ½) rows have their two scores swapped. The
    two sides are laid out as 2K sub-entries (score a, score b) with counts (c − k, k) and (k, c − k)."""
    if permutations <= 0:                  # the statistics on 2K sub-entries cost as much as the test: skip both
        return {}
    index = np.concatenate([np.arange(a.size), np.arange(a.size)])
    first, second = np.zeros(a.size, np.int8), np.ones(a.size, np.int8)
    side_a = statistic(index, np.concatenate([a, b]), np.concatenate([first, second]))
    side_b = statistic(index, np.concatenate([b, a]), np.concatenate([second, first]))
    null = {}
    for size in _blocks(permutations, 2 * counts.size):
        swapped = rng.binomial(counts, 0.5, size=(size, counts.size))
        layout = np.concatenate([counts - swapped, swapped], axis=1)
        ma, mb = side_a(layout), side_b(layout)
        for k in ma:
            null.setdefault(k, []).append(ma[k] - mb[k])
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
