"""Figures of regression and multiclass parity. They take results, never rows. Group and class names are data:
escaped where they enter a figure (``plot_text``)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fairviz.core.markup import plot_text
from fairviz.core.theme import LEGEND_RIGHT, NEUTRAL, PALETTE, TEMPLATE, group_style, hline
from fairviz.parity.one_vs_rest import GroupPerformance, MulticlassParity
from fairviz.parity.error_parity import QUANTILES, RegressionParity

SEQUENTIAL = [[0.0, "#ffffff"], [1.0, "#0072B2"]]
MAX_BARS = 30                   # groups drawn in the bar figures (largest first)


def error_figure(result: RegressionParity, height: int = 420) -> go.Figure:
    """Bias, MAE and RMSE per group with their 95% bootstrap intervals; the reference group's value dashed."""
    groups = sorted(result.groups, key=lambda g: -g.n)[:MAX_BARS]
    names = [plot_text(g.name) for g in groups]
    units = f" ({plot_text(result.params.units)})" if result.params.units else ""
    fig = make_subplots(rows=1, cols=3, subplot_titles=("Bias mean(ŷ − y)", "MAE", "RMSE"), horizontal_spacing=0.08)
    ref = result.group(result.reference)
    for col, stat in enumerate(("bias", "mae", "rmse"), start=1):
        values = [getattr(g, stat) for g in groups]
        low = [v - (g.intervals[stat].low if np.isfinite(g.intervals[stat].low) else v) for g, v in zip(groups, values)]
        high = [(g.intervals[stat].high if np.isfinite(g.intervals[stat].high) else v) - v
                for g, v in zip(groups, values)]
        fig.add_trace(go.Bar(x=names, y=values, marker_color=[PALETTE[i % len(PALETTE)] for i in range(len(groups))],
                             error_y=dict(type="data", array=high, arrayminus=low, color=NEUTRAL),
                             customdata=[g.n for g in groups], showlegend=False,
                             hovertemplate="%{x}: %{y:.3f} (n = %{customdata:,})<extra></extra>"), row=1, col=col)
        fig.add_hline(y=getattr(ref, stat), line_dash="dash", line_color=NEUTRAL, row=1, col=col)
    fig.update_yaxes(title_text=f"error{units}", row=1, col=1)
    fig.update_layout(template=TEMPLATE, height=height, title=f"Errors per group (dashed: reference "
                                                              f"{plot_text(result.reference)})")
    return fig


def prediction_figure(result: RegressionParity, height: int = 420) -> go.Figure:
    """Each group's ŷ distribution as its cumulative share: far-apart curves are what W1 (the area between them)
    and KS (their largest vertical gap) measure."""
    fig = go.Figure()
    for i, g in enumerate(sorted(result.groups, key=lambda g: -g.n)[:len(PALETTE)]):
        style = group_style(i)
        fig.add_trace(go.Scatter(x=g.quantiles, y=QUANTILES, mode="lines", name=plot_text(g.name),
                                 line=dict(color=style["color"], dash=style["dash"], width=2.5),
                                 hovertemplate="ŷ %{x:.3f}: %{y:.0%} of rows below<extra></extra>"))
    units = f" ({plot_text(result.params.units)})" if result.params.units else ""
    fig.update_layout(template=TEMPLATE, height=height, legend=LEGEND_RIGHT,
                      title="Predictions per group (cumulative share)", xaxis_title=f"prediction ŷ{units}",
                      yaxis=dict(title="share of the group's rows", tickformat=".0%", range=[0, 1]))
    return fig


def proxy_figure(result: RegressionParity, height: int = 400) -> go.Figure:
    """Per quantile class of the target, the share of each group's rows predicted into the right class."""
    proxy = result.proxy
    labels = [f"{proxy.edges[c]:.3g}–{proxy.edges[c + 1]:.3g}" for c in range(proxy.n_classes)]
    fig = go.Figure()
    for i, g in enumerate(result.groups[:len(PALETTE)]):
        fig.add_trace(go.Bar(x=labels, y=proxy.tpr[:, i], name=plot_text(g.name), marker_color=PALETTE[i],
                             hovertemplate="%{x}: %{y:.1%}<extra></extra>"))
    fig.update_layout(template=TEMPLATE, height=height, barmode="group", legend=LEGEND_RIGHT,
                      title=f"Right proxy class per group (GAP(TPR) = {proxy.value:.3f})",
                      xaxis_title="target quantile class", yaxis=dict(title="TPR", tickformat=".0%", range=[0, 1]))
    return fig


def confusion_figure(group: GroupPerformance, classes: tuple[str, ...], height: int | None = None) -> go.Figure:
    """A group's C × C confusion matrix: colour is the share of each true class's rows (rows sum to 1), the counts
    printed."""
    matrix = group.confusion.astype(float)
    totals = matrix.sum(1, keepdims=True)
    shares = np.divide(matrix, totals, out=np.zeros_like(matrix), where=totals > 0)
    names = [plot_text(c) for c in classes]
    annotate = len(classes) <= 15
    fig = go.Figure(go.Heatmap(z=shares, x=names, y=names, colorscale=SEQUENTIAL, zmin=0, zmax=1,
                               text=group.confusion if annotate else None,
                               texttemplate="%{text:,}" if annotate else None,
                               colorbar=dict(title="share of true class", tickformat=".0%"),
                               hovertemplate="true %{y}, predicted %{x}: %{z:.1%}<extra></extra>"))
    size = height or min(700, 200 + 40 * len(classes))
    fig.update_layout(template=TEMPLATE, height=size, title=f"{plot_text(group.name)} (n = {group.n:,})",
                      xaxis=dict(title="predicted class", side="bottom"),
                      yaxis=dict(title="true class", autorange="reversed"))
    return fig


def class_rate_figure(result: MulticlassParity, rate: str = "tpr", height: int = 420) -> go.Figure:
    """One-vs-rest rate per class and group (the GAP's cells); the per-class GAP printed above each class."""
    gap = result.gaps[rate]
    names = [plot_text(c) for c in result.classes]
    fig = go.Figure()
    for i, g in enumerate(result.groups[:len(PALETTE)]):
        fig.add_trace(go.Bar(x=names, y=gap.cells[:, i], name=plot_text(g.name), marker_color=PALETTE[i],
                             hovertemplate="%{x}: %{y:.1%}<extra></extra>"))
    for c, value in enumerate(gap.per_class):
        fig.add_annotation(x=names[c], y=1.02, yref="y", text="—" if not np.isfinite(value) else f"{value:.3f}",
                           showarrow=False, font=dict(size=13, color=NEUTRAL))
    label = {"tpr": "TPR", "fpr": "FPR", "ppr": "selection rate"}[rate]
    fig.update_layout(template=TEMPLATE, height=height, barmode="group", legend=LEGEND_RIGHT,
                      title=f"{label} per class and group (GAP = {gap.value:.3f}; per-class gaps above)",
                      xaxis_title="class", yaxis=dict(title=label, tickformat=".0%", range=[0, 1.08]),
                      shapes=[hline(0, line_color=NEUTRAL)])
    return fig
