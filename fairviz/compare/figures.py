"""The comparison's figures: the two models' reliability diagrams and sorted residual curves overlaid (the first
model solid, the second dashed). They take a ``ModelComparison``, never rows; names are escaped where they enter."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fairviz.compare.results import ALL, ModelComparison
from fairviz.core.markup import plot_text
from fairviz.core.theme import NEUTRAL, PALETTE, TEMPLATE, hline

MODEL_DASH = ("solid", "dash")
DIAGONAL = dict(color=NEUTRAL, width=1, dash="dot")


def shown_groups(result: ModelComparison, limit: int = 3) -> list[str]:
    """The reference and the largest other groups (at most ``limit`` in all), never one under the size floor while
    a larger one exists."""
    sizes = result.group_sizes
    large = [g for g in sorted(sizes, key=sizes.get, reverse=True) if sizes[g] >= result.params.min_group_size]
    ordered = [result.reference] + [g for g in (large or list(sizes)) if g != result.reference]
    return [g for g in ordered if sizes.get(g, 0) > 0][:limit]


def reliability_overlay(result: ModelComparison, groups: list[str] | None = None, height: int = 460) -> go.Figure:
    """Observed rate against mean prediction per bin, one panel for every row and one per group, both models."""
    panels = [ALL, *(groups or shown_groups(result))]
    fig = make_subplots(rows=1, cols=len(panels), shared_yaxes=True, horizontal_spacing=0.03,
                        subplot_titles=[plot_text(p) for p in panels])
    for c, panel in enumerate(panels, start=1):
        fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line=DIAGONAL, name="perfect calibration",
                                 showlegend=c == 1, hoverinfo="skip"), row=1, col=c)
        for k, model in enumerate((result.model_a, result.model_b)):
            table = result.curves[model].reliability.get(panel)
            if table is None:
                continue
            keep = table.nonempty
            fig.add_trace(go.Scatter(
                x=table.mean_pred[keep], y=table.observed[keep], mode="lines+markers", name=plot_text(model),
                legendgroup=plot_text(model), showlegend=c == 1,
                line=dict(color=PALETTE[k], dash=MODEL_DASH[k], width=2.5), marker=dict(size=7),
                customdata=np.asarray(table.n)[keep],
                hovertemplate=f"<b>{plot_text(model)}</b> ({plot_text(panel)})<br>mean prediction %{{x:.3f}}<br>"
                              "observed %{y:.3f}<br>%{customdata:,} rows<extra></extra>"), row=1, col=c)
        fig.update_xaxes(range=[0, 1], title_text="Mean predicted probability", row=1, col=c)
    fig.update_yaxes(range=[0, 1], title_text="Observed rate", row=1, col=1)
    fig.update_layout(template=TEMPLATE, height=height,
                      title=f"Reliability of both models by {plot_text(result.attribute)}"
                            f"<br><sup>{result.params.n_bins} equal-width bins</sup>",
                      legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0, title_text=""),
                      margin=dict(t=90, b=120))
    return fig


def residual_overlay(result: ModelComparison, groups: list[str] | None = None, height: int = 520) -> go.Figure:
    """Each group's sorted residuals D = score − label for both models (colour: group; dash: model)."""
    fig = go.Figure()
    names = list(result.group_sizes)
    for group in groups or shown_groups(result):
        colour = PALETTE[names.index(group) % len(PALETTE)]
        for k, model in enumerate((result.model_a, result.model_b)):
            found = result.curves[model].residual_quantiles.get(group)
            if found is None:
                continue
            p, q = found
            fig.add_trace(go.Scattergl(
                x=100 * p, y=q, mode="lines", name=f"{plot_text(group)} — {plot_text(model)}",
                line=dict(color=colour, dash=MODEL_DASH[k], width=2.5),
                hovertemplate=f"<b>{plot_text(group)}</b>, {plot_text(model)}<br>percentile %{{x:.1f}}%<br>"
                              "residual %{y:.3f}<extra></extra>"))
    fig.update_layout(template=TEMPLATE, height=height, shapes=[hline(0, line=dict(color=NEUTRAL, width=1))],
                      title=f"Sorted residuals of both models by {plot_text(result.attribute)}"
                            f"<br><sup>solid: {plot_text(result.model_a)}; dashed: {plot_text(result.model_b)}</sup>",
                      xaxis=dict(title="Percentile within group (%)", range=[0, 100]),
                      yaxis=dict(title="Residual D = score − label", range=[-1.02, 1.02]),
                      legend=dict(orientation="h", yanchor="top", y=-0.14, xanchor="left", x=0, title_text=""),
                      margin=dict(t=90, b=40))
    return fig


def error_forest(result, metric: str = "mae", height: int = 420) -> go.Figure:
    """An ``ErrorComparison``'s ``metric`` difference (second model minus first) per group with its interval: left
    of 0 the second model errs less. Groups under the size floor are drawn in grey."""
    rows = [d for d in result.differences if d.metric == metric and d.reference is None]
    labels = [plot_text(d.group or "every row") + f" (n = {d.n:,})" for d in rows]
    small = [d.group is not None and d.n < result.params.min_group_size for d in rows]
    fig = go.Figure(go.Scatter(
        x=[d.difference for d in rows], y=labels, mode="markers",
        marker=dict(size=10, color=[NEUTRAL if s else PALETTE[0] for s in small]),
        error_x=dict(type="data", symmetric=False, array=[d.ci.high - d.difference for d in rows],
                     arrayminus=[d.difference - d.ci.low for d in rows]),
        hovertemplate="%{y}<br>Δ %{x:.4g}<extra></extra>"))
    fig.add_vline(x=0, line=dict(color=NEUTRAL, width=1, dash="dot"))
    title = rows[0].title if rows else metric
    fig.update_layout(template=TEMPLATE, height=height, showlegend=False,
                      title=plot_text(f"{title}: {result.model_b} minus {result.model_a}, per group (95% CI)"),
                      xaxis_title=plot_text(f"Δ {title}" + (f" ({result.units})" if result.units else "")),
                      yaxis=dict(autorange="reversed"))
    return fig
