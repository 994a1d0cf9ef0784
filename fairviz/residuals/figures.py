"""Figures of Residual Distribution Fairness ([1]). They take results, never rows.

Names from the data (groups, the attribute, row labels and texts) are escaped where they enter a figure
(``plot_text``), so the markup written here (``<b>``, ``<sup>``) is the only markup a figure holds."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fairviz.core.markup import plot_text
from fairviz.core.serialize import nan_if_none
from fairviz.core.theme import INK, KNEE_COLOUR, LEGEND_RIGHT, NEUTRAL, REGION_FILL, TEMPLATE, group_style, hline, vrect
from fairviz.core.wording import fmt
from fairviz.residuals.results import PairInvariance, ResidualAudit, ThresholdCheckResult, ThresholdInvarianceResult
from fairviz.residuals.threshold_invariance import METRIC_NAMES, RDF_METRICS

OUTCOME_TITLES = {"all": "All rows", "y0": "Y = 0 (residual = score; drives FPR)",
                  "y1": "Y = 1 (residual = score − 1; drives TPR)"}


def sorted_residual_plot(audit: ResidualAudit, groups: list[str] | None = None, outcome: str = "all",
                         hover_labels: np.ndarray | None = None, texts: np.ndarray | None = None,
                         show_regions: bool = True, height: int = 620) -> go.Figure:
    """Quantile function of D = P̂ − Y per group, with knees (diamonds) and ε-regions (shaded)."""
    fig = go.Figure()
    names = [g.name for g in audit.groups]
    shown = groups or names
    shapes = []               # set once below: fig.add_vrect/add_hline re-validate every shape on each call
    for name in shown:
        index = names.index(name)
        _add_group_curve(fig, audit, name, index, outcome, hover_labels, texts)
        if outcome == "all":
            summary = audit.group(name)
            for knee in summary.knees:
                if show_regions and audit.params.region_mode == "percentile":
                    eps = audit.params.region_eps
                    shapes.append(vrect(100 * max(knee.percentile - eps, 0), 100 * min(knee.percentile + eps, 1),
                                        fillcolor=REGION_FILL, line=dict(width=0), layer="below"))
                fig.add_trace(go.Scatter(
                    x=[100 * knee.percentile], y=[knee.residual], mode="markers",
                    # the group's colour, so a knee reads as that group's; the dark rim keeps it a knee marker
                    marker=dict(symbol="diamond", size=15, color=group_style(index)["color"],
                                line=dict(color=INK, width=1.5)),
                    name=f"{plot_text(name)}: {knee.side} knee", legendgroup=plot_text(name), showlegend=False,
                    hovertemplate=(f"<b>{plot_text(name)}</b> {knee.side} knee{' (boundary)' if knee.boundary else ''}<br>"
                                   "percentile %{x:.1f}%<br>residual %{y:.3f}<extra></extra>")))
    if audit.numeric_target:
        return _regression_layout(fig, audit, shapes, height)
    eces = [f"{plot_text(g.name)} {fmt(g.ece)}" for g in audit.groups if g.name in shown]
    # three groups a line: a longer subtitle would run past the chart's edge in the page's column
    ece_lines = [", ".join(eces[i:i + 3]) for i in range(0, len(eces), 3)] or [""]
    ece_text = ",</sup><br><sup>".join(ece_lines)
    shapes.append(hline(0, line=dict(color=NEUTRAL, width=1)))
    fig.update_layout(
        template=TEMPLATE, height=height, shapes=shapes,
        title=dict(text=f"Sorted residuals by {plot_text(audit.attribute)} — {OUTCOME_TITLES[outcome]}"
                        f"<br><sup>ECE (15 bins): {ece_text}</sup>"),
        xaxis=dict(title="Percentile within group (%)", range=[0, 100]),
        yaxis=dict(title="Residual D = score − label", range=_y_range(outcome)),
        legend=dict(orientation="h", yanchor="top", y=-0.14, xanchor="left", x=0.0, title_text=""),
        margin=dict(t=70 + 20 * len(ece_lines), b=40),
    )
    return fig


def _regression_layout(fig: go.Figure, audit: ResidualAudit, shapes: list, height: int) -> go.Figure:
    """A regression's curves: D in the target's units on an axis fitted to the data (no outcome, no ECE)."""
    shapes.append(hline(0, line=dict(color=NEUTRAL, width=1)))
    unit = plot_text(audit.unit)
    fig.update_layout(
        template=TEMPLATE, height=height, shapes=shapes,
        title=dict(text=f"Sorted residuals by {plot_text(audit.attribute)}"),
        xaxis=dict(title="Percentile within group (%)", range=[0, 100]),
        yaxis=dict(title=f"D = ŷ − y, in units of {unit}"),
        legend=dict(orientation="h", yanchor="top", y=-0.14, xanchor="left", x=0.0, title_text=""),
        margin=dict(t=70, b=40))
    return fig


def _add_group_curve(fig, audit, name, index, outcome, hover_labels, texts) -> None:
    curve = audit.curves[name][outcome]
    if curve.percentile.size == 0:
        return
    style = group_style(index)
    rows = curve.row
    custom = np.column_stack([
        _labels(hover_labels, rows),
        np.array([plot_text(_shorten(str(t))) for t in texts[rows]]) if texts is not None else np.full(rows.size, ""),
    ])
    fig.add_trace(_line_trace(curve.percentile.size)(
        x=100 * curve.percentile, y=curve.residual, mode="lines",
        name=f"{plot_text(name)} (n = {audit.group(name).n:,})",
        legendgroup=plot_text(name), line=dict(color=style["color"], dash=style["dash"], width=3), customdata=custom,
        hovertemplate=(f"<b>{plot_text(name)}</b><br>percentile %{{x:.1f}}%<br>residual %{{y:.3f}}<br>"
                       "%{customdata[0]}<br>%{customdata[1]}<extra></extra>")))


SVG_MAX_POINTS = 5000      # a line up to this many points is one SVG path (drawn at once, no WebGL context)


def _line_trace(points: int):
    """SVG lines for curves of up to SVG_MAX_POINTS points (every curve the analysis draws has at most 2,000):
    a WebGL context per chart costs a second or more to set up and redraw where the browser renders WebGL in
    software (no GPU: meeting-room laptops, virtual machines, headless Chromium); WebGL only for longer lines."""
    return go.Scatter if points <= SVG_MAX_POINTS else go.Scattergl


def _labels(hover_labels, rows: np.ndarray) -> np.ndarray:
    """The hover label of each drawn row, escaped (the row number where the data have no labels)."""
    if hover_labels is None:
        return rows.astype(str)
    return np.array([plot_text(label) for label in hover_labels[rows]], dtype=object)


def _shorten(text: str, width: int = 90) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _y_range(outcome: str) -> list[float]:
    return {"all": [-1.05, 1.05], "y0": [-0.05, 1.05], "y1": [-1.05, 0.05]}[outcome]


def outcome_panels(audit: ResidualAudit, groups: list[str] | None = None,
                   hover_labels: np.ndarray | None = None, height: int = 480) -> go.Figure:
    """The outcome-conditional views side by side: separation in either panel is an EO violation."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=[OUTCOME_TITLES["y0"], OUTCOME_TITLES["y1"]],
                        horizontal_spacing=0.08)
    names = [g.name for g in audit.groups]
    for col, outcome in enumerate(("y0", "y1"), start=1):
        for name in groups or names:
            curve = audit.curves[name][outcome]
            style = group_style(names.index(name))
            labels = _labels(hover_labels, curve.row)
            fig.add_trace(_line_trace(curve.percentile.size)(
                                       x=100 * curve.percentile, y=curve.residual, mode="lines", name=plot_text(name),
                                       legendgroup=plot_text(name), showlegend=col == 1, customdata=labels,
                                       line=dict(color=style["color"], dash=style["dash"], width=3),
                                       hovertemplate=f"<b>{plot_text(name)}</b> %{{x:.1f}}%: %{{y:.3f}}<br>%{{customdata}}"
                                                     "<extra></extra>"), row=1, col=col)
        fig.update_xaxes(title_text="Percentile within group (%)", range=[0, 100], row=1, col=col)
        fig.update_yaxes(range=_y_range(outcome), row=1, col=col)
    fig.update_yaxes(title_text="Residual", row=1, col=1)
    fig.update_layout(template=TEMPLATE, height=height, title="Outcome-conditional residuals",
                      legend=LEGEND_RIGHT)
    return fig


def threshold_figure(check: ThresholdCheckResult) -> go.Figure:
    """Theorem 6.1: each group's PPR, TPR and FPR counted directly (bars) and read off residual CDFs (markers)."""
    fig = go.Figure()
    metrics = ["ppr", "tpr", "fpr"]
    labels = {"ppr": "Positive rate (DP)", "tpr": "TPR (EO)", "fpr": "FPR (EO)"}
    for index, name in enumerate(check.groups):
        style = group_style(index)
        label = plot_text(name)
        x = [labels[m] for m in metrics]
        fig.add_trace(go.Bar(x=x, y=[nan_if_none(check.direct[name][m]) for m in metrics], name=f"{label} counted",
                             marker_color=style["color"], offsetgroup=index,
                             hovertemplate=f"<b>{label}</b> %{{x}} counted: %{{y:.4f}}<extra></extra>"))
        fig.add_trace(go.Scatter(x=x, y=[nan_if_none(check.from_residuals[name][m]) for m in metrics],
                                 name=f"{label} from residual CDF", mode="markers", offsetgroup=index,
                                 marker=dict(symbol="x-thin", size=18, line=dict(width=3, color="black")),
                                 hovertemplate=f"<b>{label}</b> %{{x}} from residuals: %{{y:.4f}}<extra></extra>",
                                 showlegend=index == 0))
    fig.update_layout(template=TEMPLATE, barmode="group", height=420, yaxis=dict(title="Rate", range=[0, 1.05]),
                      title=f"Rates at threshold τ = {check.threshold:.2f}: counted (bars) = from residuals (×)",
                      legend=LEGEND_RIGHT)
    return fig


def concentration_figure(audit: ResidualAudit) -> go.Figure:
    """Mean |D| in knee regions vs elsewhere, with bootstrap intervals."""
    c = audit.concentration
    fig = go.Figure(go.Bar(
        x=["Knee regions", "Elsewhere"], y=[c.knee_mean, c.nonknee_mean],
        marker_color=[KNEE_COLOUR, NEUTRAL],
        error_y=dict(type="data", symmetric=False,
                     array=[nan_if_none(c.knee_mean_ci.high) - c.knee_mean, nan_if_none(c.nonknee_mean_ci.high) - c.nonknee_mean],
                     arrayminus=[c.knee_mean - nan_if_none(c.knee_mean_ci.low), c.nonknee_mean - nan_if_none(c.nonknee_mean_ci.low)]),
        text=[f"n = {c.n_knee:,}", f"n = {c.n_nonknee:,}"], textposition="inside",
        hovertemplate="%{x}: mean |D| %{y:.3f}<extra></extra>"))
    unit = f" ({plot_text(audit.unit)})" if audit.numeric_target else ""
    fig.update_layout(template=TEMPLATE, height=380, yaxis_title=f"Mean |residual|{unit}",
                      title=f"Error concentration: ratio {fmt(c.ratio, 2)}×")
    return fig



def invariance_figure(result: ThresholdInvarianceResult, pair: PairInvariance | None = None) -> go.Figure:
    """[1] App. D.1: each metric against τ for one pair: the RDF metrics are flat lines, the classical gaps move."""
    pair = pair or result.pairs[0]
    fig = go.Figure()
    for m in ("f_pattern", "f_dist", "dp_diff", "eo_tpr_diff", "eo_fpr_diff", "dp_ratio", "eo_ratio"):
        dash = "solid" if m in RDF_METRICS else "dot"
        cv = pair.cv.get(m)
        label = f"{METRIC_NAMES[m]} (CV {'undefined' if cv is None else f'{cv:.1f}%'})"
        fig.add_trace(go.Scatter(x=list(result.thresholds), y=[nan_if_none(v) for v in pair.values[m]],
                                 mode="lines+markers", name=label, line={"dash": dash}))
    fig.update_layout(template=TEMPLATE, height=360, xaxis_title="threshold τ", yaxis_title="value",
                      title=f"Metrics across thresholds τ: {plot_text(pair.group_i)} vs {plot_text(pair.group_j)}",
                      margin={"t": 50, "b": 40}, legend=LEGEND_RIGHT)
    return fig
