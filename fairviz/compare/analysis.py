"""Two models on the same rows, side by side: every headline metric per model × group and the paired difference of
model b minus model a, overall, per group and per group against the reference, with Benjamini–Hochberg over the
whole family.

Every number comes from the concepts' own functions: the calibration metrics from ``paired_differences`` (per group:
on the group's entries), the confusion rates from the parity page's group counts, the pair metrics from the core's
confusion-matrix metrics and the residual page's Wasserstein distance. Pairs are resampled once for both models
(one multinomial, or Poisson, draw of the entries' counts feeds both), and the permutation test swaps the two
models' scores within entries (``paired_statistics``)."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import cached_property
from typing import Callable

import numpy as np
import pandas as pd
from scipy import sparse

from fairviz.calibration.reliability import reliability_table
from fairviz.compare.paired import (
    METRICS,
    PairedSamples,
    family_statistic,
    metric_differences,
    metric_statistic,
    paired_statistics,
)
from fairviz.compare.results import ALL, CompareParams, Difference, ModelComparison, ModelCurves, two_models
from fairviz.core import stats
from fairviz.core.confusion_metrics import METRICS as CM_METRICS
from fairviz.core.confusion_metrics import Cells
from fairviz.core.counts import ConfusionCounts, decisions
from fairviz.data import Predictions
from fairviz.data.model import merged_cells, model_entry_index
from fairviz.data.groups import group_counts
from fairviz.data.view import View
from fairviz.residuals.knees import curve_size, percentiles, quantiles_from_counts
from fairviz.residuals.analysis import analyse as residual_analyse
from fairviz.residuals.metrics import residuals
from fairviz.residuals.results import RDFParams

Progress = Callable[[float, str], None]
# a pair metric: the per-group quantity it contrasts, how, and on what: OFI and DI on the benefit (as the parity
# page's Table 3.2), the FPR gap on the label (the FPR every page names, whichever prediction is the benefit)
PAIR_QUANTITIES = {"ofi": ("benefit", "difference", "benefit"), "di": ("ppr", "ratio", "benefit"),
                   "fpr_gap": ("fpr", "difference", "label")}


def compare_models(joint: Predictions, attribute: str, threshold: float, benefit: str = "positive",
                   reference: str | None = None, model_a: str | None = None, model_b: str | None = None,
                   params: CompareParams = CompareParams(), progress: Progress | None = None) -> ModelComparison:
    """Model b against model a on ``joint``'s entries (``Predictions.joint()``); ``reference``: the group the pair
    metrics compare others with (None: the largest)."""
    report = progress or (lambda *_: None)
    joint = joint.joint()
    model_a, model_b = two_models(joint.model_names, model_a, model_b)
    view = joint.groups(attribute)
    weight = np.ones(joint.y.size, np.int64) if joint.weight is None else joint.weight.astype(np.int64)
    sizes = np.bincount(view.codes, weights=weight, minlength=len(view.names)).astype(np.int64)
    group_sizes = {g: int(n) for g, n in zip(view.names, sizes)}
    if reference is None or reference not in view.names:
        reference = view.names[int(np.argmax(sizes))]
    entries = joint.y.size
    if entries <= params.max_entries:
        differences = _differences(joint, attribute, reference, model_a, model_b, threshold, benefit, params,
                                   report)
    else:       # observed values on every entry; resampling on the entries merged to cells, re-centred on them
        exact, merged = _side_by_side(
            lambda: _differences(joint, attribute, reference, model_a, model_b, threshold, benefit,
                                 replace(params, resamples=0, permutations=0), lambda *_: None),
            lambda: _differences(merged_cells(joint, params.cells, threshold), attribute, reference, model_a, model_b,
                                 threshold, benefit, params, report, knees=False))
        resampled = {(m.metric, m.group, m.reference): m for m in merged}
        differences = [_recentred(e, resampled.get((e.metric, e.group, e.reference))) for e in exact]
    adjusted = stats.benjamini_hochberg([d.p_value for d in differences])
    differences = tuple(replace(d, p_adjusted=float(p)) for d, p in zip(differences, adjusted))
    report(0.85, "Curves")
    table = _table(joint, view, attribute, threshold, benefit, (model_a, model_b), differences, group_sizes)
    curves = {title: _curves(joint, view, joint.scores[title], weight, params) for title in (model_a, model_b)}
    notes = ()
    if entries > params.max_entries:
        notes = (f"The intervals and permutation tests resample the {entries:,} entries merged to cells of "
                 f"1/{params.cells} per model, split at τ (sums of scores and every count at τ kept), so they "
                 f"take seconds, not minutes; every value and difference is computed on the entries themselves, and "
                 f"each interval is re-centred on it. The knee ratio's difference is not resampled (knees found on "
                 f"merged curves move).",)
    elif joint.weight is not None and joint.resolution:
        notes = (f"Scores were binned to cells {joint.resolution:g} wide by the engine; every metric reads the "
                 "cells' mean scores.",)
    report(1.0, "Done")
    return ModelComparison(view.attribute, threshold, benefit, reference, model_a, model_b, params, group_sizes,
                           table, differences, curves, notes, joint.fingerprint)


def _differences(joint: Predictions, attribute: str, reference: str, model_a: str, model_b: str,
                 threshold: float, benefit: str, params: CompareParams, report, knees: bool = True) -> list[Difference]:
    """Every paired difference of the comparison, before the family's adjustment: the metrics on every row and in
    each group, the pair metrics against the reference and (``knees``) the knee concentration, all from one paired
    bootstrap and one permutation draw (``family_statistic``)."""
    weight = np.ones(joint.y.size, np.int64) if joint.weight is None else joint.weight.astype(np.int64)
    view = joint.groups(attribute)
    sizes = np.bincount(view.codes, weights=weight, minlength=len(view.names)).astype(np.int64)
    group_sizes = {g: int(n) for g, n in zip(view.names, sizes)}
    present = [(k, name) for k, name in enumerate(view.names) if sizes[k] > 0]
    y = joint.y.astype(float)
    a, b = joint.scores[model_a], joint.scores[model_b]

    pairs = [g for g in view.names if g != reference and group_sizes[g] > 0]
    shared = [("pair|", None, pair_statistic(y, view.codes, view.names, reference, pairs, threshold, benefit))]
    if knees:
        report(0.05, "Knee regions of each model")
        shares = [knee_shares(joint, attribute, title, weight) for title in (model_a, model_b)]
        shared.append(("knee|", None, knee_statistic(y, view.codes, view.names, shares)))
    members = [("all|", None)] + [(f"group|{name}|", view.codes == k) for k, name in present]
    permuted = tuple(m for m in METRICS if m != "auroc")
    family = family_statistic([(p, mask, metric_statistic(y)) for p, mask in members] + shared)
    tested = family_statistic([(p, mask, metric_statistic(y, permuted)) for p, mask in members] + shared)
    samples = paired_statistics(family, a, b, weight, params.resamples, params.permutations, params.seed,
                                tested=tested, progress=lambda done: report(0.1 + 0.7 * done, "Resampling"))

    def found(prefix: str, mask=None) -> dict:
        own = {k[len(prefix):]: v for k, v in samples.items() if k.startswith(prefix)}
        if mask is None:
            return metric_differences(own, y, a, b, weight, params.permutations, params.level)
        return metric_differences(own, y[mask], a[mask], b[mask], weight[mask], params.permutations, params.level)

    differences = [_difference(d, None, int(weight.sum())) for d in found("all|").values()]
    for k, name in present:
        differences += [_difference(d, name, int(sizes[k])) for d in found(f"group|{name}|", view.codes == k).values()]
    for key, s in samples.items():
        if key.startswith("pair|"):
            metric, group = key[len("pair|"):].split("|", 1)
            differences.append(_samples_difference(metric, group, reference, s,
                                                   group_sizes[group] + group_sizes[reference], params))
    for key, s in samples.items():
        if key.startswith("knee|"):
            group = None if key == "knee|knee_ratio" else key.split("|", 2)[2]
            n = int(weight.sum()) if group is None else group_sizes[group]
            differences.append(_samples_difference("knee_ratio", group, None, s, n, params))
    return differences


def _side_by_side(background: Callable, foreground: Callable):
    """(background(), foreground()), the first on a second core while this thread runs the second (which reports
    progress: Streamlit's progress and Stop live in this thread). Sorting, sparse products and numpy's generators
    release the GIL, so the exact pass over every entry costs no wall time beside the resampling."""
    if stats.WORKERS <= 1:
        return background(), foreground()
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(background)
        try:
            ahead = foreground()
        except BaseException:
            pending.cancel()
            raise
        return pending.result(), ahead


def _recentred(exact: Difference, merged: Difference | None) -> Difference:
    """The exact entries' values with the merged entries' resampling: the interval keeps its distances from the
    estimate, and the permutation p-value is the merged entries' (AUROC keeps DeLong's test on every entry)."""
    if merged is None:      # the knee ratio: knees found on merged curves move, so its interval needs every entry
        return replace(exact, test="not resampled: the knee ratio's interval needs every entry (fewer rows, or "
                                   "the Residual page)")
    if not (np.isfinite(merged.difference) and np.isfinite(exact.difference)):
        return exact
    shift = exact.difference - merged.difference
    ci = stats.Interval(merged.ci.low + shift, merged.ci.high + shift, merged.ci.level, merged.ci.resamples)
    p_value = exact.p_value if exact.metric == "auroc" else merged.p_value
    return replace(exact, ci=ci, p_value=p_value, test=exact.test if exact.metric == "auroc" else merged.test)


def _difference(d, group: str | None, n: int) -> Difference:
    """``paired_differences`` gives a − b; a comparison reads b − a (the second model against the first)."""
    delong = None if d.delong_ci is None else (-d.delong_ci[1], -d.delong_ci[0])
    ci = stats.Interval(-d.ci.high, -d.ci.low, d.ci.level, d.ci.resamples)
    return Difference(d.metric, group, None, d.value_a, d.value_b, -d.difference, ci, d.p_value, d.test, n,
                      delong_ci=delong)


def _samples_difference(metric: str, group: str | None, reference: str | None, s: PairedSamples, n: int,
                        params: CompareParams) -> Difference:
    interval = s.interval(params.level)
    ci = stats.Interval(-interval.high, -interval.low, interval.level, interval.resamples)
    return Difference(metric, group, reference, s.value_a, s.value_b, -s.difference, ci, s.p_value(),
                      f"paired permutation test ({params.permutations:,} swaps within rows)", n)


def pair_statistic(y: np.ndarray, codes: np.ndarray, names, reference: str, pairs: list[str], threshold: float,
                   benefit: str):
    """OFI, DI (on the benefit, as the parity page), the FPR gap (on the label) and F_dist (the residual
    page's Wasserstein distance) of each group in ``pairs`` against ``reference``, as a ``paired_statistics``
    statistic: every value is a function of the resampled counts."""
    n_groups, ref = len(names), list(names).index(reference)
    index_of = {g: list(names).index(g) for g in pairs}

    def make(index: np.ndarray, score: np.ndarray, model: np.ndarray):
        label, group = y[index].astype(np.int64), codes[index].astype(np.int64)
        decided = decisions(score, threshold).astype(np.int64)
        if benefit == "negative":          # the parity page's flip: the negative prediction is the benefit
            label, decided = 1 - label, 1 - decided
        cell = 4 * group + 2 * label + decided                                    # 0 tn, 1 fp, 2 fn, 3 tp
        # each entry falls in one cell: a sparse (cells × entries) indicator sums the resamples' counts per cell
        into_cells = sparse.csr_matrix((np.ones(index.size), (cell, np.arange(index.size))),
                                       shape=(4 * n_groups, index.size))
        distances = ResidualDistances(residuals(score, y[index]), group, n_groups, ref)

        def compute(counts: np.ndarray) -> dict[str, np.ndarray]:
            if counts.shape[0] > 1:
                c = np.asarray(into_cells @ counts.astype(float, copy=False).T).T
            else:                                              # an observed value: one bincount
                c = np.bincount(cell, weights=counts[0], minlength=4 * n_groups)[None, :]
            c = c.reshape(counts.shape[0], n_groups, 4)
            quantities = Cells(tp=c[..., 3], fn=c[..., 2], fp=c[..., 1], tn=c[..., 0])
            on_label = (Cells(tp=quantities.tn, fn=quantities.fp, fp=quantities.fn, tn=quantities.tp)
                        if benefit == "negative" else quantities)         # the flip undone
            per_group = {(q, on): CM_METRICS[q](on_label if on == "label" else quantities)
                         for q, _, on in PAIR_QUANTITIES.values()}
            f_dist = distances(counts, list(index_of.values()))
            out = {}
            for g, k in index_of.items():
                for metric, (quantity, kind, on) in PAIR_QUANTITIES.items():
                    q = per_group[quantity, on]
                    with np.errstate(divide="ignore", invalid="ignore"):
                        out[f"{metric}|{g}"] = q[:, k] - q[:, ref] if kind == "difference" else q[:, k] / q[:, ref]
                out[f"f_dist|{g}"] = f_dist[k]
            return out
        return compute
    return make


class ResidualDistances:
    """F_dist (the residual page's Wasserstein distance between a group's residuals and the reference group's) of
    rows of counts over fixed entries. One row (an observed value), or few entries: exact, on the sorted residuals.
    Resamples of many entries: the residuals read on a grid of ``GRID`` points over their range (each moves by at
    most half a step, 1/8,000 of the range), so a resample costs (groups × GRID), not (groups × entries) — F_dist's
    resampling was three quarters of a comparison's time. Measured: the resampled distances move by less than
    2e-5 (1M-row benchmark, and ``tests/compare``), under 1% of their intervals' widths; only intervals and
    permutation nulls read them."""

    GRID = 4_001
    EXACT_UP_TO = 4_000          # entries

    def __init__(self, d: np.ndarray, group: np.ndarray, n_groups: int, reference: int):
        self.n_groups, self.reference = n_groups, reference
        self.order = np.argsort(d, kind="stable")
        self.support, self.sorted_group = d[self.order], group[self.order]
        low, high = float(d.min(initial=0)), float(d.max(initial=0))
        self.step = (high - low) / (self.GRID - 1) if d.size > self.EXACT_UP_TO and high > low else 0.0
        self.d, self.group, self.low = d, group, low

    @cached_property
    def into_grid(self) -> sparse.csr_matrix:
        """Entry k's rows to its group's grid point: the resamples' per-point counts in one product."""
        point = np.rint((self.d - self.low) / self.step).astype(np.int64)
        return sparse.csr_matrix((np.ones(self.d.size), (self.group * self.GRID + point, np.arange(self.d.size))),
                                 shape=(self.n_groups * self.GRID, self.d.size))

    def __call__(self, counts: np.ndarray, groups: list[int]) -> dict[int, np.ndarray]:
        if self.step and counts.shape[0] > 1:
            return self._on_grid(counts, groups)
        ordered = counts[:, self.order]
        reference = np.where(self.sorted_group == self.reference, ordered, 0)
        return {k: stats.wasserstein_counts(self.support, np.where(self.sorted_group == k, ordered, 0), reference)
                for k in groups}

    def _on_grid(self, counts: np.ndarray, groups: list[int]) -> dict[int, np.ndarray]:
        per_point = np.asarray(self.into_grid @ counts.astype(float, copy=False).T).T
        cumulative = np.cumsum(per_point.reshape(counts.shape[0], self.n_groups, self.GRID), axis=2)
        total = cumulative[..., -1:]
        with np.errstate(invalid="ignore", divide="ignore"):
            shares = cumulative[..., :-1] / total
        reference = shares[:, self.reference]
        return {k: np.where((total[:, k, 0] > 0) & (total[:, self.reference, 0] > 0),
                            np.abs(shares[:, k] - reference).sum(axis=1) * self.step, np.nan) for k in groups}


def knee_shares(joint: Predictions, attribute: str, title: str, weight: np.ndarray) -> np.ndarray:
    """The share of each of ``joint``'s entries in its group's knee regions under model ``title``: the residual
    page's own knees and regions (``fairviz.residuals.analyse``, the paper's settings), found on the model's own
    entries (``at``: what the residual page audits) and handed to the joint entries merged into them. A
    joint entry's rows are those of its model entry with the same label and (a part of) the same score cell, so the
    ratio read on the joint entries is the page's."""
    view = joint.at(View(model=title))
    audit = residual_analyse(view, attribute, RDFParams(resamples=0, knee_resamples=0))
    own = np.ones(view.y.size) if view.weight is None else view.weight
    return (audit.region_rows / np.maximum(own, 1))[model_entry_index(joint, title)]


def knee_statistic(y: np.ndarray, codes: np.ndarray, names, shares: list[np.ndarray]):
    """Knee error concentration ([1] §8.2, the residual page's ratio): mean |D| of the rows in the knee regions over
    that of the other rows, on every row and in each group, the regions fixed as found (``shares``: each model's
    share of every entry in them) — a sub-entry with model m's score is in model m's regions."""
    def make(index: np.ndarray, score: np.ndarray, model: np.ndarray):
        error = np.abs(residuals(score, y[index]))
        inside = np.where(model == 0, shares[0][index], shares[1][index])
        group = codes[index]
        masks = {"knee_ratio": None, **{f"knee_ratio|{g}": group == k for k, g in enumerate(names)}}

        def compute(counts: np.ndarray) -> dict[str, np.ndarray]:
            counts = counts.astype(float, copy=False)
            out = {}
            for key, mask in masks.items():
                knee = inside if mask is None else inside * mask
                rest = (1 - inside) if mask is None else (1 - inside) * mask
                with np.errstate(divide="ignore", invalid="ignore"):
                    out[key] = ((counts @ (knee * error)) / (counts @ knee)) / \
                        ((counts @ (rest * error)) / (counts @ rest))
            return out
        return compute
    return make


def _rates(counts: ConfusionCounts) -> dict:
    return {"selection_rate": counts.ppr(), "fpr": counts.fpr(), "fnr": counts.fnr()}


def _table(joint: Predictions, view, attribute: str, threshold: float, benefit: str, models: tuple[str, str],
           differences: tuple[Difference, ...], group_sizes: dict) -> pd.DataFrame:
    """One row per model × group (every row first): n, ECE, AUROC, log-loss, Brier, the rates at τ on the label
    (the FPR every page names) and F_dist against the reference."""
    found = {(d.metric, d.group): d for d in differences if d.reference is None}
    f_dist = {d.group: d for d in differences if d.metric == "f_dist"}
    rows = []
    for side, title in enumerate(models):
        one = joint.at(View(model=title))
        counts = group_counts(one, one.groups(attribute), threshold)
        total = ConfusionCounts(*(sum(getattr(c, f) for c in counts) for f in ("tp", "fn", "fp", "tn")))
        for group, c in [(None, total), *zip(view.names, counts)]:
            if group is not None and group_sizes[group] == 0:
                continue
            row = {"model": title, "group": ALL if group is None else group,
                   "n": group_sizes[group] if group is not None else sum(group_sizes.values())}
            for metric in (*METRICS, "knee_ratio"):
                d = found.get((metric, group))
                row[metric] = None if d is None else (d.value_a if side == 0 else d.value_b)
            row.update(_rates(c))
            pair = f_dist.get(group)
            row["f_dist"] = None if pair is None else (pair.value_a if side == 0 else pair.value_b)
            rows.append(row)
    return pd.DataFrame(rows)


def _curves(joint: Predictions, view, score: np.ndarray, weight: np.ndarray, params: CompareParams) -> ModelCurves:
    """The reliability tables (every row, then each group) and each group's sorted residual curve, at most
    ``max_points`` quantiles: what the overlaid figures draw."""
    y = joint.y.astype(float)
    reliability = {ALL: reliability_table(y, score, params.n_bins, weights=weight)}
    quantiles = {}
    d = residuals(score, y)
    for k, name in enumerate(view.names):
        mask = view.codes == k
        n = int(weight[mask].sum())
        if n == 0:
            continue
        reliability[name] = reliability_table(y[mask], score[mask], params.n_bins, weights=weight[mask])
        order = np.argsort(d[mask], kind="stable")
        m = curve_size(n, params.max_points)
        quantiles[name] = (percentiles(m), quantiles_from_counts(d[mask][order], weight[mask][order][None, :], m)[0])
    return ModelCurves(reliability, quantiles)
