"""Figures of regression and multiclass calibration, drawn from their results (never rows).

Group, class and target names are escaped where they enter a figure (``plot_text``), as in ``figures``."""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fairviz.calibration.multiclass import MulticlassCalibration
from fairviz.calibration.regression import OVERALL, RegressionCalibration
from fairviz.calibration.results import ReliabilityTable
from fairviz.core.markup import plot_text
from fairviz.core.theme import LEGEND_RIGHT, NEUTRAL, TEMPLATE, group_style

OVERALL_STYLE = {"color": "#000000", "dash": "solid"}
DIAGONAL = dict(color=NEUTRAL, width=1.5, dash="dot")


def _style(names: list[str], name: str) -> dict:
    return OVERALL_STYLE if name == OVERALL else group_style(names.index(name))


def _error(high, low, value):
    """Distance from a value to an interval end; 0 where undefined or where a bootstrap interval sits beyond the
    value (Plotly draws no bar then)."""
    out = np.asarray(high, float) - np.asarray(value, float) if low is None else \
        np.asarray(value, float) - np.asarray(low, float)
    return np.where(np.isfinite(out), np.maximum(out, 0.0), 0.0)


# ------------------------------------------------------------------------------------------------ regression

def binned_means_figure(result: RegressionCalibration, target: str = "target", height: int = 480) -> go.Figure:
    """Mean target against mean prediction in each bin, per group, with t intervals; calibrated points sit on the
    diagonal."""
    names = [g.name for g in result.groups]
    fig = go.Figure()
    lo, hi = math.inf, -math.inf
    for g in (*result.groups, result.overall):
        t = g.bins
        ok = t.n > 0
        if not ok.any():
            continue
        style = _style(names, g.name)
        name = plot_text(g.name)
        lo = min(lo, float(np.nanmin(t.mean_pred[ok])), float(np.nanmin(t.mean_y[ok])))
        hi = max(hi, float(np.nanmax(t.mean_pred[ok])), float(np.nanmax(t.mean_y[ok])))
        fig.add_trace(go.Scatter(
            x=t.mean_pred[ok], y=t.mean_y[ok], mode="lines+markers", name=f"{name} (n = {g.n:,})",
            line=dict(color=style["color"], dash=style["dash"], width=2),
            error_y=dict(type="data", symmetric=False, array=_error(t.ci_high[ok], None, t.mean_y[ok]),
                         arrayminus=_error(None, t.ci_low[ok], t.mean_y[ok]), color=style["color"], thickness=1.5),
            customdata=np.column_stack([t.n[ok], t.ci_low[ok], t.ci_high[ok]]),
            hovertemplate=f"<b>{name}</b><br>mean prediction %{{x:.4g}}<br>mean {plot_text(target)} %{{y:.4g}}"
                          "<br>95% CI %{customdata[1]:.4g}–%{customdata[2]:.4g}<br>n = %{customdata[0]:,}"
                          "<extra></extra>"))
    if math.isfinite(lo):
        fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=DIAGONAL, name="calibrated (y = ŷ)",
                                 hoverinfo="skip"))
    fig.update_layout(template=TEMPLATE, height=height, legend=LEGEND_RIGHT,
                      title="Calibration in the mean: binned mean target against mean prediction (95% CIs)",
                      xaxis_title="mean prediction in the bin", yaxis_title=f"mean {plot_text(target)} in the bin")
    return fig


def mincer_zarnowitz_figure(result: RegressionCalibration, height: int = 420) -> go.Figure:
    """Intercept and slope of y on ŷ per group with their intervals, against the calibrated 0 and 1."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("intercept a (calibrated: 0)", "slope b (calibrated: 1)"),
                        horizontal_spacing=0.12)
    names = [g.name for g in result.groups]
    fitted = [g for g in (*result.groups, result.overall) if g.mz.ok]
    labels = [f"{plot_text(g.name)} (n = {g.n:,})" for g in fitted]
    for col, key, target in ((1, "intercept", 0.0), (2, "slope", 1.0)):
        est = [getattr(g.mz, key) for g in fitted]
        fig.add_trace(go.Scatter(
            x=[e.estimate for e in est], y=labels, mode="markers", showlegend=False,
            marker=dict(size=12, color=[_style(names, g.name)["color"] for g in fitted]),
            error_x=dict(type="data", symmetric=False, array=[e.high - e.estimate for e in est],
                         arrayminus=[e.estimate - e.low for e in est], thickness=2),
            customdata=[[e.low, e.high, e.p] for e in est],
            hovertemplate=f"<b>%{{y}}</b> {key} %{{x:.4g}}<br>95% CI %{{customdata[0]:.4g}}–%{{customdata[1]:.4g}}"
                          f"<br>p (against {target:g}) %{{customdata[2]:.3g}}<extra></extra>"), row=1, col=col)
        fig.add_vline(x=target, line=DIAGONAL, row=1, col=col)
    fig.update_layout(template=TEMPLATE, height=max(height, 120 + 40 * len(fitted)),
                      title="Mincer–Zarnowitz regression y = a + b·ŷ per group (95% CIs)")
    return fig


def coverage_figure(result: RegressionCalibration, height: int = 420) -> go.Figure:
    """Observed coverage of each central interval per group, with Clopper–Pearson intervals, against nominal."""
    names = [g.name for g in result.groups]
    fig = go.Figure()
    for g in (*result.groups, result.overall):
        if not g.coverage:
            continue
        style = _style(names, g.name)
        rate = np.array([c.rate for c in g.coverage])
        fig.add_trace(go.Scatter(
            x=[c.nominal for c in g.coverage], y=rate, mode="markers+lines", name=f"{plot_text(g.name)} (n = {g.n:,})",
            line=dict(color=style["color"], dash=style["dash"]), marker=dict(size=10),
            error_y=dict(type="data", symmetric=False, array=_error([c.ci_high for c in g.coverage], None, rate),
                         arrayminus=_error(None, [c.ci_low for c in g.coverage], rate)),
            hovertemplate=f"<b>{plot_text(g.name)}</b> nominal %{{x:.0%}} → observed %{{y:.1%}}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line=DIAGONAL, name="nominal", hoverinfo="skip"))
    fig.update_layout(template=TEMPLATE, height=height, legend=LEGEND_RIGHT, xaxis=dict(title="nominal coverage",
                      tickformat=".0%"), yaxis=dict(title="observed coverage", tickformat=".0%"),
                      title="Coverage of the central prediction intervals per group (95% CIs)")
    return fig


# ------------------------------------------------------------------------------------------------ multiclass

def _reliability_traces(fig, table: ReliabilityTable, name: str, style: dict, row: int, col: int, legend: bool):
    ok = table.n > 0
    fig.add_trace(go.Scatter(
        x=table.mean_pred[ok], y=table.observed[ok], mode="lines+markers", name=name, legendgroup=name,
        showlegend=legend, line=dict(color=style["color"], dash=style["dash"], width=2),
        error_y=dict(type="data", symmetric=False, array=_error(table.ci_high[ok], None, table.observed[ok]),
                     arrayminus=_error(None, table.ci_low[ok], table.observed[ok]), color=style["color"]),
        customdata=table.n[ok],
        hovertemplate=f"<b>{name}</b> predicted %{{x:.3f}} → observed %{{y:.3f}} (n = %{{customdata:,}})"
                      "<extra></extra>"), row=row, col=col)


def top_label_figure(result: MulticlassCalibration, height: int = 480) -> go.Figure:
    """Top-label reliability: accuracy against confidence in each bin, per group, with Beta intervals."""
    names = [g.name for g in result.groups]
    fig = make_subplots(rows=1, cols=1)
    for g in (*result.groups, result.overall):
        _reliability_traces(fig, g.top_reliability, f"{plot_text(g.name)} (n = {g.n:,})", _style(names, g.name),
                            1, 1, True)
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line=DIAGONAL, name="calibrated", hoverinfo="skip"))
    fig.update_layout(template=TEMPLATE, height=height, legend=LEGEND_RIGHT,
                      title="Top-label reliability: accuracy against confidence (95% CIs)",
                      xaxis=dict(title="confidence (highest class probability)", range=[0, 1]),
                      yaxis=dict(title="accuracy", range=[0, 1.02]))
    return fig


def class_reliability_figure(result: MulticlassCalibration, height_per_row: int = 300) -> go.Figure:
    """One-vs-rest reliability of every class (a panel each), groups as curves."""
    classes = list(result.classes)
    cols = min(3, len(classes))
    rows = math.ceil(len(classes) / cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[plot_text(c) for c in classes],
                        horizontal_spacing=0.08, vertical_spacing=0.12)
    names = [g.name for g in result.groups]
    for g in result.groups:
        for k, c in enumerate(g.classes):
            _reliability_traces(fig, c.reliability, f"{plot_text(g.name)} (n = {g.n:,})", _style(names, g.name),
                                k // cols + 1, k % cols + 1, k == 0)
    for k in range(len(classes)):
        fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line=DIAGONAL, showlegend=False,
                                 hoverinfo="skip"), row=k // cols + 1, col=k % cols + 1)
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(range=[0, 1.02])
    fig.update_layout(template=TEMPLATE, height=120 + height_per_row * rows, legend=LEGEND_RIGHT,
                      title="Class-wise reliability (one class against the rest): observed rate against probability")
    return fig


def multiclass_errors_figure(result: MulticlassCalibration, height: int = 420) -> go.Figure:
    """Top-label and class-wise ECE per group with bootstrap intervals."""
    rows = [*result.groups, result.overall]
    names = [g.name for g in result.groups]
    fig = go.Figure()
    measures = [("top_ece", "top-label ECE", "")] + ([("classwise_ece", "class-wise ECE", "/")]
                                                     if result.classwise else [])
    for key, label, pattern in measures:
        values = np.array([getattr(g, key) for g in rows])
        cis = [getattr(g, f"{key}_ci") for g in rows]
        fig.add_trace(go.Bar(
            x=[plot_text(g.name) for g in rows], y=values, name=label,
            marker=dict(color=[_style(names, g.name)["color"] for g in rows], pattern_shape=pattern),
            error_y=dict(type="data", symmetric=False, array=_error([c.high for c in cis], None, values),
                         arrayminus=_error(None, [c.low for c in cis], values), color="#333"),
            hovertemplate=f"<b>%{{x}}</b> {label}: %{{y:.4f}}<extra></extra>"))
    fig.update_layout(template=TEMPLATE, barmode="group", height=height, legend=LEGEND_RIGHT,
                      yaxis_title="calibration error",
                      title="Multiclass calibration error per group (plain: top-label, hatched: class-wise; 95% CIs)")
    return fig
