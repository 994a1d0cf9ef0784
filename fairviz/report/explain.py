"""The explanation-disparity section of the headless audit (``fairviz audit --explain``).

It runs only when asked (``AuditParams.explain``) and only on predictions with a text column: the model under
audit is not available to fairviz, so a tiny BERT is trained on the texts and labels and its explanations are
compared between the groups of the audited attribute (the two largest groups).
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fairviz.data import Predictions
from fairviz.explain import data as xdata
from fairviz.explain import figures as figs
from fairviz.explain.disparity import DisparityReport, compare, disparity_json, model_warnings
from fairviz.explain.models import ModelParams
from fairviz.explain.results import ExplainResult
from fairviz.explain.run import ExplainParams, run
from fairviz.report.html import figure_div, table
from fairviz.report.options import AuditParams, Section


@dataclass(frozen=True)
class ExplainAuditParams:
    model: ModelParams = field(default_factory=ModelParams)
    settings: ExplainParams = field(default_factory=ExplainParams)
    alpha: float = 0.05
    correction: str = "none"


@dataclass(frozen=True)
class ExplainSection:
    """What the audit found: the explanations and their comparison, computed once; or why the section was skipped."""
    result: ExplainResult | None = None
    report: DisparityReport | None = None
    skipped: str = ""

    def warnings(self) -> list[str]:
        return [text for _, text in model_warnings(self.result)] if self.result is not None else []


def run_section(pred: Predictions, attribute: str, options: ExplainAuditParams, progress=None) -> ExplainSection:
    """Train, explain and compare the two largest groups, or say why the audit cannot include this section."""
    if not pred.mapping.text:
        return ExplainSection(skipped="no text column is mapped, so there is nothing to explain")
    view = pred.groups(attribute)
    frame = pd.DataFrame({"text": pred.texts(), "label": pred.y.astype(int),
                          "group": np.asarray(view.names, dtype=object)[view.codes]})
    dataset = xdata.from_frame(frame, "text", "label", "group", positive_label=1, title=pred.source, key="audit")
    result = run(dataset, options.model, options.settings, progress=progress)
    return ExplainSection(result, compare(result, alpha=options.alpha, correction=options.correction))


def section_dict(found: ExplainSection) -> dict:
    if found.result is None:
        return {"explanations": {"skipped": found.skipped}}
    return {"explanations": disparity_json(found.result, found.report, found.warnings())}


def section_html(found: ExplainSection) -> list[tuple[str, str]]:
    if found.result is None:
        return [("Explanation disparity", f"<p class='note'>Skipped: {html.escape(found.skipped)}.</p>")]
    result, report = found.result, found.report
    warnings = "".join(f"<li class='warn'>{html.escape(t)}</li>" for t in found.warnings())
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


def _run(pred: Predictions, options: AuditParams) -> ExplainSection | None:
    return None if options.explain is None else run_section(pred, options.attribute, options.explain, options.progress)


SECTION = Section("explanations", _run,
                  lambda pred, found, options: {} if found is None else section_dict(found),
                  lambda pred, found, audit: [] if found is None else section_html(found))
