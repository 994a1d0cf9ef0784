"""Figures of the Sample-size significance page (MATCH, jaggedness, CPS). They take results, never rows.

Group names are data: they are escaped where they enter a figure (``plot_text``); the markup we write stays."""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from fairviz.core.markup import plot_text
from fairviz.sample_size.results import (METRIC_LABELS, CPSRow, ErrorCurves, Jaggedness, MatchAudit, MatchResult,
                                         NullPlot)
from fairviz.core.theme import (DASHES, DIVERGING, KNEE_COLOUR, LEGEND_RIGHT, NEUTRAL, PALETTE, TEMPLATE,
                                 vline)
from fairviz.core.wording import fmt, fmt_p

OBSERVED = KNEE_COLOUR             # vermillion: the group's own score, on every figure of this page
BAND_FILL = ["rgba(0,114,178,0.12)", "rgba(0,114,178,0.22)", "rgba(0,114,178,0.35)"]


def null_figure(plot: NullPlot, result: MatchResult, reference: str, height: int = 430) -> go.Figure:
    """The metric's distribution for groups of the same size drawn from the reference; the observed score marked
    and the more extreme tail (the side the p-value counts) shaded."""
    label = METRIC_LABELS.get(result.metric, result.metric)
    s = result.score
    lower_tail = result.p_lower is not None and result.p_upper is not None and result.p_lower <= result.p_upper
    if s is None:
        colours = [PALETTE[0]] * plot.values.size
    else:
        in_tail = plot.values <= s + 1e-12 if lower_tail else plot.values >= s - 1e-12
        colours = np.where(in_tail, OBSERVED, PALETTE[0]).tolist()
    fig = go.Figure(go.Bar(
        x=plot.values, y=plot.mass, width=plot.width * (0.92 if not plot.binned else 1.0), marker_color=colours,
        marker_line_width=0, name="same-size groups from the reference",
        hovertemplate=f"{label} {'≈' if plot.binned else '='} %{{x:.4f}}: probability %{{y:.4f}}<extra></extra>"))
    # the lines and their labels fig.add_vline(..., annotation_position="top" / "top left") would add, set at once
    # below (each add_* call re-validates every shape and annotation)
    shapes, annotations = [], []
    if s is not None:
        shapes.append(vline(s, line=dict(color=OBSERVED, width=3)))
        annotations.append(dict(text=f"observed {fmt(s)}", font=dict(color=OBSERVED, size=15), showarrow=False,
                                x=s, xanchor="center", xref="x", y=1, yanchor="bottom", yref="y domain"))
    if result.reference_score is not None and result.metric != "ofi":
        shapes.append(vline(result.reference_score, line=dict(color=NEUTRAL, width=2, dash="dash")))
        annotations.append(dict(text=f"reference {fmt(result.reference_score)}", font=dict(color=NEUTRAL),
                                showarrow=False, x=result.reference_score, xanchor="right", xref="x", y=1,
                                yanchor="top", yref="y domain"))
    p_text = f"two-sided p {fmt_p(result.p_value)}" + (
        f", BH-adjusted {fmt_p(result.p_adjusted)}" if result.p_adjusted is not None else "")
    fig.update_layout(
        template=TEMPLATE, height=height, showlegend=False, bargap=0,
        title=dict(text=f"{label} of '{plot_text(result.group)}' (n = {result.n:,}) vs same-size groups from "
                        f"{plot_text(reference)}"
                        f"<br><sup>{result.method} · {p_text}</sup>"),
        xaxis_title=f"{label}{' (binned)' if plot.binned else ''}", yaxis_title="probability",
        margin=dict(t=90), **({"shapes": shapes, "annotations": annotations} if shapes else {}))
    return fig


def match_map(audit: MatchAudit, metrics: list[str] | None = None, height: int | None = None) -> go.Figure:
    """Groups × metrics: orange = the group scores lower than the reference would give at its size, purple =
    higher; the colour deepens with −log10(BH-adjusted p), and stays pale while the gap is within noise."""
    metrics = metrics or list(audit.params.metrics)
    names = list(audit.names)
    z = np.full((len(names), len(metrics)), np.nan)
    text = np.empty(z.shape, dtype=object)
    hover = np.empty(z.shape, dtype=object)
    for r, name in enumerate(names):
        for c, metric in enumerate(metrics):
            res = audit.get(name, metric)
            label = METRIC_LABELS.get(metric, metric)
            if res is None or res.p_adjusted is None:
                why = "undefined" if res is None or res.score is None else "not tested"
                text[r, c] = "—" if res is not None and res.note == "it is the reference" else why
                note = plot_text(res.note) if res else ""
                hover[r, c] = f"<b>{plot_text(name)}</b> · {label}: {text[r, c]}<br>{note}"
                continue
            strength = min(-math.log10(max(res.p_adjusted, 1e-12)), 4.0)
            higher = res.p_upper is not None and res.p_upper < res.p_lower
            z[r, c] = strength if higher else -strength
            star = "*" if res.p_adjusted < audit.params.alpha else ""
            text[r, c] = f"{res.score:.2f}{star}"
            hover[r, c] = (f"<b>{plot_text(name)}</b> (n = {res.n:,}) · {label} = {res.score:.4f}<br>"
                           f"reference {fmt(res.reference_score)} · percentile {100 * res.cdf:.1f}%<br>"
                           f"p {fmt_p(res.p_value)} · BH-adjusted {fmt_p(res.p_adjusted)}<br>{res.method}")
    fig = go.Figure(go.Heatmap(
        z=z, x=[METRIC_LABELS.get(m, m) for m in metrics],
        y=[f"{plot_text(n)} (n = {audit.counts[n].n:,})" for n in names],
        zmin=-4, zmax=4, colorscale=DIVERGING, text=text, texttemplate="%{text}", textfont=dict(size=13),
        customdata=hover, hovertemplate="%{customdata}<extra></extra>", hoverongaps=True, xgap=2, ygap=2,
        colorbar=dict(title="BH-adjusted p", tickvals=[-4, -2, -1.3, 0, 1.3, 2, 4],
                      ticktext=["lower, 1e-4", "0.01", "0.05", "noise", "0.05", "0.01", "higher, 1e-4"])))
    fig.update_layout(template=TEMPLATE, height=height or min(900, 200 + 42 * len(names)), plot_bgcolor="#d9d9d9",
                      title=f"MATCH: each group vs same-size groups drawn from {plot_text(audit.reference_label)} "
                            f"(* = adjusted p < {audit.params.alpha:g})",
                      xaxis=dict(showgrid=False, tickangle=-35), yaxis=dict(showgrid=False, autorange="reversed"),
                      margin=dict(l=200, b=170))
    return fig


def jaggedness_figure(j: Jaggedness, group: str, height: int = 460) -> go.Figure:
    """Figure 4.1: percentile bands of a metric over random subsamples, per subsample size."""
    label = METRIC_LABELS.get(j.metric, j.metric)
    fig = go.Figure()
    x = j.sizes
    for (lo, hi), fill in zip(((1, 99), (10, 90), (25, 75)), BAND_FILL):
        fig.add_trace(go.Scatter(x=x, y=j.quantiles[hi], mode="lines", line=dict(width=0), showlegend=False,
                                 hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=x, y=j.quantiles[lo], mode="lines", line=dict(width=0), fill="tonexty",
                                 fillcolor=fill, name=f"{lo}–{hi}th percentile",
                                 hovertemplate=f"n = %{{x}}: {lo}th %{{y:.3f}}<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=j.quantiles[50], mode="lines+markers", name="median",
                             line=dict(color=PALETTE[0], width=3), marker=dict(size=5),
                             hovertemplate="n = %{x}: median %{y:.3f}<extra></extra>"))
    if j.full_value is not None:
        fig.add_hline(y=j.full_value, line=dict(color=OBSERVED, dash="dash", width=2),
                      annotation=dict(text=f"whole group {j.full_value:.3f}", font=dict(color=OBSERVED)),
                      annotation_position="top right")
    if np.any(j.undefined_share > 0):
        fig.add_trace(go.Scatter(x=x, y=j.undefined_share, name="share undefined (right axis)", yaxis="y2",
                                 mode="lines", line=dict(color=NEUTRAL, dash="dot", width=2),
                                 hovertemplate="n = %{x}: %{y:.1%} undefined<extra></extra>"))
    fig.update_layout(
        template=TEMPLATE, height=height,
        title=f"{label} of random subsamples of '{plot_text(group)}' ({j.draws:,} draws per size, seed {j.seed})",
        xaxis_title="subsample size n", yaxis_title=label,
        yaxis2=dict(title="share undefined", overlaying="y", side="right", range=[0, 1], showgrid=False,
                    tickformat=".0%", tickvals=[0, 0.25, 0.5, 0.75, 1.0], visible=bool(np.any(j.undefined_share > 0))),
        legend=LEGEND_RIGHT)
    return fig


def error_curves_figure(curves: ErrorCurves, group: str, height: int = 430) -> go.Figure:
    """Exact expected squared error vs the whole group's value, raw vs additive ε vs CPS, per sample size."""
    label = METRIC_LABELS.get(curves.metric, curves.metric)
    fig = go.Figure()
    for index, (name, mse) in enumerate(curves.mse.items()):
        mass = curves.defined_mass[name]
        colour = OBSERVED if name == "raw" else PALETTE[(index + 1) % len(PALETTE)]
        fig.add_trace(go.Scatter(
            x=curves.sizes, y=mse, mode="lines+markers", name=name, customdata=mass,
            line=dict(color=colour, dash=DASHES[index % len(DASHES)], width=3),
            hovertemplate=f"{name}, n = %{{x}}: MSE %{{y:.5f}} (defined with probability %{{customdata:.3f}})"
                          "<extra></extra>"))
    # powers of ten only on the log axis: Plotly draws the 2s and 5s between them at 12 px
    fig.update_layout(template=TEMPLATE, height=height, yaxis=dict(type="log", dtick=1),
                      title=f"Expected squared error of {label} for samples of '{plot_text(group)}' "
                            "(exact, all matrices)",
                      xaxis_title="sample size n", yaxis_title="mean squared error (log scale)",
                      legend=LEGEND_RIGHT)
    return fig


def cps_figure(rows: list[CPSRow], metric: str, reference_value: float | None = None,
               height: int | None = None) -> go.Figure:
    """Raw (circle) vs CPS-smoothed (diamond) metric per group; small groups move most."""
    label = METRIC_LABELS.get(metric, metric)
    names = [f"{plot_text(r.group)} (n = {r.n:,})" for r in rows]
    raw = [np.nan if r.raw_metrics[metric] is None else r.raw_metrics[metric] for r in rows]
    smooth = [np.nan if r.smoothed_metrics[metric] is None else r.smoothed_metrics[metric] for r in rows]
    fig = go.Figure()
    for name, a, b in zip(names, raw, smooth):
        if np.isfinite(a) and np.isfinite(b):
            fig.add_trace(go.Scatter(x=[a, b], y=[name, name], mode="lines", line=dict(color="#bbbbbb", width=3),
                                     showlegend=False, hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=raw, y=names, mode="markers", name="raw", marker=dict(
        size=14, color=OBSERVED, symbol="circle"), hovertemplate="%{y}: raw %{x:.4f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=smooth, y=names, mode="markers", name="CPS-smoothed", marker=dict(
        size=15, color=PALETTE[0], symbol="diamond"), hovertemplate="%{y}: smoothed %{x:.4f}<extra></extra>"))
    undefined = [n for n, a in zip(names, raw) if not np.isfinite(a)]
    if reference_value is not None:
        fig.add_vline(x=reference_value, line=dict(color=NEUTRAL, dash="dash"),
                      annotation=dict(text=f"all rows {reference_value:.3f}"), annotation_position="top")
    fig.update_layout(template=TEMPLATE, height=height or 170 + 45 * len(rows),
                      title=f"{label}: raw vs Cross-Prior-Smoothed" + (
                          f" (raw undefined for {', '.join(undefined)})" if undefined else ""),
                      xaxis_title=label, yaxis=dict(autorange="reversed"),
                      legend=LEGEND_RIGHT)
    return fig


