"""Two models on the same rows: each metric's difference with a *paired* interval and test.

Paired means one resample of rows feeds both models (the bootstrap), and the test swaps the two models' scores
within rows (a paired permutation test: under "no difference" the models are exchangeable row by row). The rows'
correlation between the models then cancels in the difference, so the interval is narrower than two independent
intervals and still covers the truth. Entries may stand for several identical rows (``weight``: the engine's counts);
every resample and permutation works on those counts, never on expanded rows.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairviz.core import stats
from fairviz.core.delong import delong_paired
from fairviz.core.ece import ECE_BINS, ece_bin_index, ece_from_sums

METRICS = ("ece", "log_loss", "brier", "auroc")
METRIC_TITLES = {"ece": "ECE", "log_loss": "log-loss", "brier": "Brier score", "auroc": "AUROC"}
LOWER_IS_BETTER = {"ece": True, "log_loss": True, "brier": True, "auroc": False}
BLOCK = 100                       # resamples per block: (block × entries) counts at a time bound the memory
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


def paired_differences(y, score_a, score_b, weight=None, resamples: int = 1000, permutations: int = 1000,
                       seed: int = 0, level: float = 0.95, metrics=METRICS) -> dict[str, PairedDifference]:
    y = np.asarray(y, float)
    a, b = np.asarray(score_a, float), np.asarray(score_b, float)
    counts = np.ones(y.size, np.int64) if weight is None else np.asarray(weight).astype(np.int64)
    model_a, model_b = _Entries(y, a), _Entries(y, b)
    observed_a, observed_b = model_a.metrics(counts[None, :], metrics), model_b.metrics(counts[None, :], metrics)
    rng = np.random.default_rng(seed)
    boot_rng, perm_rng = rng.spawn(2)
    diffs = {m: [] for m in metrics}
    for size in _blocks(resamples):
        drawn = stats.bootstrap_counts(counts, size, boot_rng)
        ma, mb = model_a.metrics(drawn, metrics), model_b.metrics(drawn, metrics)
        for m in metrics:
            diffs[m].append(ma[m] - mb[m])
    null = _permutation_null(y, a, b, counts, permutations, perm_rng, metrics)
    both = 0 < (counts * y).sum() < counts.sum()
    delong = delong_paired(y, a, b, counts) if "auroc" in metrics and both else None
    out = {}
    for m in metrics:
        observed = float(observed_a[m][0] - observed_b[m][0])
        interval = stats.basic_interval(np.concatenate(diffs[m]), observed, level)
        if m == "auroc":       # the standard test of two correlated AUROCs; swapping scores mixes their scales
            p = delong.p_value if delong else float("nan")
            out[m] = PairedDifference(m, float(observed_a[m][0]), float(observed_b[m][0]), observed, interval, p,
                                      "DeLong's test (paired)", delong.ci if delong else None)
            continue
        p = stats.permutation_p_value(abs(observed), np.abs(null[m])) if null[m].size else float("nan")
        out[m] = PairedDifference(m, float(observed_a[m][0]), float(observed_b[m][0]), observed, interval, p,
                                  f"paired permutation test ({permutations:,} swaps within rows)")
    return out


def _blocks(total: int):
    while total > 0:
        yield min(BLOCK, total)
        total -= BLOCK


def _permutation_null(y, a, b, counts, permutations: int, rng, metrics=METRICS) -> dict[str, np.ndarray]:
    """Differences under the null: in each entry of c rows, Binomial(c, ½) rows have their two scores swapped. The
    two sides are laid out as 2K sub-entries (score a, score b) with counts (c − k, k) and (k, c − k)."""
    y2 = np.concatenate([y, y])
    side_a, side_b = _Entries(y2, np.concatenate([a, b])), _Entries(y2, np.concatenate([b, a]))
    null = {m: [] for m in metrics}
    for size in _blocks(permutations):
        swapped = rng.binomial(counts, 0.5, size=(size, counts.size))
        layout = np.concatenate([counts - swapped, swapped], axis=1)
        ma, mb = side_a.metrics(layout, metrics), side_b.metrics(layout, metrics)
        for m in metrics:
            null[m].append(ma[m] - mb[m])
    return {m: np.concatenate(v) if v else np.empty(0) for m, v in null.items()}


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
