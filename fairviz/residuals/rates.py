"""Rates from residuals ([1] Theorem 6.1): PPR, TPR and FPR at any threshold τ are read off the residual CDFs."""
from __future__ import annotations

import numpy as np

from fairviz.core.counts import confusion_by_group, decisions, difference
from fairviz.data import Predictions
from fairviz.residuals.metrics import residuals
from fairviz.residuals.results import ThresholdCheckResult


def rates_from_residuals(d: np.ndarray, y: np.ndarray, tau: float, w: np.ndarray | None = None) -> dict:
    """Theorem 6.1: PPR, TPR and FPR at threshold τ from the outcome-conditional residual survival functions
    (``w``: rows per entry of weighted data)."""
    w0, w1 = (None, None) if w is None else (w[y == 0], w[y == 1])
    d0, d1 = d[y == 0], d[y == 1]
    base = float(np.average(y, weights=w)) if y.size else float("nan")
    s0 = float(np.average(d0 >= tau, weights=w0)) if d0.size else None          # FPR = S⁽⁰⁾(τ)
    s1 = float(np.average(d1 >= tau - 1, weights=w1)) if d1.size else None      # TPR = S⁽¹⁾(τ − 1)
    ppr = (1 - base) * (s0 or 0.0) + base * (s1 or 0.0) if y.size else None
    return {"ppr": ppr, "tpr": s1, "fpr": s0}


def threshold_check(pred: Predictions, attribute: str | None, threshold: float) -> ThresholdCheckResult:
    view = pred.groups(attribute)
    d = residuals(pred.score, pred.y)
    confusion = confusion_by_group(pred.y, decisions(pred.score, threshold), view.codes, len(view.names),
                                   weights=pred.weight)
    direct, derived, counts = {}, {}, {}
    for g, name in enumerate(view.names):
        c = confusion[g]
        counts[name] = c
        direct[name] = {"ppr": c.ppr(), "tpr": c.tpr(), "fpr": c.fpr()}
        mask = view.codes == g
        derived[name] = rates_from_residuals(d[mask], pred.y[mask], threshold,
                                             None if pred.weight is None else pred.weight[mask])
    gaps = []
    for i, j in pred.limits.pair_indices(len(view.names)):
        a, b = view.names[i], view.names[j]
        row = {"group_i": a, "group_j": b}
        for source, rates in (("direct", direct), ("residual", derived)):
            row[f"dp_diff_{source}"] = difference(rates[a]["ppr"], rates[b]["ppr"])
            row[f"eo_tpr_diff_{source}"] = difference(rates[a]["tpr"], rates[b]["tpr"])
            row[f"eo_fpr_diff_{source}"] = difference(rates[a]["fpr"], rates[b]["fpr"])
        gaps.append(row)
    return ThresholdCheckResult(threshold, list(view.names), direct, derived, counts, gaps)
