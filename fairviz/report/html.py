"""A self-contained HTML report of an audit: plotly.js inline once, every user string escaped, no network."""
from __future__ import annotations

import html
import json
from datetime import datetime, timezone

import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from fairviz.core.markup import escape_figure
from fairviz.core.wording import fmt, fmt_p

_STYLE = """
body{font-family:Inter,Segoe UI,Helvetica,Arial,sans-serif;max-width:1200px;margin:2rem auto;padding:0 1rem;color:#1f1f1f}
h1{font-size:1.8rem}h2{margin-top:2.2rem;border-bottom:2px solid #0072B2;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.95rem}th,td{border:1px solid #ccc;padding:.3rem .6rem;text-align:right}
th{background:#f3f6fa}td:first-child,th:first-child{text-align:left}.note{color:#555}.warn{color:#8a4b00}
"""


def figure_div(fig: go.Figure) -> str:
    return pio.to_html(escape_figure(fig), include_plotlyjs=False, full_html=False, config={"displaylogo": False})


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
