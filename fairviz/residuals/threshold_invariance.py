"""Threshold invariance ([1] App. D.1, App. N, Table 5).

The RDF metrics are functions of the residual distributions alone, so they cannot move when the decision
threshold τ moves; demographic parity and equalized-odds gaps are counted at one τ and do. The paper's Table 5
measures this with the coefficient of variation over τ ∈ {0.1, …, 0.9}:

    CV% = 100 · std(values, ddof=0) / |mean(values)|

The classical gaps are counted at every τ; the RDF metric functions take no threshold at all, so their value is
computed once per pair and stands for every τ (their 0% is "by construction", as the paper says). A metric whose
nine values are identical has CV exactly 0 (computed as such, not through a floating-point mean that may differ
from the values by an ulp). A CV with mean 0 is undefined.

Gap forms (the paper does not say which it used): the absolute Fairlearn-style gaps ``dp_diff = |PPR_i − PPR_j|``,
``eo_tpr_diff = |TPR_i − TPR_j|``, ``eo_fpr_diff = |FPR_i − FPR_j|``, ``eo_diff = max`` of the two, and the ratio
forms ``dp_ratio = min/max`` of the positive rates and ``eo_ratio`` = the smaller of the TPR and FPR min/max
ratios. The ratio forms sit near 1, as the paper's small CVs (0.3–20.6%) suggest.
"""
from __future__ import annotations

import numpy as np

from fairviz.core.counts import confusion_by_group, decisions
from fairviz.data import DataError, Predictions
from fairviz.data.tasks import spec_of
from fairviz.residuals.curves import knees_of, pooled_knees, search_cells, sort_groups
from fairviz.residuals.knees import KneeParams
from fairviz.residuals.metrics import f_h, f_v, median_parity, residuals, wasserstein_sorted
from fairviz.residuals.results import PairInvariance, ResidualAudit, ThresholdInvarianceResult

THRESHOLDS = tuple(round(0.1 * k, 1) for k in range(1, 10))
RDF_METRICS = ("f_pattern", "f_pattern_mean", "f_dist", "f_dist_y0", "f_dist_y1", "f_h", "f_v")
GAP_METRICS = ("dp_diff", "dp_ratio", "eo_tpr_diff", "eo_fpr_diff", "eo_diff", "eo_ratio")
METRIC_NAMES = {"f_pattern": "F_pattern", "f_pattern_mean": "F_pattern (mean)", "f_dist": "F_dist",
                "f_dist_y0": "F_dist Y=0", "f_dist_y1": "F_dist Y=1", "f_h": "F_h", "f_v": "F_v",
                "dp_diff": "DP gap |ΔPPR|", "dp_ratio": "DP ratio", "eo_tpr_diff": "TPR gap |ΔTPR|",
                "eo_fpr_diff": "FPR gap |ΔFPR|", "eo_diff": "EO gap (max)", "eo_ratio": "EO ratio"}


def coefficient_of_variation(values) -> tuple[float | None, str]:
    """CV% = 100·std(ddof=0)/|mean|; (None, reason) when undefined. Identical values give exactly 0."""
    if any(v is None for v in values):
        return None, "undefined at some threshold"
    x = np.asarray(values, dtype=float)
    if x.size == 0 or not np.all(np.isfinite(x)):
        return None, "undefined at some threshold"
    if np.ptp(x) == 0:
        return 0.0, ""
    mean = float(np.mean(x))
    if mean == 0:
        return None, "mean is 0"
    return float(100.0 * np.std(x, ddof=0) / abs(mean)), ""


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    hi = max(a, b)
    return None if hi == 0 else min(a, b) / hi


def _abs_gap(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else abs(a - b)


def gaps_at(counts_i, counts_j) -> dict:
    """The classical gaps of one pair from its confusion counts at one threshold."""
    tpr = _abs_gap(counts_i.tpr(), counts_j.tpr())
    fpr = _abs_gap(counts_i.fpr(), counts_j.fpr())
    tpr_ratio, fpr_ratio = _ratio(counts_i.tpr(), counts_j.tpr()), _ratio(counts_i.fpr(), counts_j.fpr())
    return {"dp_diff": _abs_gap(counts_i.ppr(), counts_j.ppr()), "dp_ratio": _ratio(counts_i.ppr(), counts_j.ppr()),
            "eo_tpr_diff": tpr, "eo_fpr_diff": fpr,
            "eo_diff": None if tpr is None or fpr is None else max(tpr, fpr),
            "eo_ratio": None if tpr_ratio is None or fpr_ratio is None else min(tpr_ratio, fpr_ratio)}


def rdf_at(a, b, knees_i, knees_j, knees_pooled) -> dict:
    """The RDF metrics of one pair (no threshold anywhere in them) from the two groups' residuals sorted once
    (rows or weighted entries, ``curves.sort_groups``): each call is then linear in the entries."""
    def nan_none(v):
        return None if v is None or not np.isfinite(v) else float(v)

    def w1(p, q):
        return wasserstein_sorted(p.d, q.d, p.weights, q.weights)

    return {"f_pattern": nan_none(median_parity(a, b)),
            "f_pattern_mean": nan_none(1 - abs(a.mean(a.d) - b.mean(b.d)) / 2),
            "f_dist": nan_none(w1(a, b)), "f_dist_y0": nan_none(w1(a.outcome(0), b.outcome(0))),
            "f_dist_y1": nan_none(w1(a.outcome(1), b.outcome(1))),
            "f_h": nan_none(f_h(knees_i, knees_j, knees_pooled)), "f_v": nan_none(f_v(knees_i, knees_j, knees_pooled))}


def threshold_invariance(pred: Predictions, attribute: str | None = None,
                         thresholds: tuple[float, ...] = THRESHOLDS, knees: KneeParams = KneeParams(),
                         audit: ResidualAudit | None = None) -> ThresholdInvarianceResult:
    """CV of every metric over ``thresholds`` for each group pair. With ``audit`` (the Residual page's analysis of
    the same data and attribute) its RDF metrics are reused instead of recomputed."""
    if not spec_of(pred).thresholded:
        raise DataError(f"Threshold invariance needs a binary task; this is a {pred.task}, which has no threshold τ.")
    view = pred.groups(attribute)
    names = list(view.names)
    confusion = {t: confusion_by_group(pred.y, decisions(pred.score, t), view.codes, len(names), weights=pred.weight)
                 for t in thresholds}
    rdf_of = _from_audit(audit) if audit is not None else _rdf_metrics(pred, view, knees)
    pairs = []
    for i, j in pred.limits.pair_indices(len(names)):         # the pairs every pair table covers (bounded)
        rdf = rdf_of(i, j, names)                            # no τ in any RDF metric: computed once
        values: dict[str, list] = {m: [] for m in RDF_METRICS + GAP_METRICS}
        for t in thresholds:
            row = {**rdf, **gaps_at(confusion[t][i], confusion[t][j])}
            for m in values:
                values[m].append(row[m])
        cv, reasons = {}, {}
        for m, series in values.items():
            cv[m], reason = coefficient_of_variation(series)
            if cv[m] is None:
                reasons[m] = reason
        pairs.append(PairInvariance(names[i], names[j], values, cv, reasons))
    return ThresholdInvarianceResult(view.attribute, tuple(thresholds), pairs)


def _from_audit(audit: ResidualAudit):
    def rdf(i: int, j: int, names: list[str]) -> dict:
        p = audit.pair(names[i], names[j])
        return {m: (None if not np.isfinite(getattr(p, m)) else float(getattr(p, m))) for m in RDF_METRICS}
    return rdf


def _rdf_metrics(pred: Predictions, view, knees: KneeParams):
    d = residuals(pred.score, pred.y)
    members = [np.flatnonzero(view.codes == g) for g in range(len(view.names))]
    groups = sort_groups(pred, d, members)                     # each group sorted once (weighted: entries)
    cells = search_cells(pred)
    group_knees = [knees_of(g, knees, cells) for g in groups]

    def rdf(i: int, j: int, names: list[str]) -> dict:
        pooled = pooled_knees(groups[i], groups[j], knees, cells)
        return rdf_at(groups[i], groups[j], group_knees[i], group_knees[j], pooled)
    return rdf
