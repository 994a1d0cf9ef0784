"""Predictive bias and calibration ([2]): reliability diagrams, calibration errors, calibration tests,
subgroup performance with uncertainty, per group and overall.

``analyse(predictions, attribute, params)`` is the one entry point of the page and the CLI. It returns a
``CalibrationAudit`` of small frozen dataclasses (no figures); ``fairviz.calibration.figures`` draws them.
Recalibration (§5) lives in ``calibration.recalibration`` and residual analysis over features (§3) in
``calibration.feature_residuals``; both reuse the building blocks of this folder:
``results`` (settings and result types), ``reliability`` (bins and intervals), ``logistic`` (the calibration tests),
``smooth_ece``, ``performance`` and ``readings`` (the tests in words).

How it stays fast on millions of rows: every statistic here depends on the rows only through counts.
- The logistic calibration models depend on the rows through (group, logit p̂, y): rows are aggregated on their
  distinct (group, score) pairs and fitted as binomial GLMs on those counts, which have the rows' likelihood: exact
  on the rows, and on the table's cells when the engine reduced the scores to cells (binned mode).
- Every interval of a group (ECE, smooth ECE, AUROC, log-loss, Brier) reads one bootstrap of its rows: counts over
  (p̂, y) cells (``core.ece.ScoreCells``: distinct scores, or ``CELLS`` equal cells of [0, 1] above 2,048 of them),
  drawn once per group (``core.stats.bootstrap_counts``); the ECE's are the values the residual audit reads.

Conventions: "slope" is β₁, the coefficient on logit p̂ when logit p̂ is also an offset (0 when calibrated;
the calibration slope is 1 + β₁); an ordered pair (i, j) means "i minus j".
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy import sparse

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
    OVERALL,
    CalibrationAudit,
    CalibrationParams,
    GroupCalibration,
    PairGap,
    Performance,
    Progress,
)
from fairviz.calibration.smooth_ece import smooth_ece, smooth_ece_at_points, smooth_ece_from_masses
from fairviz.core import stats
from fairviz.data import Predictions
from fairviz.core.ece import ece, ece_bin_index, group_seed, score_cells


class _Resamples:
    """One bootstrap of one set of rows (a group, or all rows), shared by every interval of its result: the ECE
    (the values ``core.ece.ece_resamples`` gives for the same rows and seed), the smooth ECE, AUROC, log-loss and
    Brier. The draws are dropped once read; the smooth-ECE values stay for the pair gaps."""

    def __init__(self, score, y, w, resamples: int, seed):
        self.cells = score_cells(score, y, w)
        self.draws = self.cells.draw(resamples, seed) if resamples > 0 else np.zeros((0, self.cells.counts.size))

    def by_label(self) -> np.ndarray:
        """(B, 2, CELLS): each resample's rows by label and equal cell of [0, 1] (summing the cells that share one)."""
        return self.per_cell(np.ones(self.cells.counts.size), self.cells.label * CELLS, 2 * CELLS).reshape(-1, 2, CELLS)

    def per_cell(self, values: np.ndarray, offset=0, size: int = CELLS, rows: slice = slice(None)) -> np.ndarray:
        """(B, size): Σ over each resample's rows of a per-cell value, by equal cell of [0, 1] (+ ``offset``)."""
        c = self.cells
        spread = sparse.csr_matrix((values, (c.grid + offset, np.arange(values.size))), shape=(size, values.size))
        return np.asarray((spread @ self.draws[rows].T).T)


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
    distinct, ranks = np.unique(score, return_inverse=True)

    smooth_boot = {}                  # group → smooth-ECE resamples, for the pair gaps
    ece_boot = {}

    def result(g: int | None):
        """Group g's calibration, or all rows' (g None): all rows resample together ([1] App. B resamples rows, not
        groups), with the seed the residual audit's ECE uses."""
        if g is None:
            return _group_result(OVERALL, score, y, ranks, distinct.size, lc, None, tables, n_clipped, params,
                                 params.seed, w, smooth_boot, ece_boot)
        mask = codes == g
        return _group_result(names[g], score[mask], y[mask], ranks[mask], distinct.size, lc, g, tables,
                             int(clipped_by_group[g]), params, group_seed(params.seed, names[g]),
                             None if w is None else w[mask], smooth_boot, ece_boot)

    # the groups are independent: on all cores at once (each writes only its own key of the two dicts)
    *results, overall = stats.in_parallel(result, [*range(n_groups), None],
                                          lambda f: report(0.1 + 0.8 * f, "Groups and all rows"))

    report(0.9, "Comparing groups")
    joint_adj = stats.benjamini_hochberg([r.linear.joint.p if r.linear.ok else np.nan for r in results])
    nonlin_adj = stats.benjamini_hochberg([r.spline.vs_linear.p if r.spline.ok and r.spline.vs_linear else np.nan
                                           for r in results])
    results = [_with_adjusted(r, a, b) for r, a, b in zip(results, joint_adj, nonlin_adj)]
    pairs = [_pair_gap(results[i], results[j], i, j, params, ece_boot, smooth_boot)
             for i, j in pred.limits.pair_indices(n_groups)]
    if note := pred.limits.pair_note(view.attribute, n_groups):
        notes.append(note)
    difference = group_difference_test(lc, names, params.min_events, [r.linear for r in results], overall.linear)
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


def _group_result(name, score, y, ranks, n_distinct, lc: LogitCounts, g, tables, n_clipped,
                  params: CalibrationParams, seed, w, smooth_boot: dict, ece_boot: dict) -> GroupCalibration:
    """One group's calibration (``g`` None: all rows); its resamples land in ``smooth_boot``/``ece_boot`` under g."""
    index = -1 if g is None else g
    gamma, n, s = lc.group(g)
    linear = linear_bias_test(gamma, n, s, params.min_events)
    fitted = spline_fit(gamma, n, s, params.spline_knots, params.min_events)
    spline = spline_bias_test(gamma, n, s, params.spline_knots, params.min_events, linear, fitted)
    curve = smooth_curve(fitted[0], fitted[1], gamma, n, fitted[2], params.level)

    boot = _Resamples(score, y, w, params.resamples, seed)
    ece_value = ece(score, y, weights=w)
    rows = int(y.size) if w is None else int(w.sum())
    sm_value, sm_sigma = smooth_ece(y, score, w)
    ece_boot[g] = boot.cells.ece(boot.draws) if params.resamples > 0 else np.empty(0)
    smooth_boot[g] = _smooth_resamples(boot, score, sm_sigma)
    performance = _performance(y, score, ranks, n_distinct, boot, params, w)
    return GroupCalibration(
        name=name, n=rows, n_pos=int(y.sum()) if w is None else int((y * w).sum()),
        mean_score=float(np.average(score, weights=w)), observed_rate=float(np.average(y, weights=w)),
        n_clipped=n_clipped, reliability={k: v[index] for k, v in tables.items()},
        ece=ece_value, ece_ci=_interval(ece_boot[g], params.level),
        smooth_ece=sm_value, smooth_ece_ci=_interval(smooth_boot[g], params.level),
        smooth_sigma=sm_sigma, linear=linear, spline=spline, curve=curve, performance=performance)


def _interval(samples: np.ndarray, level: float) -> stats.Interval:
    """The one interval convention (percentile bootstrap); NaN bounds without resamples."""
    if samples.size == 0:
        return stats.Interval(np.nan, np.nan, level, 0)
    return stats.percentile_interval(samples, level)


def _smooth_resamples(boot: _Resamples, score: np.ndarray, sigma: float, chunk: int = 250) -> np.ndarray:
    """Smooth ECE of each resample, as the point estimate places its masses: Σ(y − p̂) at each distinct score when
    there are at most ``CELLS`` of them (the resampled cells are then the distinct scores), else per equal cell
    with every row at its cell's mean score."""
    if boot.draws.shape[0] == 0:
        return np.empty(0)
    c = boot.cells
    at_scores = np.unique(score).size <= min(CELLS, stats.MAX_SUPPORT)
    if at_scores:
        point = np.empty(c.counts.size)
        point[c.row_cell] = score                                  # a cell's rows share one score
        points, at = np.unique(point, return_inverse=True)
        spread = sparse.csr_matrix((c.label - point, (np.arange(point.size), at)), shape=(point.size, points.size))
    gap = c.label - c.mean_score
    out = []
    for start in range(0, boot.draws.shape[0], chunk):          # bounded memory on any number of resamples
        rows = slice(start, start + chunk)
        n = boot.draws[rows].sum(1)
        if at_scores:
            out.append(smooth_ece_at_points(points, np.asarray(spread.T @ boot.draws[rows].T).T, n, near=sigma)[0])
        else:
            out.append(smooth_ece_from_masses(boot.per_cell(gap, rows=rows), n, near=sigma)[0])
    return np.concatenate(out)


def _performance(y, score, ranks, n_distinct, boot: _Resamples, params: CalibrationParams, w=None) -> Performance:
    n_pos = int(y.sum()) if w is None else int((y * w).sum())
    n_neg = int(y.size - n_pos) if w is None else int(w.sum() - n_pos)
    neg = np.bincount(ranks[y == 0], weights=None if w is None else w[y == 0], minlength=n_distinct)
    pos = np.bincount(ranks[y == 1], weights=None if w is None else w[y == 1], minlength=n_distinct)
    auc = float(auroc_from_counts(neg, pos)[0])
    ll, br = log_loss(y, score, w), brier(y, score, w)
    level = params.level
    if boot.draws.shape[0]:
        c = boot.cells
        p = np.clip(score, EPS, 1 - EPS)
        loss = c.sums(np.where(y == 1, -np.log(p), -np.log1p(-p)), w) / np.maximum(c.counts, 1)
        sq = c.sums((score - y) ** 2, w) / np.maximum(c.counts, 1)
        draws = boot.draws.astype(float)
        total = draws.sum(1)
        by_label = boot.by_label()                                  # ties within an equal cell count ½
        auc_boot = auroc_from_counts(by_label[:, 0], by_label[:, 1])
        intervals = [stats.percentile_interval(v, level) for v in (auc_boot, draws @ loss / total, draws @ sq / total)]
    else:
        intervals = [stats.Interval(np.nan, np.nan, level)] * 3
    status = ""
    if min(n_pos, n_neg) < 5:
        status = f"insufficient data ({n_pos} positive, {n_neg} negative rows): the estimates are very noisy"
    return Performance(auc, intervals[0], ll, intervals[1], br, intervals[2], status)


def _pair_gap(a: GroupCalibration, b: GroupCalibration, i: int, j: int, params: CalibrationParams,
              ece_boot: dict, smooth_boot: dict) -> PairGap:
    level = params.level
    if params.resamples <= 0:
        none = stats.Interval(np.nan, np.nan, level)
        return PairGap(a.name, b.name, a.ece - b.ece, none, a.smooth_ece - b.smooth_ece, none)
    return PairGap(a.name, b.name, a.ece - b.ece, stats.percentile_interval(ece_boot[i] - ece_boot[j], level),
                   a.smooth_ece - b.smooth_ece, stats.percentile_interval(smooth_boot[i] - smooth_boot[j], level))
