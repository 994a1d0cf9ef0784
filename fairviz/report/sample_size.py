"""The sample-size significance section of the audit: MATCH per group and metric, CPS smoothing (JSON and HTML)."""
from __future__ import annotations

import html
from dataclasses import dataclass

from fairviz.data import Predictions
from fairviz.data.groups import group_counts
from fairviz.report.html import figure_div, table
from fairviz.report.options import AuditParams, Section
from fairviz.sample_size import figures as figs
from fairviz.sample_size.analysis import CPSRow, MatchAudit, cps_groups, match_groups, verdict


@dataclass(frozen=True)
class SignificanceResult:
    match: MatchAudit
    cps: list[CPSRow]
    cps_lambda: float


def significance_run(pred: Predictions, options: AuditParams) -> SignificanceResult:
    view = pred.groups(options.attribute)
    counts = group_counts(pred, view, options.threshold, options.benefit)
    matched = match_groups(view.attribute, view.names, counts, options.match)
    smoothed = cps_groups(view.names, counts, options.cps_lambda, options.match.reference)
    return SignificanceResult(matched, smoothed, options.cps_lambda)


def significance_to_dict(pred: Predictions, result: SignificanceResult, options: AuditParams) -> dict:
    match = {name: {r.metric: r.to_dict() for r in result.match.results if r.group == name}
             for name in result.match.names}
    cps = {row.group: {**row.smoothed.to_dict(), "lambda": result.cps_lambda, "n": row.n} for row in result.cps}
    return {"match": match, "cps": cps}


def significance_html(pred, result: SignificanceResult, data: dict) -> list[tuple[str, str]]:
    audit = result.match
    flagged = sorted(audit.significant(), key=lambda r: r.p_adjusted)
    words = "".join(f"<li>{html.escape(r.group)}: {html.escape(verdict(r, audit.params.alpha, audit.reference_label))}"
                    "</li>" for r in flagged[:20])
    summary = (f"<p>{len(flagged)} of {sum(r.p_value is not None for r in audit.results)} tested group × metric "
               f"results differ from {html.escape(audit.reference_label)} beyond sampling noise (Benjamini–Hochberg "
               f"adjusted p &lt; {audit.params.alpha:g}).</p>" + (f"<ul>{words}</ul>" if words else ""))
    cps_rows = [{"group": r.group, "n": r.n, "tp": r.smoothed.tp, "fn": r.smoothed.fn, "fp": r.smoothed.fp,
                 "tn": r.smoothed.tn, "tpr_raw": r.raw_metrics["tpr"], "tpr_cps": r.smoothed_metrics["tpr"],
                 "mcc_raw": r.raw_metrics["mcc"], "mcc_cps": r.smoothed_metrics["mcc"]} for r in result.cps]
    return [
        ("Sample-size significance (MATCH)", figure_div(figs.match_map(audit)) + summary),
        (f"Cross-Prior Smoothing (λ = {result.cps_lambda:g})", table(cps_rows, [
            ("group", "Group"), ("n", "n"), ("tp", "TP"), ("fn", "FN"), ("fp", "FP"), ("tn", "TN"),
            ("tpr_raw", "TPR raw"), ("tpr_cps", "TPR smoothed"), ("mcc_raw", "MCC raw"),
            ("mcc_cps", "MCC smoothed")])),
    ]


SECTION = Section("significance", significance_run, significance_to_dict, significance_html, weighted=True)
