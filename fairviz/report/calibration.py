"""The calibration section of the audit: its JSON (``calibration``, ``calibration_details``) and its HTML."""
from __future__ import annotations

import html

from fairviz.calibration import OVERALL, CalibrationAudit, analyse
from fairviz.calibration import figures as figs
from fairviz.core.wording import fmt_p
from fairviz.data import Predictions
from fairviz.report.html import figure_div, table
from fairviz.report.options import AuditParams, Section


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
                "p_value_bonferroni": diff.p_value,
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


def report_sections(pred, cal: CalibrationAudit, audit: dict) -> list[tuple[str, str]]:
    """The calibration part of the HTML report: diagrams, errors, tests and performance, as on the page."""
    details = audit["calibration_details"]
    rows = []
    for g in cal.all_groups:
        d = details["groups"].get(g.name, {})
        lin = g.linear
        rows.append({"group": g.name, "n": g.n, "n_pos": g.n_pos, "ece": g.ece, "smooth_ece": g.smooth_ece,
                     "intercept": lin.intercept.estimate if lin.intercept else None,
                     "slope": lin.slope.estimate if lin.slope else None,
                     "p_joint": lin.joint.p if lin.joint else None, "p_bh": d.get("lr_p_value_bh"),
                     "p_nonlinear": d.get("nonlinear_p_value"), "auroc": g.performance.auroc,
                     "log_loss": g.performance.log_loss, "brier": g.performance.brier,
                     "status": lin.status or "tested"})
    diff = cal.difference
    diff_text = (f"Does calibration differ by group? p {fmt_p(diff.p_value)} (the smaller of two likelihood-ratio "
                 "tests, Bonferroni-corrected). Group-specific intercept and slope vs shared: "
                 f"χ²({diff.linear.df}) = "
                 f"{diff.linear.statistic:.2f}, p {fmt_p(diff.linear.p)}; calibration-in-the-large: χ²({diff.in_the_large.df})"
                 f" = {diff.in_the_large.statistic:.2f}, p {fmt_p(diff.in_the_large.p)}."
                 if diff.linear else f"Group comparison: {diff.status}.")
    notes = "".join(f"<p class='warn'>{html.escape(n)}</p>" for n in cal.notes)
    return [
        ("Calibration: reliability diagrams", figure_div(figs.reliability_figure(cal, strategy=cal.params.strategy))
         + notes),
        ("Calibration errors and tests", figure_div(figs.errors_figure(cal)) + figure_div(figs.coefficient_figure(cal)) + table(rows, [
            ("group", "Group"), ("n", "n"), ("n_pos", "Positives"), ("ece", "ECE"), ("smooth_ece", "Smooth ECE"),
            ("intercept", "β₀"), ("slope", "β₁ (slope)"), ("p_joint", "p (β₀=β₁=0, LR)"), ("p_bh", "p (BH)"),
            ("p_nonlinear", "p (non-linear)"), ("status", "Test")]) + f"<p>{html.escape(diff_text)}</p>"),
        ("Subgroup performance with uncertainty", figure_div(figs.performance_figure(cal)) + table(rows, [
            ("group", "Group"), ("n", "n"), ("auroc", "AUROC"), ("log_loss", "Log-loss"), ("brier", "Brier")])),
    ]


def _run(pred: Predictions, options: AuditParams) -> CalibrationAudit:
    return analyse(pred, options.attribute, options.calibration, progress=options.progress)


SECTION = Section("calibration", _run, lambda pred, result, options: calibration_to_dict(result), report_sections,
                  weighted=True)
