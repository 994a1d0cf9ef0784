"""Two models on the same rows, side by side: every headline metric per model × group and the paired difference of
model b minus model a, overall, per group and per group against the reference, with Benjamini–Hochberg over the
whole family.

Every number comes from the concepts' own functions: the calibration metrics from ``paired_differences`` (per group:
on the group's entries), the confusion rates from the parity page's group counts, the pair metrics from the core's
confusion-matrix metrics and the residual page's Wasserstein distance. Pairs are resampled once for both models
(one multinomial, or Poisson, draw of the entries' counts feeds both), and the permutation test swaps the two
models' scores within entries (``paired_statistics``)."""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np
import pandas as pd
from scipy import sparse

from fairviz.calibration.reliability import reliability_table
from fairviz.compare.paired import METRICS, PairedSamples, paired_differences, paired_statistics
from fairviz.compare.results import ALL, CompareParams, Difference, ModelComparison, ModelCurves
from fairviz.core import stats
from fairviz.core.confusion_metrics import METRICS as CM_METRICS
from fairviz.core.confusion_metrics import Cells
from fairviz.core.counts import ConfusionCounts, decisions
from fairviz.data import DataError, Predictions
from fairviz.data.groups import group_counts
from fairviz.residuals.knees import curve_size, percentiles, quantiles_from_counts
from fairviz.residuals.analysis import analyse as residual_analyse
from fairviz.residuals.metrics import residuals
from fairviz.residuals.results import RDFParams

Progress = Callable[[float, str], None]
# a pair metric: the per-group quantity it contrasts (the parity page's Table 3.2 keys) and how
PAIR_QUANTITIES = {"ofi": ("benefit", "difference"), "di": ("ppr", "ratio"), "fpr_gap": ("fpr", "difference")}


def compare_models(joint: Predictions, attribute: str, threshold: float, benefit: str = "positive",
                   reference: str | None = None, model_a: str | None = None, model_b: str | None = None,
                   params: CompareParams = CompareParams(), progress: Progress | None = None) -> ModelComparison:
    """Model b against model a on ``joint``'s entries (``Predictions.joint()``); ``reference``: the group the pair
    metrics compare others with (None: the largest)."""
    report = progress or (lambda *_: None)
    joint = joint.joint()
    names = joint.model_names
    model_a = model_a or names[0]
    model_b = model_b or (names[1] if len(names) > 1 else None)
    if model_b is None or model_a == model_b:
        raise DataError("Comparing models needs two different models; the data holds "
                        f"{', '.join(repr(n) for n in names)}.")
    for title in (model_a, model_b):
        if title not in names:
            raise DataError(f"There is no model named '{title}' (models: {', '.join(names)}).")
    view = joint.groups(attribute)
    weight = np.ones(joint.y.size, np.int64) if joint.weight is None else joint.weight.astype(np.int64)
    sizes = np.bincount(view.codes, weights=weight, minlength=len(view.names)).astype(np.int64)
    group_sizes = {g: int(n) for g, n in zip(view.names, sizes)}
    if reference is None or reference not in view.names:
        reference = view.names[int(np.argmax(sizes))]
    y = joint.y.astype(float)
    a, b = joint.scores[model_a], joint.scores[model_b]

    report(0.05, "Every row")
    differences = [_difference(d, None, int(weight.sum()))
                   for d in paired_differences(y, a, b, weight, params.resamples, params.permutations, params.seed,
                                               params.level).values()]
    for k, name in enumerate(view.names):
        report(0.1 + 0.5 * k / len(view.names), f"Group {name}")
        mask = view.codes == k
        if sizes[k] == 0:
            continue
        found = paired_differences(y[mask], a[mask], b[mask], weight[mask], params.resamples, params.permutations,
                                   params.seed, params.level)
        differences += [_difference(d, name, int(sizes[k])) for d in found.values()]
    report(0.6, "Pairs with the reference")
    pairs = [g for g in view.names if g != reference and group_sizes[g] > 0]
    statistic = pair_statistic(y, view.codes, view.names, reference, pairs, threshold, benefit)
    samples = paired_statistics(statistic, a, b, weight, params.resamples, params.permutations, params.seed + 1)
    for key, s in samples.items():
        metric, group = key.split("|", 1)
        differences.append(_samples_difference(metric, group, reference, s,
                                               group_sizes[group] + group_sizes[reference], params))
    report(0.7, "Knee error concentration")
    shares = [knee_shares(joint, attribute, title, weight) for title in (model_a, model_b)]
    samples = paired_statistics(knee_statistic(y, view.codes, view.names, shares), a, b, weight, params.resamples,
                                params.permutations, params.seed + 2)
    for key, s in samples.items():
        group = None if key == "knee_ratio" else key.split("|", 1)[1]
        n = int(weight.sum()) if group is None else group_sizes[group]
        differences.append(_samples_difference("knee_ratio", group, None, s, n, params))
    adjusted = stats.benjamini_hochberg([d.p_value for d in differences])
    differences = tuple(replace(d, p_adjusted=float(p)) for d, p in zip(differences, adjusted))
    report(0.85, "Curves")
    table = _table(joint, view, attribute, threshold, benefit, (model_a, model_b), differences, group_sizes)
    curves = {title: _curves(joint, view, joint.scores[title], weight, params) for title in (model_a, model_b)}
    notes = ()
    if joint.weight is not None and joint.resolution:
        notes = (f"Scores were binned to cells {joint.resolution:g} wide by the engine; every metric reads the "
                 "cells' mean scores.",)
    report(1.0, "Done")
    return ModelComparison(view.attribute, threshold, benefit, reference, model_a, model_b, params, group_sizes,
                           table, differences, curves, notes, joint.fingerprint)


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
    """OFI, DI, the FPR gap (in the benefit's orientation, as the parity page counts them) and F_dist (the residual
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
        d = residuals(score, y[index])
        order = np.argsort(d, kind="stable")
        support, sorted_group = d[order], group[order]

        def compute(counts: np.ndarray) -> dict[str, np.ndarray]:
            c = np.asarray(into_cells @ counts.astype(float, copy=False).T).T.reshape(counts.shape[0], n_groups, 4)
            quantities = Cells(tp=c[..., 3], fn=c[..., 2], fp=c[..., 1], tn=c[..., 0])
            per_group = {q: CM_METRICS[q](quantities) for q, _ in PAIR_QUANTITIES.values()}
            ordered = counts[:, order]
            reference_counts = np.where(sorted_group == ref, ordered, 0)
            out = {}
            for g, k in index_of.items():
                for metric, (quantity, kind) in PAIR_QUANTITIES.items():
                    q = per_group[quantity]
                    with np.errstate(divide="ignore", invalid="ignore"):
                        out[f"{metric}|{g}"] = q[:, k] - q[:, ref] if kind == "difference" else q[:, k] / q[:, ref]
                out[f"f_dist|{g}"] = stats.wasserstein_counts(support, np.where(sorted_group == k, ordered, 0),
                                                              reference_counts)
            return out
        return compute
    return make


def knee_shares(joint: Predictions, attribute: str, title: str, weight: np.ndarray) -> np.ndarray:
    """The share of each of ``joint``'s entries in its group's knee regions under model ``title``: the residual
    page's own knees and regions (``fairviz.residuals.analyse``, the paper's settings), found on the joint entries
    with that model's scores (the same rows, so the same curves)."""
    one = replace(joint, score=joint.scores[title], model=title, scores={}, _intersections={}, _joint=None,
                  fingerprint=f"{joint.fingerprint}|entries of {title}")
    audit = residual_analyse(one, attribute, RDFParams(resamples=0, knee_resamples=0))
    return audit.region_rows / np.maximum(weight, 1)


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
    """One row per model × group (every row first): n, ECE, AUROC, log-loss, Brier, the rates at τ in the benefit's
    orientation and F_dist against the reference."""
    found = {(d.metric, d.group): d for d in differences if d.reference is None}
    f_dist = {d.group: d for d in differences if d.metric == "f_dist"}
    rows = []
    for side, title in enumerate(models):
        one = joint.with_model(title)
        counts = group_counts(one, one.groups(attribute), threshold, benefit)
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
