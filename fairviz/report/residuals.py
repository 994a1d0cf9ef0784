"""The residual-distribution section of the audit: its JSON (groups, pairs, knees, knee concentration) and HTML."""
from __future__ import annotations

import html
import weakref

import numpy as np
import pandas as pd

from fairviz.core.counts import confusion_by_group, decisions, difference
from fairviz.data import Predictions
from fairviz.data.engine import Engine, SufficientStats
from fairviz.report.html import figure_div, table
from fairviz.residuals import figures as figs
from fairviz.report.options import AuditParams, Section
from fairviz.residuals.analysis import ResidualAudit, analyse, threshold_check
from fairviz.residuals.threshold_invariance import ThresholdInvariance, invariance_figure, threshold_invariance


def rdf_to_dict(pred: Predictions, rdf: ResidualAudit, threshold: float) -> dict:
    view = pred.groups(rdf.attribute)
    confusion = confusion_by_group(pred.y, decisions(pred.score, threshold), view.codes, len(view.names),
                                   weights=pred.weight)
    groups = {}
    for summary, counts in zip(rdf.groups, confusion):
        groups[summary.name] = {
            "n": summary.n, "positives": summary.positives, "base_rate": summary.base_rate,
            "tp": counts.tp, "fp": counts.fp, "tn": counts.tn, "fn": counts.fn,
            "ppr": counts.ppr(), "tpr": counts.tpr(), "fpr": counts.fpr(),
            "mean_score": summary.mean_score, "mean_residual": summary.mean_residual,
            "median_residual": summary.median_residual, "median_residual_y0": summary.median_residual_y0,
            "median_residual_y1": summary.median_residual_y1,
            "ece": summary.ece, "ece_regime": summary.ece_regime, "knee_rows": summary.knee_rows,
        }
    rates = dict(zip(view.names, confusion))
    pairs = []
    for pair in rdf.pairs:
        a, b = rates[pair.group_i], rates[pair.group_j]
        pairs.append({
            "group_i": pair.group_i, "group_j": pair.group_j,
            "f_pattern": pair.f_pattern, "f_dist": pair.f_dist, "f_h": pair.f_h, "f_v": pair.f_v,
            "f_h_abs": pair.f_h_abs, "f_v_abs": pair.f_v_abs,
            "f_pattern_y0": pair.f_pattern_y0, "f_pattern_y1": pair.f_pattern_y1, "f_pattern_mean": pair.f_pattern_mean,
            "f_dist_y0": pair.f_dist_y0, "f_dist_y1": pair.f_dist_y1,
            "ci": {name: interval.to_list() for name, interval in pair.ci.items()},
            "p_value_median": pair.p_median, "p_value_dist": pair.p_dist,
            "dp_diff": difference(a.ppr(), b.ppr()), "eo_tpr_diff": difference(a.tpr(), b.tpr()),
            "eo_fpr_diff": difference(a.fpr(), b.fpr()),
            "mean_decomposition": pair.mean_decomposition, "warnings": list(pair.warnings),
        })
    c = rdf.concentration
    return {
        "groups": groups,
        "pairs": pairs,
        "knees": {g.name: [k.to_dict() for k in g.knees] for g in rdf.groups},
        "knee_concentration": {
            "ratio": c.ratio, "ratio_ci": c.ratio_ci.to_list(), "p_value": c.mann_whitney.p_two_sided,
            "p_value_greater": c.mann_whitney.p_greater, "ece": c.ece, "ece_ci": c.ece_ci.to_list(),
            "regime": c.regime, "verdict": c.verdict, "borderline": c.borderline,
            "knee_mean_abs_residual": c.knee_mean, "nonknee_mean_abs_residual": c.nonknee_mean,
            "n_knee": c.n_knee, "n_nonknee": c.n_nonknee,
            "region": {"mode": rdf.params.region_mode, "eps": rdf.params.region_eps},
        },
        "rdf_settings": {"resamples": rdf.params.resamples, "knee_resamples": rdf.params.knee_resamples,
                         "seed": rdf.params.seed, "lowess_frac": rdf.params.knees.frac,
                         "lowess_iterations": rdf.params.knees.iterations,
                         "kneedle_sensitivity": rdf.params.knees.sensitivity},
        "warnings": list(rdf.warnings),
    }


def residual_sections(pred, rdf, audit: dict) -> list[tuple[str, str]]:
    """The RDF part of the report: curves, outcome panels, the per-group and per-pair tables."""
    hover = pred.row_labels() if pred.weight is None else _ExpandedRowLabels()
    group_rows = [{"group": name, **values} for name, values in audit["groups"].items()]
    pair_rows = [{**p, "pair": f"{p['group_i']} vs {p['group_j']}"} for p in audit["pairs"]]
    c = audit["knee_concentration"]
    check = threshold_check(pred, rdf.attribute, audit["threshold"])
    return [
        ("Sorted residuals", figure_div(figs.sorted_residual_plot(rdf, hover_labels=hover))
         + figure_div(figs.outcome_panels(rdf, hover_labels=hover))),
        ("Groups", table(group_rows, [("group", "Group"), ("n", "n"), ("base_rate", "Base rate"),
                                       ("ppr", "Positive rate"), ("tpr", "TPR"), ("fpr", "FPR"),
                                       ("median_residual", "Median residual"), ("ece", "ECE"),
                                       ("ece_regime", "Regime")])),
        ("Residual distribution metrics per pair", table(pair_rows, [
            ("pair", "Pair (i vs j)"), ("f_pattern", "F_pattern"), ("f_dist", "F_dist (W1)"), ("f_h", "F_h"),
            ("f_v", "F_v"), ("p_value_median", "p (medians)"), ("p_value_dist", "p (F_dist)"),
            ("dp_diff", "DP gap (i−j)"), ("eo_tpr_diff", "TPR gap"), ("eo_fpr_diff", "FPR gap")])),
        ("Theorem 6.1: rates from residuals", figure_div(figs.threshold_figure(check))),
        ("Knee error concentration", figure_div(figs.concentration_figure(rdf)) + html.escape(
            f"Verdict: {c['verdict']}{' (borderline)' if c['borderline'] else ''}; ") + html.escape(
            rdf.concentration.explanation)),
    ]


class _ExpandedRowLabels:
    """Hover labels of weighted data, made only for the rows a figure draws (≤ 2,000 per curve): curves index rows of
    ``Predictions.rows()`` (the table carries no id column), so a 20M-row audit never builds 20M label strings."""

    def __getitem__(self, rows) -> np.ndarray:
        return np.array([f"row {i}" for i in np.asarray(rows).ravel()], dtype=object)


# The residual section's audit while someone still holds it (the audit runner, until its JSON is written): the
# threshold-invariance section reads its RDF metrics instead of re-detecting every knee (weak: never kept alive here).
_AUDITS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _audit_key(pred: Predictions, options: AuditParams):
    return (pred.fingerprint, options.attribute, options.rdf.knees) if pred.fingerprint else None


def _run(pred: Predictions, options: AuditParams) -> ResidualAudit:
    audit = analyse(pred, options.attribute, options.rdf, progress=options.progress)
    if (key := _audit_key(pred, options)) is not None:
        _AUDITS[key] = audit
    return audit


def _run_invariance(pred: Predictions, options: AuditParams) -> ThresholdInvariance:
    key = _audit_key(pred, options)
    audit = _AUDITS.get(key) if key is not None else None
    return threshold_invariance(pred, options.attribute, knees=options.rdf.knees, audit=audit)


SECTION = Section("residuals", _run, lambda pred, result, options: rdf_to_dict(pred, result, options.threshold),
                  residual_sections, weighted=True)


# ----------------------------------------------------------------------------------------------- threshold invariance

def invariance_to_dict(result: ThresholdInvariance) -> dict:
    return {"threshold_invariance": result.to_dict()}


def invariance_sections(pred, result: ThresholdInvariance, audit: dict) -> list[tuple[str, str]]:
    rows = [{"pair": f"{p.group_i} vs {p.group_j}", **p.cv} for p in result.pairs]
    columns = [("pair", "Pair (i vs j)"), ("f_pattern", "F_pattern CV%"), ("f_dist", "F_dist CV%"),
               ("dp_diff", "DP gap CV%"), ("eo_tpr_diff", "TPR gap CV%"), ("eo_fpr_diff", "FPR gap CV%"),
               ("dp_ratio", "DP ratio CV%"), ("eo_ratio", "EO ratio CV%")]
    return [("Threshold invariance (τ = 0.1…0.9)", figure_div(invariance_figure(result)) + table(rows, columns)
             + html.escape(result.reading()))]


THRESHOLD_SECTION = Section("threshold_invariance", _run_invariance,
                            lambda pred, result, options: invariance_to_dict(result), invariance_sections,
                            weighted=True)


# ----------------------------------------------------------------------------------------------- D* rows

def dstar_rows(engine: Engine, source, stats: SufficientStats, pred: Predictions,
               residuals: ResidualAudit) -> pd.DataFrame:
    """The input rows of D* with all their columns, ahead of them the residual D = score − Y, the knee that put the
    row in D* and its group as analysed (an intersection gets its own name)."""
    segments = residuals.d_star_segments().rename(columns={"knee": "__fv_knee"})
    entries = segments["entry"].to_numpy(dtype=np.int64)
    view = pred.groups(residuals.attribute)
    segments["__fv_y"] = pred.y[entries]
    segments["__fv_group"] = np.asarray(view.names, dtype=object)[view.codes[entries]]
    rows = engine.rows_of_entries(source, stats, segments)
    if rows.empty:
        return rows
    added = pd.DataFrame({
        "residual D": pd.to_numeric(rows[stats.mapping.score], errors="coerce") - rows.pop("__fv_y").astype(float),
        "nearest knee": rows.pop("__fv_knee"), f"{residuals.attribute} (analysed)": rows.pop("__fv_group")})
    return pd.concat([added, rows], axis=1)
