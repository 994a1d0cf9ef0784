"""A self-contained HTML report of an audit: plotly.js inline once, every user string escaped, no network."""
from __future__ import annotations

import html
import json
from datetime import datetime, timezone

from plotly.offline import get_plotlyjs

from fairviz.data.scales import score_statement
from fairviz.data.tasks import spec_of


_STYLE = """
body{font-family:Inter,Segoe UI,Helvetica,Arial,sans-serif;max-width:1200px;margin:2rem auto;padding:0 1rem;color:#1f1f1f}
h1{font-size:1.8rem}h2{margin-top:2.2rem;border-bottom:2px solid #0072B2;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.95rem}th,td{border:1px solid #ccc;padding:.3rem .6rem;text-align:right}
th{background:#f3f6fa}td:first-child,th:first-child{text-align:left}.note{color:#555}.warn{color:#8a4b00}
.caveat{color:#8a4b00}.error{color:#a00}ul.finding,p.finding{background:#f3f6fa;border-left:4px solid #0072B2;
padding:.5rem .8rem .5rem 1.6rem}.metrics{display:flex;flex-wrap:wrap;gap:1.5rem;margin:.6rem 0}
.metric-label{color:#555;font-size:.9rem}.metric-value{font-size:1.5rem;font-weight:600}
"""


def task_statement(audit: dict) -> str:
    """The audit's task in words, as the terminal and the report state it at the top: "Task: regression — target
    'price', prediction 'y_pred' (units: USD)"."""
    spec = spec_of(audit["task"])
    mapping = audit.get("mapping", {})
    label, score = mapping.get("label"), mapping.get("score")
    if spec.numeric_target:
        units = f" (units: {audit['units']})" if audit.get("units") else ""
        return f"Task: {spec.title} — target '{label}', prediction '{score}'{units}"
    if spec.per_class:
        classes = mapping.get("classes") or []
        shown = ", ".join(map(str, classes[:8])) + (", …" if len(classes) > 8 else "")
        head = f"Task: {spec.title} — label '{label}' ({len(classes)} classes: {shown}), "
        columns = mapping.get("class_scores") or []
        if columns:
            return head + f"class probabilities {', '.join(repr(str(c)) for c in columns[:8])}" + \
                (", …" if len(columns) > 8 else "")
        confidence = f", confidence '{score}'" if score else ", no confidence column"
        return head + f"predicted class '{mapping.get('predicted')}'{confidence}"
    positive = mapping.get("positive_label")
    which = f" (positive: {positive})" if positive is not None else ""
    return f"Task: {spec.title} — label '{label}'{which}, score '{score}'"


def render_html(audit: dict, sections: list[tuple[str, str]]) -> str:  # noqa: C901
    """The whole report: a header from the audit dict, the first section (the Summary), the notes folded into one
    "N notes" block, the other sections, then the JSON."""
    title = f"fairviz audit — {audit.get('source', '')}"
    found = audit.get("notes", []) + audit.get("warnings", [])
    notes = "".join(f"<li class='warn'>{html.escape(str(w))}</li>" for w in found)
    settings = (f" · threshold {audit.get('threshold')} · {html.escape(score_statement(audit.get('mapping', {})))}"
                if spec_of(audit["task"]).thresholded else "")
    parts = [f"<h1>{html.escape(title)}</h1>", f"<p class='task'><b>{html.escape(task_statement(audit))}</b></p>",
             f"<p class='note'>{audit.get('n_rows', 0):,} rows · attribute <b>{html.escape(str(audit.get('attribute')))}</b>"
             f"{settings}"
             f" · generated {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC"
             f" · fairviz {html.escape(str(audit.get('fairviz_version')))}</p>"]
    folded = (f"<details><summary>{len(found)} note{'s' if len(found) != 1 else ''} on the data and the settings"
              f"</summary><ul>{notes}</ul></details>") if notes else ""
    for index, (heading, inner) in enumerate(sections):
        parts.append(f"<h2>{html.escape(heading)}</h2>{inner}")
        if index == 0 and folded:
            parts.append(folded)
    if not sections and folded:
        parts.append(folded)
    payload = html.escape(json.dumps(audit, indent=1))
    parts.append(f"<h2>Audit JSON</h2><details><summary>Show</summary><pre>{payload}</pre></details>")
    plotly_js = f"<script>{get_plotlyjs()}</script>"
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{_STYLE}</style>{plotly_js}</head><body>{''.join(parts)}</body></html>")
