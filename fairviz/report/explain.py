"""The explanation-disparity section of the headless audit (``fairviz audit --explain``).

It runs only when asked (``AuditOptions.explain``) and only on predictions with a text column: the model under
audit is not available to fairviz, so a tiny BERT is trained on the texts and labels and its explanations are
compared between the groups of the audited attribute (the two largest groups).
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fairviz.core.data import Predictions
from fairviz.explain.disparity import compare, disparity_json, model_warnings
from fairviz.explain import data as xdata
from fairviz.explain import figures as figs
from fairviz.explain.run import ExplainSettings, run
from fairviz.report.html import figure_div, table
from fairviz.report.options import AuditOptions, Section
from fairviz.explain.models import ModelSpec


@dataclass(frozen=True)
class ExplainAuditOptions:
    model: ModelSpec = field(default_factory=ModelSpec)
    settings: ExplainSettings = field(default_factory=ExplainSettings)
    alpha: float = 0.05
    correction: str = "none"


def run_section(pred: Predictions, attribute: str, options: ExplainAuditOptions, progress=None):
    """(result, None) after explaining, or (None, reason) when the audit cannot include this section."""

    if not pred.mapping.text:
        return None, "no text column is mapped, so there is nothing to explain"
    view = pred.groups(attribute)
    frame = pd.DataFrame({"text": pred.texts(), "label": pred.y.astype(int),
                          "group": np.asarray(view.names, dtype=object)[view.codes]})
    dataset = xdata.from_frame(frame, "text", "label", "group", positive_label=1, title=pred.source, key="audit")
    return run(dataset, options.model, options.settings, progress=progress), None


def section_dict(found, options: ExplainAuditOptions) -> dict:
    result, reason = found
    if result is None:
        return {"explanations": {"skipped": reason}}
    report = compare(result, alpha=options.alpha, correction=options.correction)
    return {"explanations": disparity_json(result, report, [t for _, t in model_warnings(result)])}


def section_html(found, options: ExplainAuditOptions) -> list[tuple[str, str]]:

    result, reason = found
    if result is None:
        return [("Explanation disparity", f"<p class='note'>Skipped: {html.escape(reason)}.</p>")]
    report = compare(result, alpha=options.alpha, correction=options.correction)
    warnings = "".join(f"<li class='warn'>{html.escape(t)}</li>" for _, t in model_warnings(result))
    rows = [{**c.to_dict(), "pair": f"{c.method} / {c.metric}", "median_i": c.median_i, "median_j": c.median_j,
             "ci_text": f"[{c.ci.low:.2f}, {c.ci.high:.2f}]" if np.isfinite(c.ci.low) else "—",
             "significant": "yes" if c.significant else "no"} for c in report.cells]
    gi, gj = report.groups
    return [
        ("Explanation disparity", (f"<ul>{warnings}</ul>" if warnings else "")
         + figure_div(figs.metric_boxplots(result, report)) + figure_div(figs.disparity_heatmap(report))
         + table(rows, [("pair", "Method / metric"), ("median_i", f"Median {gi}"), ("median_j", f"Median {gj}"),
                        ("p_value", "p (Mann–Whitney)"), ("p_adjusted", "p (BH)"), ("cohens_d", f"d ({gi} − {gj})"),
                        ("ci_text", "d 95% CI"), ("significant", "Significant")])),
    ]


def _run(pred: Predictions, options: AuditOptions):
    return None if options.explain is None else run_section(pred, options.attribute, options.explain, options.progress)


def _to_dict(pred: Predictions, found, options: AuditOptions) -> dict:
    return {} if found is None else section_dict(found, options.explain)


def _to_html(pred: Predictions, found, audit: dict) -> list[tuple[str, str]]:
    if found is None:
        return []
    tests = audit.get("explanations", {})
    return section_html(found, ExplainAuditOptions(alpha=tests.get("alpha", 0.05),
                                                   correction=tests.get("correction", "none")))


SECTION = Section("explanations", _run, _to_dict, _to_html)
