"""Predictive bias and calibration (seed 001): reliability diagrams, calibration errors, calibration tests,
subgroup performance with uncertainty, per group and overall.

``analyse(predictions, attribute, params)`` is the one entry point of the page and the CLI. It returns a
``CalibrationAudit`` of small frozen dataclasses (no figures); ``fairviz.calibration.figures`` draws them.
Recalibration (§5) lives in ``calibration.recalibration`` and residual analysis over features (§3) in
``calibration.feature_residuals``; both reuse the building blocks of this folder:
``results`` (settings and result types), ``reliability`` (bins and intervals), ``logistic`` (the calibration tests),
``smooth_ece``, ``performance`` and ``readings`` (the tests in words).

How it stays fast on millions of rows: every statistic here depends on the rows only through counts.
- The logistic calibration models depend on the rows through (logit p̂, y): rows are aggregated on the
  distinct values of logit p̂ (exact when there are at most ``GLM_SUPPORT`` of them, else snapped to a uniform
  grid of that many points, and the result says so), then fitted as binomial GLMs on those counts.
- The smooth calibration error, the ECE resamples and the performance resamples depend on the rows through
  (cell of p̂, y) with ``CELLS`` equal cells on [0, 1]; a bootstrap resample is a multinomial count vector.

Conventions: "slope" is β₁, the coefficient on logit p̂ when logit p̂ is also an offset (0 when calibrated;
the calibration slope is 1 + β₁); an ordered pair (i, j) means "i minus j".
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from fairviz.calibration.logistic import (
    LogitCounts,
    group_difference_test,
    linear_bias_test,
    logit_counts,
    smooth_curve,
    spline_bias_test,
    spline_fit,
)
from fairviz.calibration.performance import auroc_from_counts, brier, log_loss
from fairviz.calibration.reliability import clip_scores, reliability_from_sums, reliability_table
from fairviz.calibration.results import (
    CELLS,
    EPS,
    GLM_SUPPORT,
    OVERALL,
    CalibrationAudit,
    CalibrationParams,
    GroupCalibration,
    PairGap,
    Performance,
    Progress,
)
from fairviz.calibration.smooth_ece import _cell_index, smooth_ece_from_masses
from fairviz.core import stats
from fairviz.core.data import Predictions
from fairviz.core.ece import ece, ece_bin_index, ece_resamples, group_seed


@dataclass
class _Cells:
    """Per group and outcome: counts, score sums, log-loss and squared-error sums over CELLS cells of p̂."""
    counts: np.ndarray          # (G, 2, M) int
    score_sum: np.ndarray       # (G, 2, M)
    loss_sum: np.ndarray        # (G, 2, M)  Σ −log p̂ (y = 1) or −log(1 − p̂) (y = 0), p̂ clipped
    sq_sum: np.ndarray          # (G, 2, M)
    boot: dict = field(default_factory=dict)

    def resample(self, g: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
        """(B, 2, M) row-bootstrap counts of group g (its size kept)."""
        if g not in self.boot:
            flat = self.counts[g].reshape(-1)
            self.boot[g] = stats.bootstrap_counts(flat, resamples, rng).reshape(resamples, 2, -1)
        return self.boot[g]


def _cells(score: np.ndarray, y: np.ndarray, codes: np.ndarray, n_groups: int, cells: int = CELLS,
           weights: np.ndarray | None = None) -> _Cells:
    cell = _cell_index(score, cells)
    flat = (codes.astype(np.int64) * 2 + y.astype(np.int64)) * cells + cell
    size = n_groups * 2 * cells
    p = np.clip(score, EPS, 1 - EPS)
    loss = np.where(y == 1, -np.log(p), -np.log1p(-p))
    shape = (n_groups, 2, cells)
    w = 1 if weights is None else weights             # weighted data: entry k stands for weights[k] rows
    counts = np.bincount(flat, minlength=size) if weights is None else \
        np.bincount(flat, weights=weights, minlength=size).round().astype(np.int64)
    return _Cells(counts.reshape(shape),
                  np.bincount(flat, weights=score * w, minlength=size).reshape(shape),
                  np.bincount(flat, weights=loss * w, minlength=size).reshape(shape),
                  np.bincount(flat, weights=(score - y) ** 2 * w, minlength=size).reshape(shape))


def analyse(pred: Predictions, attribute: str | None = None, params: CalibrationParams = CalibrationParams(),
            progress: Progress | None = None) -> CalibrationAudit:
    report = progress or (lambda *_: None)
    view = pred.groups(attribute)
    names = list(view.names)
    n_groups = len(names)
    score, y, codes, w = pred.score, pred.y, view.codes, pred.weight     # w: rows per entry (weighted data) or None
    notes: list[str] = []

    report(0.05, "Binning and aggregating")
    clipped, n_clipped = clip_scores(score, weights=w)
    changed = clipped != score
    clipped_by_group = np.bincount(codes[changed], weights=None if w is None else w[changed],
                                   minlength=n_groups).astype(np.int64)
    if n_clipped:
        notes.append(f"{n_clipped:,} rows have a score of exactly 0 or 1 (or within {EPS:g} of it): logit(p̂) is "
                     f"undefined there, so they were clipped to [{EPS:g}, 1 − {EPS:g}] for the logistic tests, the "
                     "smooth curve and the log-loss. Bins, ECE and Brier use the scores as given.")
    tables = _reliability_tables(score, y, codes, n_groups, params, w)
    lc = logit_counts(score, y, codes, n_groups, weights=w)
    if lc.step:
        notes.append(f"More than {GLM_SUPPORT:,} distinct scores: the logistic tests ran on logit(p̂) rounded to a grid "
                     f"of step {lc.step:.4f} (a negligible change at this sample size).")
    cells = _cells(score, y, codes, n_groups, weights=w)
    distinct, ranks = np.unique(score, return_inverse=True)

    rng = np.random.default_rng(params.seed)
    # ECE resamples: one computation per rows and settings, shared with the residual page (core.ece)
    ece_boot = [ece_resamples(score[codes == g], y[codes == g], params.resamples, group_seed(params.seed, name),
                              key=(pred.fingerprint, view.attribute, name),
                              weights=None if w is None else w[codes == g]) for g, name in enumerate(names)]
    ece_boot.append(ece_resamples(score, y, params.resamples, params.seed, key=(pred.fingerprint, "all rows"),
                                  weights=w))
    results = []
    for g, name in enumerate(names):
        report(0.1 + 0.75 * g / n_groups, f"Group {name}")
        mask = codes == g
        results.append(_group_result(name, g, score[mask], y[mask], ranks[mask], distinct.size, lc, cells,
                                     tables, int(clipped_by_group[g]), params, rng, ece_boot[g],
                                     None if w is None else w[mask]))
        cells.boot.pop(g, None)     # its (B, 2, M) counts: the pair gaps read the cached smooth-ECE resamples
    report(0.85, "All rows")
    overall = _group_result(OVERALL, None, score, y, ranks, distinct.size, lc, cells, tables, n_clipped, params, rng,
                            ece_boot[-1], w)

    report(0.9, "Comparing groups")
    joint_adj = stats.benjamini_hochberg([r.linear.joint.p if r.linear.ok else np.nan for r in results])
    nonlin_adj = stats.benjamini_hochberg([r.spline.vs_linear.p if r.spline.ok and r.spline.vs_linear else np.nan
                                           for r in results])
    results = [_with_adjusted(r, a, b) for r, a, b in zip(results, joint_adj, nonlin_adj)]
    pairs = [_pair_gap(results[i], results[j], cells, i, j, params, rng, ece_boot)
             for i, j in pred.limits.pair_indices(n_groups)]
    if note := pred.limits.pair_note(view.attribute, n_groups):
        notes.append(note)
    difference = group_difference_test(lc, names, params.min_events)
    for r in results:
        if not r.linear.ok:
            notes.append(f"Group '{r.name}': {r.linear.status}; its tests are not reported.")
        if r.performance.status:
            notes.append(f"Group '{r.name}': {r.performance.status}.")
    report(1.0, "Done")
    return CalibrationAudit(view.attribute, params, results, overall, pairs, difference, n_clipped, tuple(notes))


def _with_adjusted(r: GroupCalibration, joint: float, nonlinear: float) -> GroupCalibration:
    return replace(r, joint_p_adjusted=float(joint), nonlinear_p_adjusted=float(nonlinear))


def _reliability_tables(score, y, codes, n_groups, params: CalibrationParams, w=None) -> dict:
    """strategy → list of tables (one per group, then overall). Equal-width bins in one bincount pass."""
    out = {}
    k = params.n_bins
    edges = np.round(np.linspace(0.0, 1.0, k + 1), 12)
    flat = codes.astype(np.int64) * k + ece_bin_index(score, k)
    ones = 1 if w is None else w
    n = np.bincount(flat, minlength=n_groups * k).reshape(n_groups, k) if w is None else \
        np.bincount(flat, weights=w, minlength=n_groups * k).reshape(n_groups, k).round().astype(np.int64)
    n_pos = np.bincount(flat, weights=y * ones, minlength=n_groups * k).reshape(n_groups, k).round().astype(np.int64)
    sums = np.bincount(flat, weights=score * ones, minlength=n_groups * k).reshape(n_groups, k)
    uniform = [reliability_from_sums(edges[:-1], edges[1:], n[g], n_pos[g], sums[g], params.level,
                                     params.ci_method, "uniform") for g in range(n_groups)]
    uniform.append(reliability_from_sums(edges[:-1], edges[1:], n.sum(0), n_pos.sum(0), sums.sum(0), params.level,
                                         params.ci_method, "uniform"))
    out["uniform"] = uniform
    quantile = []
    for g in [*range(n_groups), None]:
        mask = slice(None) if g is None else codes == g
        quantile.append(reliability_table(y[mask], score[mask], k, "quantile", params.level, params.ci_method,
                                          None if w is None else w[mask]))
    out["quantile"] = quantile
    return out


def _group_result(name, g, score, y, ranks, n_distinct, lc: LogitCounts, cells: _Cells, tables, n_clipped,
                  params: CalibrationParams, rng, ece_boot: np.ndarray, w=None) -> GroupCalibration:
    index = -1 if g is None else g
    gamma, n, s = lc.group(g)
    linear = linear_bias_test(gamma, n, s, params.min_events)
    fitted = spline_fit(gamma, n, s, params.spline_knots, params.min_events)
    spline = spline_bias_test(gamma, n, s, params.spline_knots, params.min_events, linear, fitted)
    curve = smooth_curve(fitted[0], fitted[1], gamma, n, fitted[2], params.level)

    boot = _boot_counts(g, cells, params, rng)                 # (B, 2, M)
    ece_value = ece(score, y, weights=w)
    rows = int(y.size) if w is None else int(w.sum())
    residual = np.bincount(_cell_index(score), weights=(y - score) * (1 if w is None else w), minlength=CELLS)
    sm_value, sm_sigma = smooth_ece_from_masses(residual, rows)
    sm_boot = _smooth_resamples(cells, g, boot, float(sm_sigma[0]))
    performance = _performance(y, score, ranks, n_distinct, boot, cells, g, params, w)
    return GroupCalibration(
        name=name, n=rows, n_pos=int(y.sum()) if w is None else int((y * w).sum()),
        mean_score=float(np.average(score, weights=w)), observed_rate=float(np.average(y, weights=w)),
        n_clipped=n_clipped, reliability={k: v[index] for k, v in tables.items()},
        ece=ece_value, ece_ci=_interval(ece_boot, params.level),
        smooth_ece=float(sm_value[0]), smooth_ece_ci=_interval(sm_boot, params.level),
        smooth_sigma=float(sm_sigma[0]), linear=linear, spline=spline, curve=curve, performance=performance)


def _boot_counts(g, cells: _Cells, params: CalibrationParams, rng) -> np.ndarray:
    """A group's row resamples; the overall ones resample all rows together (App. B resamples rows, not groups)."""
    if params.resamples <= 0:
        return np.zeros((0, 2, CELLS), dtype=np.int64)
    if g is None:
        pooled = cells.counts.sum(0).reshape(-1)
        return stats.bootstrap_counts(pooled, params.resamples, rng).reshape(params.resamples, 2, -1)
    return cells.resample(g, params.resamples, rng)


def _interval(samples: np.ndarray, level: float) -> stats.Interval:
    """The one interval convention (percentile bootstrap); NaN bounds without resamples."""
    if samples.size == 0:
        return stats.Interval(np.nan, np.nan, level, 0)
    return stats.percentile_interval(samples, level)


def _smooth_resamples(cells: _Cells, g, boot: np.ndarray, sigma: float) -> np.ndarray:
    """Smooth ECE of a group's resamples (cached: the pair gaps reuse them)."""
    key = ("smooth", g)
    if key not in cells.boot:
        cells.boot[key] = _smooth_ece_of_counts(boot, _cell_means(cells, g), sigma)
    return cells.boot[key]


def _cell_means(cells: _Cells, g) -> np.ndarray:
    counts = cells.counts.sum(1) if g is not None else cells.counts.sum((0, 1))
    sums = cells.score_sum.sum(1) if g is not None else cells.score_sum.sum((0, 1))
    if g is not None:
        counts, sums = counts[g], sums[g]
    centres = (np.arange(CELLS) + 0.5) / CELLS
    return np.where(counts > 0, sums / np.maximum(counts, 1), centres)


def _smooth_ece_of_counts(boot: np.ndarray, means: np.ndarray, near: float | None = None,
                          chunk: int = 250) -> np.ndarray:
    if boot.shape[0] == 0:
        return np.empty(0)
    out = []
    for start in range(0, boot.shape[0], chunk):                # bounded memory on any number of resamples
        part = boot[start:start + chunk]
        residual = part[:, 1] - part.sum(1) * means              # Σ(y − p̂) with p̂ at its cell's mean
        out.append(smooth_ece_from_masses(residual, part.sum((1, 2)), near=near)[0])
    return np.concatenate(out)


def _performance(y, score, ranks, n_distinct, boot, cells: _Cells, g, params: CalibrationParams,
                 w=None) -> Performance:
    n_pos = int(y.sum()) if w is None else int((y * w).sum())
    n_neg = int(y.size - n_pos) if w is None else int(w.sum() - n_pos)
    neg = np.bincount(ranks[y == 0], weights=None if w is None else w[y == 0], minlength=n_distinct)
    pos = np.bincount(ranks[y == 1], weights=None if w is None else w[y == 1], minlength=n_distinct)
    auc = float(auroc_from_counts(neg, pos)[0])
    ll, br = log_loss(y, score, w), brier(y, score, w)
    level = params.level
    if boot.shape[0]:
        counts = cells.counts.sum(0) if g is None else cells.counts[g]
        loss = cells.loss_sum.sum(0) if g is None else cells.loss_sum[g]
        sq = cells.sq_sum.sum(0) if g is None else cells.sq_sum[g]
        used = np.flatnonzero(counts.any(0))                   # empty cells add nothing
        boot, counts, loss, sq = boot[:, :, used], counts[:, used], loss[:, used], sq[:, used]
        per_loss = loss / np.maximum(counts, 1)
        per_sq = sq / np.maximum(counts, 1)
        total = boot.sum((1, 2))
        auc_boot = auroc_from_counts(boot[:, 0], boot[:, 1])
        ll_boot = (boot * per_loss).sum((1, 2)) / total
        br_boot = (boot * per_sq).sum((1, 2)) / total
        intervals = [stats.percentile_interval(v, level) for v in (auc_boot, ll_boot, br_boot)]
    else:
        intervals = [stats.Interval(np.nan, np.nan, level)] * 3
    status = ""
    if min(n_pos, n_neg) < 5:
        status = f"insufficient data ({n_pos} positive, {n_neg} negative rows): the estimates are very noisy"
    return Performance(auc, intervals[0], ll, intervals[1], br, intervals[2], status)


def _pair_gap(a: GroupCalibration, b: GroupCalibration, cells: _Cells, i: int, j: int,
              params: CalibrationParams, rng, ece_boot: list) -> PairGap:
    level = params.level
    if params.resamples <= 0:
        none = stats.Interval(np.nan, np.nan, level)
        return PairGap(a.name, b.name, a.ece - b.ece, none, a.smooth_ece - b.smooth_ece, none)
    sm_i = cells.boot[("smooth", i)]            # computed with each group's result
    sm_j = cells.boot[("smooth", j)]
    return PairGap(a.name, b.name, a.ece - b.ece, stats.percentile_interval(ece_boot[i] - ece_boot[j], level),
                   a.smooth_ece - b.smooth_ece, stats.percentile_interval(sm_i - sm_j, level))
