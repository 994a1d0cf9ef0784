"""The threshold explorer's figure: expected accuracy against the gap left in the constrained rate(s), with the
chosen policy and a single threshold τ for everyone on the same axes. Names from the data enter through
``plot_text``."""
from __future__ import annotations

import plotly.graph_objects as go

from fairviz.core.markup import plot_text
from fairviz.core.theme import LEGEND_RIGHT, NEUTRAL, PALETTE, TEMPLATE
from fairviz.thresholds.readings import GAP_NAME
from fairviz.thresholds.results import CONSTRAINT_SHORT, ThresholdExplorer


def trade_off_figure(result: ThresholdExplorer) -> go.Figure:
    audit, constraint = result.audit, result.audit.policy.params.constraint
    gap_name = GAP_NAME[constraint]
    curve = audit.curve
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=[p.max_gap for p in curve], y=[p.accuracy for p in curve], mode="lines+markers", name="per-group thresholds",
        line=dict(color=PALETTE[0], width=3), marker=dict(size=7),
        hovertemplate=f"allowed gap %{{customdata:.3f}}<br>{gap_name} %{{x:.3f}}<br>accuracy %{{y:.4f}}<extra></extra>",
        customdata=[p.slack for p in curve]))
    policy = audit.policy
    fig.add_trace(go.Scatter(
        x=[policy.max_gap], y=[policy.accuracy], mode="markers", name="these thresholds",
        marker=dict(size=16, color=PALETTE[5], symbol="diamond", line=dict(color="white", width=1)),
        hovertemplate=f"these thresholds<br>{gap_name} %{{x:.3f}}<br>accuracy %{{y:.4f}}<extra></extra>"))
    single = audit.single_threshold
    fig.add_trace(go.Scatter(
        x=[single.max_gap], y=[single.accuracy], mode="markers", name=f"one threshold τ = {result.tau:.2f}",
        marker=dict(size=14, color=NEUTRAL, symbol="circle"),
        hovertemplate=f"τ = {result.tau:.2f} for everyone<br>{gap_name} %{{x:.3f}}<br>accuracy %{{y:.4f}}"
                      "<extra></extra>"))
    title = f"Accuracy against the {gap_name}: {CONSTRAINT_SHORT[constraint]} by {plot_text(policy.attribute)}"
    fig.update_layout(template=TEMPLATE, title=title, height=430, legend=LEGEND_RIGHT,
                      xaxis_title=f"{gap_name} between the groups", yaxis_title="expected accuracy")
    return fig
