"""A self-contained HTML report of an audit: plotly.js inline once, every user string escaped, no network."""
from __future__ import annotations

import html
import json
from datetime import datetime, timezone

import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from .figures.theme import fmt, fmt_p

_STYLE = """
body{font-family:Inter,Segoe UI,Helvetica,Arial,sans-serif;max-width:1200px;margin:2rem auto;padding:0 1rem;color:#1f1f1f}
h1{font-size:1.8rem}h2{margin-top:2.2rem;border-bottom:2px solid #0072B2;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.95rem}th,td{border:1px solid #ccc;padding:.3rem .6rem;text-align:right}
th{background:#f3f6fa}td:first-child,th:first-child{text-align:left}.note{color:#555}.warn{color:#8a4b00}
"""


def figure_div(fig: go.Figure) -> str:
    return pio.to_html(fig, include_plotlyjs=False, full_html=False, config={"displaylogo": False})


def table(rows: list[dict], columns: list[tuple[str, str]]) -> str:
    """An HTML table of ``rows``; ``columns`` are (key, heading). Numbers are formatted, text is escaped."""
    head = "".join(f"<th>{html.escape(title)}</th>" for _, title in columns)
    body = []
    for row in rows:
        cells = []
        for key, _ in columns:
            value = row.get(key)
            text = fmt_p(value) if key.startswith("p_") else (fmt(value) if isinstance(value, (int, float)) or value is None
                                                              else str(value))
            cells.append(f"<td>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render_html(audit: dict, sections: list[tuple[str, str]]) -> str:  # noqa: C901
    """The whole report: a header from the audit dict, then (title, inner HTML) sections, then the JSON."""
    title = f"fairviz audit — {audit.get('source', '')}"
    notes = "".join(f"<li class='warn'>{html.escape(str(w))}</li>" for w in audit.get("notes", []) + audit.get("warnings", []))
    parts = [f"<h1>{html.escape(title)}</h1>",
             f"<p class='note'>{audit.get('n_rows', 0):,} rows · attribute <b>{html.escape(str(audit.get('attribute')))}</b>"
             f" · threshold {audit.get('threshold')} · generated {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC"
             f" · fairviz {html.escape(str(audit.get('fairviz_version')))}</p>"]
    if notes:
        parts.append(f"<ul>{notes}</ul>")
    for heading, inner in sections:
        parts.append(f"<h2>{html.escape(heading)}</h2>{inner}")
    payload = html.escape(json.dumps(audit, indent=1))
    parts.append(f"<h2>Audit JSON</h2><details><summary>Show</summary><pre>{payload}</pre></details>")
    plotly_js = f"<script>{get_plotlyjs()}</script>"
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{_STYLE}</style>{plotly_js}</head><body>{''.join(parts)}</body></html>")


def residual_sections(pred, rdf, audit: dict) -> list[tuple[str, str]]:
    """The RDF part of the report: curves, outcome panels, the per-group and per-pair tables."""
    from .figures import residuals as figs
    from .residuals import threshold_check

    hover = pred.row_labels()
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
