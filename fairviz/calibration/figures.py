"""Figures of the calibration page (and the home page's score distributions). They take results from
``fairviz.calibration`` (probability calibration, calibration in the mean, top-label and class-wise calibration),
``recalibration`` and ``feature_residuals``, or per-group counts, never rows.

Names from the data (groups, the attribute, features and their values) are escaped where they enter a figure
(``plot_text``: legend names, hover text, category and tick labels, titles), so the markup written here (``<b>``,
``<br>``) survives and a name such as ``<b>x</b>`` shows as typed. Renderers do not escape these figures again."""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fairviz.calibration.feature_residuals import FeatureResiduals
from fairviz.calibration.mincer_zarnowitz import RegressionCalibration
from fairviz.calibration.recalibration import RecalibrationResult
from fairviz.calibration.results import OVERALL, CalibrationAudit, GroupCalibration, ReliabilityTable
from fairviz.calibration.top_label_ece import MulticlassCalibration
from fairviz.core.markup import plot_text
from fairviz.core.theme import LEGEND_RIGHT, NEUTRAL, PALETTE, TEMPLATE, group_style
from fairviz.core.wording import fmt, fmt_p

OVERALL_STYLE = {"color": "#000000", "dash": "solid"}
DIAGONAL = dict(color=NEUTRAL, width=1.5, dash="dot")


def _style(names: list[str], name: str) -> dict:
    return OVERALL_STYLE if name == OVERALL else group_style(names.index(name))


def _fill(color: str, alpha: float = 0.14) -> str:
    color = color.lstrip("#")
    r, g, b = (int(color[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _axis_max(tables: list[ReliabilityTable], curves: list, zoom: bool) -> float:
    if not zoom:
        return 1.0
    top = 0.05
    for t in tables:
        ok = t.nonempty
        if ok.any():
            top = max(top, float(np.nanmax(t.upper[ok])), float(np.nanmax(t.ci_high[ok])))
    for c in curves:
        if c.p.size:
            top = max(top, float(c.p.max()))
    return min(1.0, math.ceil(top * 20) / 20 + 0.02)


def _bin_hover(name: str, t: ReliabilityTable) -> list[str]:
    name = plot_text(name)
    out = []
    for i in range(t.n.size):
        if t.n[i] == 0:
            out.append("")
            continue
        close = "]" if i == t.n.size - 1 else ")"
        out.append(f"<b>{name}</b> bin [{t.lower[i]:.3f}, {t.upper[i]:.3f}{close}<br>n = {t.n[i]:,}, positives "
                   f"{t.n_pos[i]:,}<br>mean predicted {t.mean_pred[i]:.3f}<br>observed {t.observed[i]:.3f} "
                   f"(95% CI {t.ci_low[i]:.3f}–{t.ci_high[i]:.3f})")
    return out


def _add_group(fig, g: GroupCalibration, style: dict, strategy: str, row: int, col: int, show_curve: bool,
               show_bins: bool, legend: bool, count_scale: str) -> None:
    t = g.reliability[strategy]
    ok = t.nonempty
    name = plot_text(g.name)
    label = f"{name} (n = {g.n:,})"
    if show_curve and g.curve.p.size:
        c = g.curve
        fig.add_trace(go.Scatter(x=np.concatenate([c.p, c.p[::-1]]), y=np.concatenate([c.high, c.low[::-1]]),
                                 fill="toself", fillcolor=_fill(style["color"]), line=dict(width=0),
                                 hoverinfo="skip", showlegend=False, legendgroup=name), row=row, col=col)
        fig.add_trace(go.Scatter(x=c.p, y=c.fitted, mode="lines", name=f"{name} smoothed", legendgroup=name,
                                 line=dict(color=style["color"], dash=style["dash"], width=2.5),
                                 showlegend=legend and not show_bins,
                                 hovertemplate=f"<b>{name}</b> smoothed: predicted %{{x:.3f}} → observed "
                                               "%{y:.3f}<extra></extra>"), row=row, col=col)
    if show_bins and ok.any():
        fig.add_trace(go.Scatter(
            x=t.mean_pred[ok], y=t.observed[ok], mode="markers+lines" if not show_curve else "markers",
            name=label, legendgroup=name, showlegend=legend,
            marker=dict(color=style["color"], size=10, symbol="circle", line=dict(color="white", width=1)),
            line=dict(color=style["color"], dash=style["dash"], width=1.5),
            error_y=dict(type="data", symmetric=False, array=(t.ci_high - t.observed)[ok],
                         arrayminus=(t.observed - t.ci_low)[ok], color=style["color"], thickness=1.5, width=4),
            hovertext=np.array(_bin_hover(g.name, t))[ok], hoverinfo="text"), row=row, col=col)
    share = t.n / max(t.n.sum(), 1)
    fig.add_trace(go.Bar(x=(t.lower + t.upper) / 2, y=share if count_scale == "share" else t.n,
                         width=(t.upper - t.lower) * 0.92, marker_color=style["color"], opacity=0.55,
                         name=f"{name} rows per bin", legendgroup=name, showlegend=False,
                         customdata=np.column_stack([t.n, share]),
                         hovertemplate=f"<b>{name}</b> [%{{x:.2f}}]: %{{customdata[0]:,}} rows "
                                       "(%{customdata[1]:.1%})<extra></extra>"), row=row + 1, col=col)


def default_groups(audit: CalibrationAudit) -> list[str]:
    """The groups a reliability diagram shows first: up to four large enough to test, and all rows (tiny groups'
    wide intervals swamp a shared plot)."""
    testable = [g.name for g in audit.groups if g.linear.ok] or [g.name for g in audit.groups]
    return testable[:4] + [OVERALL]


def low_scores(audit: CalibrationAudit) -> bool:
    """Whether every score sits low enough (≤ 0.6) that the diagram reads better with its axes fitted to them."""
    table = audit.overall.reliability["uniform"]
    top = table.upper[table.nonempty].max() if table.nonempty.any() else 1.0
    return bool(top <= 0.6)


def reliability_figure(audit: CalibrationAudit, groups: list[str] | None = None, strategy: str = "uniform",
                       layout: str = "overlay", show_curve: bool = True, show_bins: bool = True,
                       zoom: bool = False, height: int = 640) -> go.Figure:
    """Observed rate against mean prediction per bin (with Beta intervals), the smoothed logistic-spline curve
    with its band, and a strip of how many rows each bin holds. Groups overlaid or side by side."""
    names = [g.name for g in audit.groups]
    shown = [audit.group(n) for n in (groups or [*names, OVERALL])]
    panels = [[g] for g in shown] if layout == "facet" else [shown]
    cols = len(panels)
    titles = [plot_text(p[0].name) for p in panels] if layout == "facet" else None
    fig = make_subplots(rows=2, cols=cols, shared_xaxes=True, row_heights=[0.8, 0.2], vertical_spacing=0.04,
                        horizontal_spacing=0.04 if cols > 1 else 0.02, subplot_titles=titles)
    top = _axis_max([g.reliability[strategy] for g in shown], [g.curve for g in shown], zoom)
    for c, panel in enumerate(panels, start=1):
        fig.add_trace(go.Scatter(x=[0, top], y=[0, top], mode="lines", line=DIAGONAL, name="perfect calibration",
                                 showlegend=c == 1, hoverinfo="skip"), row=1, col=c)
        for g in panel:
            _add_group(fig, g, _style(names, g.name), strategy, 1, c, show_curve, show_bins, c == 1 or layout == "facet",
                       "share")
        fig.update_xaxes(range=[0, top], row=1, col=c)
        fig.update_yaxes(range=[0, top], row=1, col=c, showticklabels=c == 1)
        fig.update_xaxes(range=[0, top], title_text="Mean predicted probability", row=2, col=c)
        fig.update_yaxes(tickformat=".0%", row=2, col=c, showticklabels=c == 1, rangemode="tozero")
    fig.update_yaxes(title_text="Observed rate", row=1, col=1)
    fig.update_yaxes(title_text="Rows", row=2, col=1)
    bins = f"{audit.params.n_bins} {'equal-width' if strategy == 'uniform' else 'equal-count'} bins"
    fig.update_layout(template=TEMPLATE, height=height, barmode="overlay",
                      title=f"Reliability by {plot_text(audit.attribute)}<br><sup>{bins}, 95% Beta intervals"
                            + (", smoothed curve with 95% band" if show_curve else "") + "</sup>",
                      legend=dict(orientation="h", yanchor="top", y=-0.14, xanchor="left", x=0, title_text=""),
                      margin=dict(t=90, b=150))
    return fig


def coefficient_figure(audit: CalibrationAudit) -> go.Figure:
    """Forest plot of the calibration-test coefficients: intercept β₀ and slope β₁ (0 = calibrated)."""
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=["Intercept β₀ (log-odds at p̂ = 0.5)", "Slope β₁ (0 = calibrated; > 0 under-, < 0 over-confident)"])
    names = [g.name for g in audit.groups]
    rows = [*audit.groups, audit.overall]
    labels = [plot_text(g.name) for g in rows]
    annotations = list(fig.layout.annotations)          # the subplot titles
    for col, attr in ((1, "intercept"), (2, "slope")):
        for i, g in enumerate(rows):
            style = _style(names, g.name)
            coef = getattr(g.linear, attr)
            if coef is None:          # the row stays on the axis (an unseen point); the words sit mid-panel, where
                # they cannot run past the figure's edge (at x = 0 they did, in the slope panel on the right)
                fig.add_trace(go.Scatter(x=[0], y=[labels[i]], mode="markers", marker=dict(opacity=0),
                                         showlegend=False, hovertext=plot_text(g.linear.status), hoverinfo="text"),
                              row=1, col=col)
                annotations.append(dict(text="not enough data", x=0.5, xref=f"x{'' if col == 1 else col} domain",
                                        y=labels[i], yref=f"y{'' if col == 1 else col}", showarrow=False,
                                        font=dict(color=NEUTRAL, size=16)))
                continue
            ci = coef.interval(audit.params.level)
            fig.add_trace(go.Scatter(
                x=[coef.estimate], y=[labels[i]], mode="markers", showlegend=False,
                marker=dict(color=style["color"], size=13, symbol="diamond" if g.name == OVERALL else "circle"),
                error_x=dict(type="data", symmetric=False, array=[ci.high - coef.estimate],
                             arrayminus=[coef.estimate - ci.low], color=style["color"], thickness=2, width=6),
                hovertemplate=(f"<b>{labels[i]}</b> {attr}: {coef.estimate:+.3f} (SE {coef.se:.3f})<br>95% CI "
                               f"{ci.low:+.3f} to {ci.high:+.3f}<br>z = {coef.z:.2f}, p = {fmt_p(coef.p)}<extra></extra>")),
                row=1, col=col)
        fig.add_vline(x=0, line=dict(color=NEUTRAL, width=1.5, dash="dot"), row=1, col=col)
    fig.update_yaxes(categoryorder="array", categoryarray=labels[::-1], row=1, col=1)
    fig.update_layout(template=TEMPLATE, height=max(300, 70 * len(rows) + 140), annotations=annotations,
                      title="Logistic calibration test: logit P(Y=1) = β₀ + β₁·logit p̂ + offset(logit p̂), 95% CIs")
    return fig


def errors_figure(audit: CalibrationAudit) -> go.Figure:
    """ECE (15 bins) and smooth ECE per group with bootstrap intervals."""
    rows = [*audit.groups, audit.overall]
    names = [g.name for g in audit.groups]
    fig = go.Figure()
    for metric, label, symbol in (("ece", "ECE (15 bins)", "circle"), ("smooth_ece", "Smooth ECE", "square")):
        values = [getattr(g, metric) for g in rows]
        cis = [getattr(g, f"{metric}_ci") for g in rows]
        fig.add_trace(go.Bar(
            x=[plot_text(g.name) for g in rows], y=values, name=label,
            marker=dict(color=[_style(names, g.name)["color"] for g in rows],
                        pattern_shape="" if metric == "ece" else "/", line=dict(color="white", width=1)),
            error_y=dict(type="data", symmetric=False, array=[_gap(c.high, v) for c, v in zip(cis, values)],
                         arrayminus=[_gap(v, c.low) for c, v in zip(cis, values)], color="#333"),
            customdata=[[fmt(c.low), fmt(c.high)] for c in cis],
            hovertemplate=f"<b>%{{x}}</b> {label}: %{{y:.4f}}<br>95% CI %{{customdata[0]}}–%{{customdata[1]}}"
                          "<extra></extra>"))
    fig.add_hline(y=0.05, line=dict(color=NEUTRAL, dash="dot", width=1), annotation_text="0.05: good below",
                  annotation_position="top left")
    fig.update_layout(template=TEMPLATE, barmode="group", height=420, yaxis_title="Calibration error",
                      title="Calibration error per group (plain bars ECE, hatched bars smooth ECE; 95% bootstrap CIs)",
                      legend=LEGEND_RIGHT)
    return fig


def performance_figure(audit: CalibrationAudit, metric: str = "auroc") -> go.Figure:
    """A group's metric with its bootstrap interval and n: small groups show wide intervals."""
    titles = {"auroc": "AUROC", "log_loss": "Log-loss", "brier": "Brier score"}
    rows = [*audit.groups, audit.overall]
    names = [g.name for g in audit.groups]
    fig = go.Figure()
    for g in rows:
        perf = g.performance
        value, ci = getattr(perf, metric), getattr(perf, f"{metric}_ci")
        style = _style(names, g.name)
        label = f"{plot_text(g.name)} (n = {g.n:,})"
        fig.add_trace(go.Scatter(
            x=[value], y=[label], mode="markers", showlegend=False,
            marker=dict(color=style["color"], size=13, symbol="diamond" if g.name == OVERALL else "circle"),
            error_x=dict(type="data", symmetric=False, array=[_gap(ci.high, value)], arrayminus=[_gap(value, ci.low)],
                         color=style["color"], thickness=2, width=6),
            hovertemplate=(f"<b>{plot_text(g.name)}</b> {titles[metric]} {fmt(value)}<br>95% CI {fmt(ci.low)}–{fmt(ci.high)}<br>"
                           f"n = {g.n:,}, positives {g.n_pos:,}{'<br>' + plot_text(perf.status) if perf.status else ''}<extra></extra>")))
    if metric == "auroc":
        fig.add_vline(x=0.5, line=dict(color=NEUTRAL, dash="dot", width=1), annotation_text="chance")
    fig.update_yaxes(categoryorder="array", categoryarray=[f"{plot_text(g.name)} (n = {g.n:,})" for g in rows][::-1])
    fig.update_layout(template=TEMPLATE, height=max(280, 60 * len(rows) + 120), xaxis_title=titles[metric],
                      title=f"{titles[metric]} by {plot_text(audit.attribute)} with 95% bootstrap intervals")
    return fig


def recalibration_figure(result: RecalibrationResult, method: str, groups: list[str], height: int = 520) -> go.Figure:
    """Before (original scores) and after (the chosen method) reliability on the evaluation rows."""
    after = result.method(method)
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.05,
                        subplot_titles=["Before: original scores", f"After: {after.label}"])
    names = [n for n in result.original.reliability if n != OVERALL]
    for col, res in ((1, result.original), (2, after)):
        fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line=DIAGONAL, showlegend=False,
                                 hoverinfo="skip"), row=1, col=col)
        for name in groups:
            t = res.reliability[name]
            ok = t.nonempty
            style = _style(names, name)
            m = res.metrics[name]
            fig.add_trace(go.Scatter(
                x=t.mean_pred[ok], y=t.observed[ok], mode="markers+lines", legendgroup=plot_text(name), showlegend=col == 1,
                name=plot_text(name), line=dict(color=style["color"], dash=style["dash"], width=2),
                marker=dict(size=9, color=style["color"]),
                error_y=dict(type="data", symmetric=False, array=(t.ci_high - t.observed)[ok],
                             arrayminus=(t.observed - t.ci_low)[ok], color=style["color"], thickness=1.2, width=3),
                hovertext=[h + f"<br>ECE of the group {m.ece:.3f}" for h in np.array(_bin_hover(name, t))[ok]],
                hoverinfo="text"), row=1, col=col)
        fig.update_xaxes(range=[0, 1], title_text="Mean predicted probability", row=1, col=col)
    fig.update_yaxes(range=[0, 1], title_text="Observed rate (evaluation rows)", row=1, col=1)
    fig.update_layout(template=TEMPLATE, height=height, title="Recalibration on the evaluation rows",
                      legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0, title_text=""), margin=dict(b=130))
    return fig


def recalibration_metric_figure(result: RecalibrationResult, metric: str = "ece") -> go.Figure:
    """A metric per group for the original scores and every method, on the evaluation rows."""
    titles = {"ece": "ECE (15 bins)", "smooth_ece": "Smooth ECE", "log_loss": "Log-loss", "brier": "Brier score"}
    fig = go.Figure()
    for i, res in enumerate(result.all):
        groups = list(res.metrics)
        fig.add_trace(go.Bar(x=[plot_text(g) for g in groups], y=[getattr(res.metrics[g], metric) for g in groups],
                             name=res.label,
                             marker_color=NEUTRAL if i == 0 else PALETTE[(i - 1) % len(PALETTE)],
                             hovertemplate=f"<b>%{{x}}</b> {res.label}: %{{y:.4f}}<extra></extra>"))
    fig.update_layout(template=TEMPLATE, barmode="group", height=400, yaxis_title=titles[metric],
                      title=f"{titles[metric]} on the evaluation rows, before and after (lower is better)",
                      legend=LEGEND_RIGHT)
    return fig


def feature_residual_figure(fr: FeatureResiduals, groups: list[str], height: int = 480) -> go.Figure:
    """Mean Pearson residual per bin of a feature, per group, with t intervals; 0 means unbiased there."""
    fig = go.Figure()
    names = [n for n in fr.groups if n != OVERALL]
    offsets = np.linspace(-0.15, 0.15, max(len(groups), 1)) if fr.kind == "categorical" else np.zeros(len(groups))
    feature = plot_text(fr.feature)
    for off, name in zip(offsets, groups):
        b = fr.groups[name]
        ok = b.n > 0
        style = _style(names, name)
        fig.add_trace(go.Scatter(
            x=(b.x + off)[ok], y=b.mean[ok], mode="markers+lines" if fr.kind == "numeric" else "markers",
            name=plot_text(name), line=dict(color=style["color"], dash=style["dash"], width=2),
            marker=dict(size=10, color=style["color"]),
            error_y=dict(type="data", symmetric=False, array=np.nan_to_num(b.high - b.mean)[ok],
                         arrayminus=np.nan_to_num(b.mean - b.low)[ok], color=style["color"], thickness=1.5, width=4),
            customdata=np.column_stack([[plot_text(v) for v in b.label[ok]], b.n[ok]]),
            hovertemplate=f"<b>{plot_text(name)}</b> {feature} %{{customdata[0]}}<br>mean Pearson residual %{{y:.3f}}"
                          "<br>n = %{customdata[1]}<extra></extra>"))
    fig.add_hline(y=0, line=dict(color=NEUTRAL, width=1.5, dash="dot"))
    xaxis = dict(title=feature)
    if fr.kind == "categorical":
        first = fr.groups[OVERALL]
        xaxis.update(tickmode="array", tickvals=first.x.tolist(), ticktext=[plot_text(v) for v in first.label])
    fig.update_layout(template=TEMPLATE, height=height, xaxis=xaxis,
                      yaxis_title="Mean Pearson residual (y − p̂)/√(p̂(1−p̂))",
                      title=f"Residuals against {feature}<br><sup>above 0 the model under-predicts, "
                            "below it over-predicts</sup>",
                      legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0, title_text=""),
                      margin=dict(t=90, b=130))
    return fig


def score_distribution_figure(attribute: str, names: list[str], edges: np.ndarray, shares: list[np.ndarray],
                              height: int = 340) -> go.Figure:
    """Each group's share of rows per score bin (``shares[k][b]``: group k, bin [edges[b], edges[b+1])): where the
    model puts each group's scores, the first thing to look at before any calibration or parity reading."""
    centres = (edges[:-1] + edges[1:]) / 2
    fig = go.Figure()
    for k, (raw, share) in enumerate(zip(names, shares)):
        name = plot_text(raw).replace("%{", "%\u200b{")      # data, never markup or a hover-template field
        style = group_style(k)
        fig.add_trace(go.Scatter(x=centres, y=share, mode="lines", line_shape="hvh", name=name,
                                 line=dict(color=style["color"], dash=style["dash"], width=2.5),
                                 hovertemplate=f"<b>{name}</b><br>score %{{x:.2f}} ± {(edges[1] - edges[0]) / 2:.3f}"
                                               "<br>%{y:.1%} of the group<extra></extra>"))
    fig.update_layout(template=TEMPLATE, height=height, title=f"Score distribution by {plot_text(attribute)}",
                      xaxis=dict(title="score", range=[0, 1]), yaxis=dict(title="share of the group", tickformat=".0%"),
                      legend=LEGEND_RIGHT, margin=dict(t=80))
    return fig


def _gap(a, b) -> float:
    return float(a - b) if a is not None and b is not None and np.isfinite(a) and np.isfinite(b) else 0.0


def _error(high, low, value):
    """Distance from a value to an interval end; 0 where undefined or where a bootstrap interval sits beyond the
    value (Plotly draws no bar then)."""
    out = np.asarray(high, float) - np.asarray(value, float) if low is None else \
        np.asarray(value, float) - np.asarray(low, float)
    return np.where(np.isfinite(out), np.maximum(out, 0.0), 0.0)


# ------------------------------------------------------------------------------------------------ calibration in the mean

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


# ------------------------------------------------------------------------------------------------ top-label and class-wise

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


def top_label_errors_figure(result: MulticlassCalibration, height: int = 420) -> go.Figure:
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
