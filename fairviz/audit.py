"""The headless audit: one JSON-able dict from validated predictions, the same numbers the pages show.

Each analysis contributes a section through ``SECTIONS``: a function ``(predictions, options) → dict`` whose
keys are merged into the audit. Later pages register their own section here, so the CLI, the page downloads
and the HTML report never disagree.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

from . import __version__, parity_audit
from .calibration import CalibrationAudit, CalibrationParams, OVERALL
from .calibration import analyse as calibration_analyse
from .counts import confusion_by_group, decisions, difference
from .data import Predictions
from .residuals import RDFParams, ResidualAudit, analyse
from .significance import MatchParams
from .stats import Interval


@dataclass(frozen=True)
class AuditOptions:
    attribute: str | None = None
    threshold: float = 0.5
    rdf: RDFParams = field(default_factory=RDFParams)
    calibration: CalibrationParams = field(default_factory=CalibrationParams)
    progress: Callable[[float, str], None] | None = None
    benefit: str = "positive"            # which prediction is the benefit for parity/MATCH ("negative": COMPAS-style)
    match: MatchParams = field(default_factory=MatchParams)
    cps_lambda: float = 5.0
    explain: Any = None          # fairviz.explain.audit.ExplainAuditOptions: adds the explanation-disparity section


@dataclass(frozen=True)
class Section:
    """One analysis in the audit: ``run`` computes its result; ``to_dict`` and ``to_html`` render it."""
    name: str
    run: Callable[[Predictions, AuditOptions], Any]
    to_dict: Callable[[Predictions, Any, AuditOptions], dict]
    to_html: Callable[[Predictions, Any, dict], list[tuple[str, str]]]


def _residual_run(pred: Predictions, options: AuditOptions) -> ResidualAudit:
    return analyse(pred, options.attribute, options.rdf, progress=options.progress)


def _residual_html(pred, result, audit):
    from .report import residual_sections
    return residual_sections(pred, result, audit)


def _calibration_run(pred: Predictions, options: AuditOptions) -> CalibrationAudit:
    return calibration_analyse(pred, options.attribute, options.calibration, progress=options.progress)


def _calibration_html(pred, result, audit):
    from .figures.calibration import report_sections
    return report_sections(pred, result, audit)


def _explain_run(pred: Predictions, options: AuditOptions):
    if options.explain is None:
        return None
    from .explain.audit import run_section
    return run_section(pred, options.attribute, options.explain, options.progress)


def _explain_dict(pred, found, options: AuditOptions) -> dict:
    if found is None:
        return {}
    from .explain.audit import section_dict
    return section_dict(found, options.explain)


def _explain_html(pred, found, audit):
    if found is None:
        return []
    from .explain.audit import ExplainAuditOptions, section_html
    tests = audit.get("explanations", {})
    return section_html(found, ExplainAuditOptions(alpha=tests.get("alpha", 0.05),
                                                   correction=tests.get("correction", "none")))


SECTIONS: list[Section] = [
    Section("residuals", _residual_run, lambda pred, r, o: rdf_to_dict(pred, r, o.threshold), _residual_html),
    Section("calibration", _calibration_run, lambda pred, r, o: calibration_to_dict(r), _calibration_html),
    Section("parity", parity_audit.parity_run, parity_audit.parity_to_dict, parity_audit.parity_html),
    Section("significance", parity_audit.significance_run, parity_audit.significance_to_dict,
            parity_audit.significance_html),
    Section("explanations", _explain_run, _explain_dict, _explain_html),
]


@dataclass
class Audit:
    data: dict                                  # the JSON
    results: dict = field(default_factory=dict)  # section name → result object (for figures)
    pred: Predictions | None = None

    def to_html(self) -> str:
        from .report import render_html
        sections = []
        for section in SECTIONS:
            if section.name in self.results:
                sections += section.to_html(self.pred, self.results[section.name], self.data)
        return render_html(self.data, sections)


def run_audit(pred: Predictions, options: AuditOptions = AuditOptions()) -> Audit:
    attribute = options.attribute or pred.attribute_names[0]
    options = replace(options, attribute=attribute)
    data = {
        "fairviz_version": __version__,
        "source": pred.source,
        "n_rows": pred.n,
        "threshold": options.threshold,
        "attribute": attribute,
        "mapping": pred.mapping.to_dict(),
        "notes": list(pred.notes),
    }
    results = {}
    for section in SECTIONS:
        results[section.name] = section.run(pred, options)
        merge_section(data, section.to_dict(pred, results[section.name], options))
    return Audit(clean(data), results, pred)


def merge_section(data: dict, part: dict) -> None:
    """Add one section's keys to the audit: ``pairs`` entries are merged by (group_i, group_j) and ``groups``
    entries by group name, so every section extends the same pair and group records instead of replacing them."""
    for key, value in part.items():
        if key == "pairs" and "pairs" in data:
            index = {(p["group_i"], p["group_j"]): p for p in data["pairs"]}
            for entry in value:
                existing = index.get((entry["group_i"], entry["group_j"]))
                if existing is None:
                    data["pairs"].append(entry)
                else:
                    existing.update(entry)
        elif key == "groups" and isinstance(data.get("groups"), dict):
            for name, fields in value.items():
                data["groups"].setdefault(name, {}).update(fields)
        else:
            data[key] = value


def rdf_to_dict(pred: Predictions, rdf: ResidualAudit, threshold: float) -> dict:
    view = pred.groups(rdf.attribute)
    confusion = confusion_by_group(pred.y, decisions(pred.score, threshold), view.codes, len(view.names))
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


def calibration_to_dict(cal: CalibrationAudit) -> dict:
    """``calibration.<group>`` and ``calibration.overall`` with exactly the keys the issue names; everything else
    (intervals, n, tests not in that list, group comparison, settings) under ``calibration_details``."""
    calibration, details = {}, {}
    for g in cal.all_groups:
        key = g.name if g.name != OVERALL or g is cal.overall else f"{g.name} (group)"
        linear = g.linear
        table = g.reliability[cal.params.strategy]
        calibration[key] = {
            "ece": g.ece, "smooth_ece": g.smooth_ece,
            "intercept": linear.intercept.estimate if linear.intercept else None,
            "intercept_p": linear.intercept.p if linear.intercept else None,
            "slope": linear.slope.estimate if linear.slope else None,
            "slope_p": linear.slope.p if linear.slope else None,
            "lr_p_value": linear.joint.p if linear.joint else None,
            "bins": [{"lower": row["lower"], "upper": row["upper"], "n": row["n"], "n_pos": row["n_pos"],
                      "mean_pred": row["mean_pred"], "observed": row["observed"], "ci_low": row["ci_low"],
                      "ci_high": row["ci_high"]} for row in table.rows()],
        }
        perf = g.performance
        details[key] = {
            "n": g.n, "n_pos": g.n_pos, "mean_score": g.mean_score, "observed_rate": g.observed_rate,
            "n_clipped": g.n_clipped, "status": linear.status or None,
            "ece_ci": g.ece_ci, "ece_regime": g.ece_regime, "smooth_ece_ci": g.smooth_ece_ci,
            "smooth_ece_bandwidth": g.smooth_sigma,
            "intercept_se": linear.intercept.se if linear.intercept else None,
            "slope_se": linear.slope.se if linear.slope else None,
            "calibration_slope": linear.calibration_slope if linear.slope else None,
            "lr_statistic": linear.joint.statistic if linear.joint else None,
            "calibration_in_the_large": linear.in_the_large.estimate if linear.in_the_large else None,
            "calibration_in_the_large_p": linear.in_the_large.p if linear.in_the_large else None,
            "lr_p_value_bh": g.joint_p_adjusted if g is not cal.overall else None,
            "nonlinear_p_value": g.spline.vs_linear.p if g.spline.vs_linear else None,
            "nonlinear_p_value_bh": g.nonlinear_p_adjusted if g is not cal.overall else None,
            "spline_vs_calibrated_p_value": g.spline.vs_calibrated.p if g.spline.vs_calibrated else None,
            "spline_status": g.spline.status or None,
            "auroc": perf.auroc, "auroc_ci": perf.auroc_ci, "log_loss": perf.log_loss, "log_loss_ci": perf.log_loss_ci,
            "brier": perf.brier, "brier_ci": perf.brier_ci, "performance_status": perf.status or None,
        }
    diff = cal.difference
    return {
        "calibration": calibration,
        "calibration_details": {
            "groups": details,
            "group_difference": {
                "groups_tested": list(diff.groups), "excluded": list(diff.excluded), "reference": diff.reference,
                "lr_statistic": diff.linear.statistic if diff.linear else None,
                "df": diff.linear.df if diff.linear else None,
                "p_value": diff.linear.p if diff.linear else None,
                "in_the_large_lr_statistic": diff.in_the_large.statistic if diff.in_the_large else None,
                "in_the_large_p_value": diff.in_the_large.p if diff.in_the_large else None,
                "status": diff.status or None,
            },
            "pairs": [{"group_i": p.group_i, "group_j": p.group_j, "ece_diff": p.ece_diff, "ece_diff_ci": p.ece_diff_ci,
                       "smooth_ece_diff": p.smooth_ece_diff, "smooth_ece_diff_ci": p.smooth_ece_diff_ci}
                      for p in cal.pairs],
            "settings": {"n_bins": cal.params.n_bins, "strategy": cal.params.strategy, "ci_method": cal.params.ci_method,
                         "level": cal.params.level, "spline_knots": cal.params.spline_knots,
                         "resamples": cal.params.resamples, "seed": cal.params.seed,
                         "min_events": cal.params.min_events},
            "notes": list(cal.notes),
        },
    }


def clean(value):
    """Make a result JSON-safe: NaN/inf → None, numpy scalars → Python, intervals → [low, high]."""
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if isinstance(value, Interval):
        return value.to_list()
    if isinstance(value, np.ndarray):
        return [clean(v) for v in value.tolist()]
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value
