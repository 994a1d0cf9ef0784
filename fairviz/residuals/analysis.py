"""Residual Distribution Fairness ([1]): ``analyse`` is the one entry point of the page, the report and the CLI.

It sorts every group's residuals once (``curves``), finds their knees (``knees``) and knee regions (``regions``),
draws the resamples once (``resampling``, ``nulls``) and compares each pair (``metrics``). It returns a
``ResidualAudit`` (``results``); ``at_threshold`` attaches the rates at one τ ([1] Theorem 6.1), which the curves do
not depend on.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from fairviz.core import stats
from fairviz.core.ece import ece, ece_regime
from fairviz.data import DataError, Predictions
from fairviz.data.tasks import spec_of
from fairviz.residuals import readings
from fairviz.residuals.concentration import knee_concentration
from fairviz.residuals.curves import (OUTCOMES, SortedGroup, curve, joint_search, knees_of, pooled_knees,
                                     residual_grid, search_cells, sort_groups)
from fairviz.residuals.knees import RELIABLE_N
from fairviz.residuals.metrics import f_h, f_v, mean_decomposition, median_parity, residuals, wasserstein_sorted
from fairviz.residuals.nulls import permutation_p_values
from fairviz.residuals.rates import threshold_check
from fairviz.residuals.regions import DStar, KneeRegions
from fairviz.residuals.resampling import CountResampler, distribution_intervals, knee_bootstrap, knee_metric_intervals
from fairviz.residuals.results import GroupSummary, PairMetrics, Progress, RDFParams, ResidualAudit


def analyse(pred: Predictions, attribute: str | None = None, params: RDFParams = RDFParams(),
            progress: Progress | None = None) -> ResidualAudit:
    """The RDF audit of rows or of weighted data (``Predictions.weight``: the engine's sufficient statistics); on
    weighted data nothing is expanded to rows (curves, knees, medians, W1, tests and resamples read the counts), and
    D* per row is built only when asked (``ResidualAudit.in_knee_region``)."""
    report = progress or (lambda *_: None)
    spec = spec_of(pred)
    if not (spec.numeric_target or spec.thresholded):     # D needs one score per row against a number or a 0/1 label
        raise DataError(readings.MULTICLASS)
    numeric = spec.numeric_target
    view = pred.groups(attribute)
    d = residuals(pred.score, pred.y)
    # F_pattern divides the median gap by the range D can take: [−1, 1] for a binary task, the data's for a regression
    span = _span(d) if numeric else 2.0
    unit = pred.mapping.label if numeric else None
    names = list(view.names)
    members = [np.flatnonzero(view.codes == g) for g in range(len(names))]
    warnings: list[str] = []
    small: list[tuple[str, int]] = []

    report(0.02, "Sorting residuals and finding knees")
    # every group is sorted once; all later statistics read these sorted views
    sorted_groups = sort_groups(pred, d, members)
    # knees searched at the engine's cells above EXACT_ROWS: the residual's own (regression) or the score's (binary)
    cells = residual_grid(pred, d) if numeric else search_cells(pred)
    searches = joint_search(pred, attribute, names, cells) if numeric else None
    group_knees = stats.in_parallel(lambda g: knees_of(sorted_groups[g], params.knees, cells,
                                                       None if searches is None else searches[g]),
                                    range(len(names)))
    region_rows = np.zeros(d.size, dtype=np.int64)
    regions, summaries, curves = [], [], {}
    offsets = None if pred.weight is None else np.cumsum(pred.weight) - pred.weight
    for g, (name, sg) in enumerate(zip(names, sorted_groups)):
        knees = [k for k in group_knees[g] if k is not None]
        # in residual mode ε is a share of half D's range: as given for a binary task, in the target's units scaled
        # alike for a regression
        residual_mode = numeric and params.region_mode == "residual"
        region = KneeRegions(sg, knees, params.region_eps * span / 2 if residual_mode else params.region_eps,
                             params.region_mode)
        regions.append(region)
        inside = region.counts().sum(1)
        region_rows[sg.entry] = inside
        summaries.append((_numeric_summary if numeric else _summary)(name, sg, group_knees[g],
                                                                             int(inside.sum())))
        curves[name] = {o: curve(sg, o, offsets) for o in (("all",) if numeric else OUTCOMES)}
        if sg.n < RELIABLE_N:
            small.append((name, sg.n))
        if not knees:
            warnings.append(readings.no_knee(name))
    if small:
        warnings.insert(0, readings.small_groups(small, RELIABLE_N))

    resampler = CountResampler(d, pred.y, members, params, pred.weight, unit) if params.resamples > 0 else None
    # all-pairs work is bounded (fairviz.data.limits): pairs among the largest groups only; the knee resamples
    # feed only the pair intervals, so they are drawn for those groups alone
    compared = pred.limits.pair_groups(len(names))
    pair_list = pred.limits.pair_indices(len(names))
    knee_boot, p_values = [None] * compared, {}
    concentrate = partial(knee_concentration, pred.score, pred.y, d, region_rows, params, pred.weight,
                          ece_key=(pred.fingerprint, "all rows"), binary=not numeric)
    if resampler is None:
        concentration = concentrate()
    else:
        report(0.05, "Drawing bootstrap resamples")
        resampler.draw(range(compared))
        # on all cores at once: knees re-detected in each group's resamples, every pair's permutation tests, the
        # resamples' medians and the knee error concentration
        tasks = [partial(knee_bootstrap, resampler, g, params) for g in range(compared)] + \
            [partial(permutation_p_values, resampler, i, j) for i, j in pair_list] + \
            [partial(resampler.medians, g) for g in range(compared)] + [concentrate]
        done = stats.in_parallel(lambda task: task(), tasks, lambda f: report(
            0.1 + 0.6 * f, "Re-detecting knees in resamples, permutation tests, knee error concentration"))
        knee_boot = done[:compared]
        p_values = dict(zip(pair_list, done[compared:compared + len(pair_list)]))
        concentration = done[-1]
    if note := pred.limits.pair_note(view.attribute, len(names)):
        warnings.append(note)
    report(0.7, "Comparing pairs")
    pairs = stats.in_parallel(
        lambda pair: _pair_metrics(sorted_groups, group_knees, knee_boot, names, *pair, resampler, params, p_values,
                                   cells, span if numeric else None, searches),
        pair_list, lambda f: report(0.7 + 0.3 * f, "Comparing pairs"))
    if resampler and resampler.note:
        warnings.append(resampler.note if not numeric else
                        resampler.note + readings.grid_error(_grid_error(resampler, pairs, pair_list), unit))
    report(1.0, "Done")
    d_star = DStar(sorted_groups, regions, pred.weight, d.size)
    return ResidualAudit(view.attribute, params, summaries, curves, pairs, concentration, region_rows,
                         tuple(warnings), d_star, knee_search_cells=getattr(cells, "cells", cells), task=pred.task,
                         unit=unit or "", span=span)


def _span(d: np.ndarray) -> float:
    """The range of a regression's residuals (1 where every residual is the same, so that no gap divides by 0)."""
    spread = float(d.max() - d.min()) if d.size else 0.0
    return spread if spread > 0 else 1.0


def _grid_error(resampler: CountResampler, pairs: list[PairMetrics], pair_list) -> float:
    """How far the resamples' grid moves F_dist, measured: the largest gap between each pair's exact W1 and the W1
    of its counts on the grid the resamples are drawn on."""
    support = resampler.compressed.support
    gaps = [abs(stats.wasserstein_counts(support, resampler.counts[i], resampler.counts[j])[0] - p.f_dist)
            for p, (i, j) in zip(pairs, pair_list) if np.isfinite(p.f_dist)]
    return max(gaps, default=0.0)


def _summary(name, sg: SortedGroup, knees, knee_rows) -> GroupSummary:
    value = ece(sg.score, sg.y, weights=sg.weights)
    n = sg.n
    positives = int(sg.y @ sg.w)
    return GroupSummary(name=name, n=n, positives=positives, base_rate=positives / n if n else float("nan"),
                        mean_score=sg.mean(sg.score), mean_residual=sg.mean(sg.d), median_residual=sg.median(),
                        median_residual_y0=sg.outcome(0).median(), median_residual_y1=sg.outcome(1).median(),
                        ece=value, ece_regime=ece_regime(value), left_knee=knees[0], right_knee=knees[1],
                        knee_rows=knee_rows)


def _pair_metrics(sorted_groups: list[SortedGroup], group_knees, knee_boot, names, i, j,
                  resampler: CountResampler, params: RDFParams, p_values: dict, cells,
                  span: float | None = None, searches: list | None = None) -> PairMetrics:
    """All RDF metrics of the ordered pair (i, j), from the groups' sorted residuals (rows or weighted entries).
    ``span``: a regression's residual range (F_pattern's divisor); None for a binary task (2, and the metrics by
    outcome)."""
    a, b = sorted_groups[i], sorted_groups[j]
    pooled = pooled_knees(a, b, params.knees, cells, None if searches is None else (searches[i], searches[j]))
    ki, kj = group_knees[i], group_knees[j]
    warnings = []
    near = 0.01 if span is None else 0.005 * span          # 1% of D's half-range, in either task
    if all(k is not None for k in (*ki, *kj, *pooled)):
        if pooled[0].percentile < 0.01 or min(abs(pooled[0].residual), abs(pooled[1].residual)) < near:
            warnings.append(readings.pooled_knee_near_zero())
    by_outcome = {"": (a, b)}
    if span is None:
        by_outcome.update({"_y0": (a.outcome(0), b.outcome(0)), "_y1": (a.outcome(1), b.outcome(1))})
    pattern = {suffix: median_parity(p, q, 2.0 if span is None else span) for suffix, (p, q) in by_outcome.items()}
    distance = {suffix: wasserstein_sorted(p.d, q.d, p.weights, q.weights) for suffix, (p, q) in by_outcome.items()}
    nan = float("nan")
    ci, p_median, p_dist = {}, nan, nan
    if params.resamples > 0:
        ci = distribution_intervals(resampler, i, j, 2.0 if span is None else span)
        ci.update(knee_metric_intervals(knee_boot[i], knee_boot[j], pooled))
        p_median, p_dist = p_values[(i, j)]
    return PairMetrics(
        group_i=names[i], group_j=names[j],
        f_pattern=pattern[""], f_pattern_y0=pattern.get("_y0", nan), f_pattern_y1=pattern.get("_y1", nan),
        f_pattern_mean=1 - abs(a.mean(a.d) - b.mean(b.d)) / (2 if span is None else span),
        f_dist=distance[""], f_dist_y0=distance.get("_y0", nan), f_dist_y1=distance.get("_y1", nan),
        f_h=f_h(ki, kj, pooled), f_v=f_v(ki, kj, pooled),
        f_h_abs=f_h(ki, kj, pooled, absolute=True), f_v_abs=f_v(ki, kj, pooled, absolute=True),
        pooled_knees=pooled,
        mean_decomposition=mean_decomposition(a.score, a.y, b.score, b.y, a.weights, b.weights, span),
        ci=ci, p_median=p_median, p_dist=p_dist, warnings=tuple(warnings),
    )


def _numeric_summary(name, sg: SortedGroup, knees, knee_rows) -> GroupSummary:
    """A regression group: no positives, base rate, outcome split or ECE (NaN, never read); the mean target."""
    nan = float("nan")
    return GroupSummary(name=name, n=sg.n, positives=None, base_rate=nan, mean_score=sg.mean(sg.score),
                        mean_residual=sg.mean(sg.d), median_residual=sg.median(), median_residual_y0=nan,
                        median_residual_y1=nan, ece=nan, ece_regime="", left_knee=knees[0], right_knee=knees[1],
                        knee_rows=knee_rows, mean_target=sg.mean(sg.y))


def at_threshold(audit: ResidualAudit, pred: Predictions, threshold: float) -> ResidualAudit:
    """The audit with its rates at ``threshold`` attached (each group's confusion counts, [1] Theorem 6.1): what
    the group and pair tables read besides the curves. A regression has no threshold: its audit is returned as is."""
    if audit.numeric_target:
        return audit
    return audit.with_rates(threshold_check(pred, audit.attribute, threshold))
