"""Figures of the explanation-disparity analysis. They take results (``ExplainResult``, ``DisparityAudit``), never
models. Names from the data (groups, tokens, label names) are escaped where they enter a figure (``plot_text``), so
the ``<br>`` we write in hover text and titles survives.

- ``metric_boxplots``: one panel per metric, methods on x, the two groups side by side (paper Figs. 2–7), a star
  over every method whose difference is significant with |d| ≥ 0.2;
- ``disparity_heatmap``: methods × metrics, coloured by Cohen's d where the test is significant (paper Tables 3–5);
- ``twin_tokens``: the token attributions of two sentences (a male/female twin pair) one above the other.

Boxes are drawn from the raw scores while a figure holds at most ``MAX_POINTS`` of them; above that the box
statistics are computed here and only they go to the browser.
"""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fairviz.core.markup import plot_text
from fairviz.core.theme import LEGEND_RIGHT, PALETTE, TEMPLATE
from fairviz.explain.analysis import heatmap_values
from fairviz.explain.registry import METHOD_NAMES, METRICS
from fairviz.explain.results import DisparityAudit, ExplainResult
from fairviz.core.wording import fmt, fmt_p

MAX_POINTS = 2000
GROUP_COLOURS = (PALETTE[0], PALETTE[1])          # blue for the first group, orange for the second
SIGNED = [[0.0, "#b35806"], [0.5, "#f7f7f7"], [1.0, "#542788"]]


def metric_boxplots(result: ExplainResult, report: DisparityAudit | None = None, metrics: list[str] | None = None,
                    methods: list[str] | None = None, columns: int = 2, panel_height: int = 300) -> go.Figure:
    metrics = metrics or result.metrics
    methods = methods or result.methods
    gi, gj = result.groups
    rows = math.ceil(len(metrics) / columns)
    fig = make_subplots(rows=rows, cols=columns, vertical_spacing=0.32 / max(rows, 1), horizontal_spacing=0.08,
                        subplot_titles=[f"{METRICS[m].label} ({METRICS[m].arrow})" for m in metrics])
    scores = result.scores[result.scores["method"].isin(methods)]
    raw = scores[metrics].notna().sum().sum() <= MAX_POINTS
    labels = [METHOD_NAMES[m] for m in methods]
    for k, metric in enumerate(metrics):
        row, col = k // columns + 1, k % columns + 1
        for g, (group, colour) in enumerate(zip((gi, gj), GROUP_COLOURS)):
            part = scores[scores["group"] == group]
            common = dict(name=plot_text(group), legendgroup=plot_text(group), showlegend=k == 0, marker_color=colour,
                          line=dict(color=colour), offsetgroup=str(g))
            if raw:
                x = part["method"].map(METHOD_NAMES)
                fig.add_trace(go.Box(x=x, y=part[metric], boxpoints="all", jitter=0.4, pointpos=0,
                                     marker=dict(size=4, opacity=0.55, color=colour), fillcolor=_fill(colour),
                                     hovertemplate=f"{plot_text(group)}<br>%{{x}}: %{{y:.3f}}<extra></extra>", **common),
                              row=row, col=col)
            else:
                stats = [_box_stats(part.loc[part["method"] == m, metric].to_numpy(float)) for m in methods]
                fig.add_trace(go.Box(x=labels, q1=[s[0] for s in stats], median=[s[1] for s in stats],
                                     q3=[s[2] for s in stats], lowerfence=[s[3] for s in stats],
                                     upperfence=[s[4] for s in stats], mean=[s[5] for s in stats],
                                     fillcolor=_fill(colour), **common), row=row, col=col)
        if report is not None:
            _stars(fig, report, methods, metric, row, col)
        fig.update_xaxes(categoryorder="array", categoryarray=labels, row=row, col=col)
    fig.update_layout(template=TEMPLATE, boxmode="group", height=max(420, rows * panel_height + 120),
                      title=f"Explanation quality per sentence, {plot_text(gi)} vs {plot_text(gj)}",
                      legend=LEGEND_RIGHT,
                      margin=dict(t=110))
    for annotation in fig.layout.annotations:
        annotation.font.size = 15
    return fig


def _stars(fig, report: DisparityAudit, methods, metric, row, col) -> None:
    for method in methods:
        cell = report.cell(method, metric)
        if cell is None or not cell.significant:
            continue
        mark = "★" if cell.considerable else "·"
        fig.add_annotation(x=METHOD_NAMES[method], y=1.0, yref="y domain", text=mark, showarrow=False,
                           font=dict(size=18, color="#111"), row=row, col=col,
                           hovertext=f"p {fmt_p(cell.p_value)}, d = {fmt(cell.cohens_d, 2)}")


def _box_stats(values: np.ndarray) -> tuple[float, ...]:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return (np.nan,) * 6
    q1, med, q3 = np.quantile(values, [0.25, 0.5, 0.75])
    iqr = q3 - q1
    low = values[values >= q1 - 1.5 * iqr].min()
    high = values[values <= q3 + 1.5 * iqr].max()
    return float(q1), float(med), float(q3), float(low), float(high), float(values.mean())


def _fill(colour: str) -> str:
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},0.25)"


def disparity_heatmap(report: DisparityAudit, height: int | None = None) -> go.Figure:
    """Cohen's d (i − j) where p (or BH-adjusted p) ≤ α; blank where not significant; ★ marks |d| ≥ 0.2."""
    methods, metrics, d, counts = heatmap_values(report)
    gi, gj = report.groups
    runs = max((c.runs for c in report.cells), default=1)
    text, hover = [], []
    for i, m in enumerate(report.methods):
        row_text, row_hover = [], []
        for j, k in enumerate(report.metrics):
            c = report.cell(m, k)
            if c is None:
                row_text.append("")
                row_hover.append("")
                continue
            if not np.isfinite(c.p_value):
                core = "undefined"
            else:
                core = "n.s." if not c.significant else f"{c.cohens_d:+.2f}{'★' if c.considerable else ''}"
            row_text.append(core + (f"<br>{c.runs_significant}/{runs} runs" if runs > 1 else ""))
            row_hover.append(f"{METHOD_NAMES[m]} · {METRICS[k].label}<br>p {fmt_p(c.p_value)}"
                             + (f" (BH {fmt_p(c.p_adjusted)})" if report.correction == "bh" else "")
                             + f"<br>d = {fmt(c.cohens_d, 2)} [{fmt(c.ci.low, 2)}, {fmt(c.ci.high, 2)}]"
                             + f"<br>better: {plot_text(c.better) if c.better else '—'}")
        text.append(row_text)
        hover.append(row_hover)
    finite = np.abs(d[np.isfinite(d)])
    bound = max(1.0, float(finite.max()) if finite.size else 1.0)
    fig = go.Figure(go.Heatmap(
        z=np.where(np.isfinite(d), d, np.nan), x=metrics, y=methods, text=text, customdata=hover,
        texttemplate="%{text}", textfont=dict(size=15), hovertemplate="%{customdata}<extra></extra>",
        colorscale=SIGNED, zmin=-bound, zmax=bound, zmid=0, xgap=3, ygap=3,
        colorbar=dict(title=dict(text=f"d ({plot_text(gi)} − {plot_text(gj)})", side="right"), thickness=16)))
    test = "BH-adjusted p" if report.correction == "bh" else "p"
    fig.update_layout(template=TEMPLATE, height=height or 120 + 62 * len(methods),
                      title=f"Significant disparities ({test} ≤ {report.alpha}): purple = {plot_text(gi)} higher, "
                            f"brown = {plot_text(gj)} higher",
                      xaxis=dict(side="top", showgrid=False), yaxis=dict(autorange="reversed", showgrid=False),
                      plot_bgcolor="#fafafa", margin=dict(t=120, l=90))
    return fig


def twin_tokens(first: tuple[str, list[str], np.ndarray], second: tuple[str, list[str], np.ndarray],
                method: str) -> go.Figure:
    """Two sentences' token attributions on one shared, zero-centred colour scale (specials not shown). Each
    sentence is (title, tokens, scores); titles and tokens are data and are escaped here."""
    bound = max(float(np.max(np.abs(first[2]))) if len(first[2]) else 0.0,
                float(np.max(np.abs(second[2]))) if len(second[2]) else 0.0, 1e-9)
    fig = make_subplots(rows=2, cols=1, subplot_titles=[plot_text(first[0]), plot_text(second[0])],
                        vertical_spacing=0.28)
    for row, (_, tokens, scores) in enumerate((first, second), start=1):
        fig.add_trace(go.Heatmap(
            z=[scores], x=list(range(len(tokens))), text=[[plot_text(t) for t in tokens]], texttemplate="%{text}", textfont=dict(size=16),
            customdata=[[f"{v:+.3f}" for v in scores]], hovertemplate="%{text}: %{customdata}<extra></extra>",
            colorscale=SIGNED, zmin=-bound, zmax=bound, zmid=0, showscale=row == 1, xgap=2,
            colorbar=dict(title=dict(text="score (L1-normalised)", side="right"), thickness=14, len=0.9)),
            row=row, col=1)
        fig.update_xaxes(showticklabels=False, showgrid=False, row=row, col=1)
        fig.update_yaxes(showticklabels=False, showgrid=False, row=row, col=1)
    fig.update_layout(template=TEMPLATE, height=300, title=f"{METHOD_NAMES.get(method, method)} attributions",
                      margin=dict(t=90, l=20, r=20, b=20))
    for annotation in fig.layout.annotations:
        annotation.font.size = 15
    return fig
