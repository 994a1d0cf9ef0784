"""Bootstrap intervals of the RDF metrics ([1] §5, App. C): per-group resamples of counts over (outcome, residual)
cells, drawn once and shared by every pair; knees re-detected in resamples for F_h/F_v; the knee/non-knee ratio."""
from __future__ import annotations

import numpy as np

from fairviz.core import stats
from fairviz.residuals import readings
from fairviz.residuals.knees import curve_size, detect_knees_batch, quantiles_of_cumulative
from fairviz.residuals.metrics import STAB_EPS
from fairviz.residuals.results import RDFParams


class CountResampler:
    """Per-group bootstrap count vectors over (outcome, residual) cells, drawn once and shared by all pairs.

    Resampling is stratified by group (group sizes are kept up to the Poisson bootstrap's 1/√n, see
    ``core.stats.bootstrap_counts``), so pair statistics use independent resamples of each group, as a two-sample
    bootstrap does. Weighted entries add their rows to their cell. Each group and each pair's permutations have their
    own random stream (from the seed, the group and the pair), so they can be drawn on several cores and a group gets
    the same resamples whichever other groups are analysed.
    """

    def __init__(self, d, y, members, params: RDFParams, weight: np.ndarray | None = None, unit: str | None = None):
        """Binary (``unit`` None): cells over (outcome, residual), residuals on [−1, 1]. Regression (``unit`` the
        target's name): cells over the residual alone, on the data's own range [min D, max D]; there is no outcome
        to split by."""
        self.seed = params.seed
        self.resamples = params.resamples
        self.by_outcome = unit is None
        if self.by_outcome:
            self.compressed = stats.compress(d, -1.0, 1.0)
        else:
            self.compressed = stats.compress(d, float(d.min()), float(d.max())) if d.size else stats.compress(d, 0, 1)
        k = self.compressed.support.size
        self.counts = []
        for idx in members:
            cells = self.compressed.codes[idx].astype(np.int64)
            if self.by_outcome:
                cells = cells + k * y[idx].astype(np.int64)
            size = 2 * k if self.by_outcome else k
            self.counts.append(np.bincount(cells, minlength=size) if weight is None else
                               np.bincount(cells, weights=weight[idx], minlength=size).round().astype(np.int64))
        self._medians: dict[int, dict] = {}
        self._cumulative: dict[int, dict] = {}
        self.columns = {"all": slice(None)}
        if self.by_outcome:
            # the residuals of Y = 0 rows and of Y = 1 rows lie on opposite sides of 0: each outcome's CDFs are flat
            # outside the residual values its rows take in any group, so its resamples are kept (and W1 summed)
            # there only
            pooled = np.sum(self.counts, axis=0)
            for outcome, part in (("y0", pooled[:k]), ("y1", pooled[k:])):
                taken = np.flatnonzero(part)
                self.columns[outcome] = slice(int(taken[0]), int(taken[-1]) + 1) if taken.size else slice(0, 1)
        self.note = ""
        if self.compressed.step:
            self.note = readings.rounded_grid(self.compressed.step, stats.MAX_SUPPORT) if unit is None else \
                readings.rounded_grid_regression(self.compressed.step, stats.MAX_SUPPORT, unit)

    def draw(self, groups) -> None:
        """Draw the groups' resamples at once, on several cores."""
        stats.in_parallel(self.resampled, groups)

    def medians(self, g: int) -> dict:
        """Median residual of each resample of group g, for all rows and by outcome (computed once per group)."""
        if g not in self._medians:
            support = self.compressed.support
            self._medians[g] = {o: stats.median_of_cumulative(support[self.columns[o]], c)
                                for o, c in self.resampled(g).items()}
        return self._medians[g]

    def split(self, counts: np.ndarray) -> dict:
        """Cell counts (…, 2K) → counts over residual values for all rows, Y = 0 rows and Y = 1 rows."""
        if not self.by_outcome:
            return {"all": counts}
        k = self.compressed.support.size
        y0, y1 = counts[..., :k], counts[..., k:]
        return {"all": y0 + y1, "y0": y0, "y1": y1}

    def resampled(self, g: int) -> dict:
        """Group g's bootstrap resamples as cumulative counts over the residual values, for all rows and by outcome,
        drawn once per group (the knee curves, the medians and every pair's W1 read them)."""
        if g not in self._cumulative:
            boot = stats.bootstrap_counts(self.counts[g], self.resamples, np.random.default_rng([self.seed, 1, g]))
            # kept for every pair: each outcome only over its own residual values (``columns``), in 32 bits when
            # the resamples fit (a 20M-row audit holds 5 groups × 1,000 resamples of these)
            dtype = np.int32 if 2 * int(self.counts[g].sum()) < np.iinfo(np.int32).max else np.int64
            self._cumulative[g] = {o: np.cumsum(c[:, self.columns[o]], axis=-1, dtype=dtype)
                                   for o, c in self.split(boot).items()}
        return self._cumulative[g]


def distribution_intervals(resampler: CountResampler, i: int, j: int, span: float = 2.0) -> dict:
    """Bootstrap CIs of F_pattern and F_dist (all rows, and for a binary task Y = 0 and Y = 1) from the groups'
    resampled counts; ``span`` is the residual range F_pattern divides the median gap by."""
    support = resampler.compressed.support
    cum_i, cum_j = resampler.resampled(i), resampler.resampled(j)
    median_i, median_j = resampler.medians(i), resampler.medians(j)
    ci = {}
    for outcome, suffix in (("all", ""), ("y0", "_y0"), ("y1", "_y1")):
        if outcome not in cum_i:
            continue
        gap = np.abs(median_i[outcome] - median_j[outcome])
        ci[f"f_pattern{suffix}"] = stats.percentile_interval(1 - gap / span)
        cols = resampler.columns[outcome]            # the cumulative counts cover these residual values only
        ci[f"f_dist{suffix}"] = stats.percentile_interval(
            stats.wasserstein_of_cumulative(support[cols], cum_i[outcome], cum_j[outcome]))
    return ci


def knee_bootstrap(resampler: "CountResampler | None", g: int, params: RDFParams) -> np.ndarray | None:
    """Knees re-detected in the first ``knee_resamples`` bootstrap resamples of group g: (B, 4) or None.

    The resamples are the count vectors the other intervals use, so no resample is ever sorted."""
    b = min(params.knee_resamples, params.resamples)
    if resampler is None or b <= 0 or resampler.counts[g].sum() < params.knees.min_n:
        return None
    m = curve_size(int(resampler.counts[g].sum()), min(params.knees.max_points, params.knees.boot_points))
    curves = quantiles_of_cumulative(resampler.compressed.support, resampler.resampled(g)["all"][:b], m)
    return detect_knees_batch(curves, params.knees)


def knee_metric_intervals(boot_i, boot_j, pooled_knees) -> dict:
    """CIs of F_h and F_v from each group's re-detected knees. The pooled knees only normalise the gaps
    and are held at their full-sample values (re-detecting them per pair and resample would triple the cost)."""
    if boot_i is None or boot_j is None or any(k is None for k in pooled_knees):
        return {}
    ql, rl, qr, rr = (pooled_knees[0].percentile, pooled_knees[0].residual,
                      pooled_knees[1].percentile, pooled_knees[1].residual)
    fh = 0.5 * np.abs((boot_i[:, 0] - boot_j[:, 0]) / (ql + STAB_EPS)) + \
        0.5 * np.abs((boot_i[:, 2] - boot_j[:, 2]) / (qr + STAB_EPS))
    fv = 0.5 * np.abs((boot_i[:, 1] - boot_j[:, 1]) / (abs(rl) + STAB_EPS)) + \
        0.5 * np.abs((boot_i[:, 3] - boot_j[:, 3]) / (abs(rr) + STAB_EPS))
    return {"f_h": stats.percentile_interval(fh), "f_v": stats.percentile_interval(fv)}


def ratio_bootstrap(abs_d, knee_w, rest_w, resamples, rng,
                    high: float = 1.0) -> tuple[stats.Interval, stats.Interval, stats.Interval]:
    """Row bootstrap of the knee / non-knee mean |D| and their ratio, from counts over (region, |D|) cells
    (|D| on [0, ``high``]: 1 for a binary task, the largest |D| for a regression)."""
    comp = stats.compress(abs_d, 0.0, high)
    k = comp.support.size
    counts = np.concatenate([np.bincount(comp.codes, weights=rest_w * np.ones(abs_d.size), minlength=k),
                             np.bincount(comp.codes, weights=knee_w, minlength=k)]).round().astype(np.int64)
    boot = stats.bootstrap_counts(counts, resamples, rng)
    rest_counts, knee_counts = boot[:, :k], boot[:, k:]
    with np.errstate(invalid="ignore", divide="ignore"):
        knee_means = knee_counts @ comp.support / knee_counts.sum(1)
        rest_means = rest_counts @ comp.support / rest_counts.sum(1)
    return (stats.percentile_interval(knee_means / rest_means), stats.percentile_interval(knee_means),
            stats.percentile_interval(rest_means))
