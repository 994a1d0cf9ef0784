"""Figures of the 'Lorenz & PTN' and 'Forecast fairness' pages. They take results, never raw rows; every curve is
drawn from at most a few thousand points."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fairviz.forecast import crps as scores
from fairviz.forecast.density import density_map, mode_count
from fairviz.core.markup import plot_text
from fairviz.core.serialize import nan_if_none
from fairviz.core.theme import LEGEND_RIGHT, NEUTRAL, PALETTE, TEMPLATE, group_style
from fairviz.core.wording import fmt

FAN_BLUE = "0, 114, 178"                  # PALETTE[0] as RGB, for nested translucent bands
TRUTH = "#000000"
POINT = "#D55E00"                          # the deterministic forecast (the thesis draws it red)
MAX_POINTS = 2000


def _thin(n: int, limit: int = MAX_POINTS) -> np.ndarray:
    return np.arange(n) if n <= limit else np.linspace(0, n - 1, limit).round().astype(int)


# ----------------------------------------------------------------------------------------------- Lorenz

def attractor_figure(states: np.ndarray, time: np.ndarray, title: str = "Lorenz attractor",
                     second: np.ndarray | None = None, height: int = 620) -> go.Figure:
    """A 3-D trajectory coloured by time (and optionally a second one, for the butterfly effect)."""
    idx = _thin(states.shape[0])
    fig = go.Figure(go.Scatter3d(
        x=states[idx, 0], y=states[idx, 1], z=states[idx, 2], mode="lines", name="trajectory",
        line=dict(color=time[idx], colorscale="Viridis", width=4, colorbar=dict(title="t", thickness=14)),
        hovertemplate="t %{customdata:.2f}<br>x %{x:.2f}<br>y %{y:.2f}<br>z %{z:.2f}<extra></extra>",
        customdata=time[idx]))
    if second is not None:
        fig.add_trace(go.Scatter3d(x=second[idx, 0], y=second[idx, 1], z=second[idx, 2], mode="lines",
                                   name="perturbed start", line=dict(color=POINT, width=3, dash="dash"),
                                   hoverinfo="skip"))
    fig.update_layout(template=TEMPLATE, height=height, title=title, margin=dict(l=0, r=0, t=60, b=0),
                      scene=dict(xaxis_title="x", yaxis_title="y", zaxis_title="z", aspectmode="data",
                                 camera=dict(eye=dict(x=1.5, y=-1.5, z=0.7))),
                      legend=LEGEND_RIGHT)
    return fig


def butterfly_figure(div) -> go.Figure:
    """x(t) of both starts, and their distance on a log scale with the divergence time marked."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.55, 0.45],
                        subplot_titles=["x(t) from the two starts", "distance between the two states (log scale)"])
    idx = _thin(div.time.size)
    t = div.time[idx]
    fig.add_trace(go.Scatter(x=t, y=div.first[idx, 0], name="start", line=dict(color=PALETTE[0], width=2.5)), 1, 1)
    fig.add_trace(go.Scatter(x=t, y=div.second[idx, 0], name=f"start + {div.delta:.3g} in x",
                             line=dict(color=POINT, width=2.5, dash="dash")), 1, 1)
    distance = np.maximum(div.distance[idx], 1e-16)
    fig.add_trace(go.Scatter(x=t, y=distance, name="distance", line=dict(color=NEUTRAL, width=2.5),
                             showlegend=False, hovertemplate="t %{x:.2f}: %{y:.2e}<extra></extra>"), 2, 1)
    fig.add_hline(y=div.threshold, line=dict(color=NEUTRAL, dash="dot"), row=2, col=1)
    if np.isfinite(div.divergence_time):
        fig.add_vline(x=div.divergence_time, line=dict(color=POINT, width=2), row="all", col=1)
        fig.add_annotation(x=div.divergence_time, y=1, yref="paper", text=f"diverged at t = {div.divergence_time:.1f}",
                           showarrow=False, xanchor="left", font=dict(color=POINT))
    fig.update_yaxes(type="log", title_text="‖Δ state‖", exponentformat="power", row=2, col=1)
    fig.update_yaxes(title_text="x", row=1, col=1)
    fig.update_xaxes(title_text="time t", row=2, col=1)
    fig.update_layout(template=TEMPLATE, height=560, legend=LEGEND_RIGHT)
    return fig


# ----------------------------------------------------------------------------------------------- fans

def fan_figure(steps: np.ndarray, quantiles: np.ndarray, tau: np.ndarray, truth: np.ndarray | None = None,
               point: np.ndarray | None = None, history: tuple[np.ndarray, np.ndarray] | None = None,
               bands=scores.BANDS, title: str = "Quantile fan", point_name: str = "deterministic forecast",
               x_title: str = "step", y_title: str = "x", height: int = 520) -> go.Figure:
    """Nested central bands (widest, lightest first), the median, the point forecast, the truth and history."""
    fig = go.Figure()
    usable = [b for b in sorted(bands, reverse=True) if scores.band_supported(tau, b)]
    for k, band in enumerate(usable):
        lo, hi = scores.central_band(quantiles, tau, band)
        opacity = 0.14 + 0.5 * (k + 1) / (len(usable) + 1)
        fig.add_trace(go.Scatter(x=np.concatenate([steps, steps[::-1]]), y=np.concatenate([hi, lo[::-1]]),
                                 fill="toself", fillcolor=f"rgba({FAN_BLUE}, {opacity:.2f})", line=dict(width=0),
                                 name=f"{100 * band:g}% band", hoverinfo="skip"))
    if tau[0] <= 0.5 <= tau[-1]:
        fig.add_trace(go.Scatter(x=steps, y=scores.quantile_at(quantiles, tau, 0.5), name="median",
                                 line=dict(color=f"rgb({FAN_BLUE})", width=3),
                                 hovertemplate="step %{x}: median %{y:.3f}<extra></extra>"))
    if point is not None:
        fig.add_trace(go.Scatter(x=steps, y=point, name=point_name, line=dict(color=POINT, width=2.5, dash="dash"),
                                 hovertemplate="step %{x}: %{y:.3f}<extra></extra>"))
    if history is not None:
        hx, hy = history
        fig.add_trace(go.Scatter(x=hx, y=hy, name="history", line=dict(color=NEUTRAL, width=2.5),
                                 hovertemplate="step %{x}: %{y:.3f}<extra></extra>"))
    if truth is not None:
        fig.add_trace(go.Scatter(x=steps, y=truth, name="truth", mode="lines+markers",
                                 line=dict(color=TRUTH, width=2.5), marker=dict(size=6),
                                 hovertemplate="step %{x}: truth %{y:.3f}<extra></extra>"))
    if history is not None:
        fig.add_vline(x=0, line=dict(color=NEUTRAL, dash="dot"))
    fig.update_layout(template=TEMPLATE, height=height, title=title, xaxis_title=x_title, yaxis_title=y_title,
                      legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0.0),
                      margin=dict(b=120))
    return fig


def density_figure(steps: np.ndarray, quantiles: np.ndarray, truth: np.ndarray | None = None,
                   point: np.ndarray | None = None, grid_points: int = 160, height: int = 480) -> go.Figure:
    """Per-step density of the 111 quantiles (Gaussian KDE) as a heat map: separate bright ridges are modes."""
    lo = float(np.nanmin(quantiles))
    hi = float(np.nanmax(quantiles))
    if truth is not None:
        lo, hi = min(lo, float(np.nanmin(truth))), max(hi, float(np.nanmax(truth)))
    pad = 0.05 * (hi - lo + 1e-9)
    grid = np.linspace(lo - pad, hi + pad, grid_points)
    dens = density_map(quantiles, grid)
    modes = mode_count(quantiles)
    fig = go.Figure(go.Heatmap(x=steps, y=grid, z=dens.T / dens.max(axis=1)[None, :], colorscale="Blues",
                               colorbar=dict(title="density<br>(per step)"), customdata=np.tile(modes, (grid.size, 1)),
                               hovertemplate="step %{x}, x %{y:.2f}<br>relative density %{z:.2f}"
                                             "<br>modes at this step: %{customdata}<extra></extra>"))
    if point is not None:
        fig.add_trace(go.Scatter(x=steps, y=point, name="deterministic forecast",
                                 line=dict(color=POINT, width=2.5, dash="dash")))
    if truth is not None:
        fig.add_trace(go.Scatter(x=steps, y=truth, name="truth", mode="lines+markers", line=dict(color=TRUTH, width=2.5)))
    fig.update_layout(template=TEMPLATE, height=height, xaxis_title="step", yaxis_title="x",
                      title=f"Density per step: up to {int(modes.max())} mode(s)",
                      legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0.0),
                      margin=dict(b=120))
    return fig


# ----------------------------------------------------------------------------------------------- training

def loss_figure(history: list[dict], height: int = 360) -> go.Figure:
    epochs = [h["epoch"] for h in history]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=epochs, y=[h["train"] for h in history], name="training batches (ordered CRPS)",
                             line=dict(color=PALETTE[0], width=2.5)))
    fig.add_trace(go.Scatter(x=epochs, y=[h["val"] for h in history], name="validation subset",
                             line=dict(color=PALETTE[1], width=2.5, dash="dash")))
    fig.update_layout(template=TEMPLATE, height=height, title="Loss per epoch (normalised scale)",
                      xaxis_title="epoch", yaxis_title="CRPS + ω·ordering penalty",
                      legend=LEGEND_RIGHT)
    return fig


def darts_figure(arch_weights: dict, fusion: dict | None = None, height: int = 360) -> go.Figure:
    """Softmax weights of each DARTS cell's operations (and the fusion scalars)."""
    cols = 2 if fusion else 1
    fig = make_subplots(rows=1, cols=cols, column_widths=[0.7, 0.3][:cols],
                        subplot_titles=["DARTS cell weights (softmax α)", "fusion scalars"][:cols])
    for k, (cell, weights) in enumerate(arch_weights.items()):
        fig.add_trace(go.Bar(x=list(weights), y=list(weights.values()), name=cell, marker_color=PALETTE[k % 8],
                             text=[f"{v:.2f}" for v in weights.values()], textposition="outside",
                             hovertemplate=f"{cell}: %{{x}} %{{y:.3f}}<extra></extra>"), 1, 1)
    if fusion:
        fig.add_trace(go.Bar(x=list(fusion), y=list(fusion.values()), marker_color=NEUTRAL, showlegend=False,
                             text=[f"{v:.2f}" for v in fusion.values()], textposition="outside"), 1, 2)
    fig.update_yaxes(range=[0, 1.1], row=1, col=1)
    fig.update_layout(template=TEMPLATE, height=height, barmode="group", legend=dict(orientation="h", y=-0.2, x=0))
    return fig


# ----------------------------------------------------------------------------------------------- evaluation

def crps_distribution_figure(crps_model: np.ndarray, crps_baseline: np.ndarray, model: str = "PTN",
                             baseline: str = "Gaussian-NVAR baseline", height: int = 400) -> go.Figure:
    """ECDFs of per-forecast CRPS, with the quartiles the skill table uses."""
    fig = go.Figure()
    for k, (values, name) in enumerate(((crps_model, model), (crps_baseline, baseline))):
        values = np.sort(values[np.isfinite(values)])
        idx = _thin(values.size)
        fig.add_trace(go.Scatter(x=values[idx], y=(idx + 1) / values.size, name=name,
                                 line=dict(color=PALETTE[[0, 5][k]], width=3, dash=["solid", "dash"][k]),
                                 hovertemplate=f"{name}: CRPS ≤ %{{x:.3f}} for %{{y:.1%}} of forecasts<extra></extra>"))
    for q in (0.25, 0.5, 0.75):
        fig.add_hline(y=q, line=dict(color="#bbbbbb", width=1, dash="dot"))
    fig.update_layout(template=TEMPLATE, height=height, title="Per-forecast CRPS (lower is better)",
                      xaxis_title="CRPS of one 16-step forecast (x units)", yaxis_title="share of forecasts",
                      legend=LEGEND_RIGHT)
    return fig


def pit_figure(hists: dict, height: int = 360) -> go.Figure:
    """PIT histograms (share per bin); a calibrated forecast is flat at 1/bins."""
    fig = go.Figure()
    for k, (name, hist) in enumerate(hists.items()):
        bins = len(hist)
        centres = (np.arange(bins) + 0.5) / bins
        fig.add_trace(go.Bar(x=centres, y=hist, name=plot_text(name), marker_color=PALETTE[[0, 5, 2, 3][k % 4]],
                             width=0.9 / bins / max(len(hists), 1), offsetgroup=k,
                             hovertemplate=f"{plot_text(name)}: PIT %{{x:.2f}} share %{{y:.3f}}<extra></extra>"))
        fig.add_hline(y=1 / bins, line=dict(color=NEUTRAL, dash="dot"))
    fig.update_layout(template=TEMPLATE, height=height, barmode="group", title="PIT histogram (flat = calibrated)",
                      xaxis=dict(title="PIT = forecast CDF at the truth", range=[0, 1]), yaxis_title="share",
                      legend=LEGEND_RIGHT)
    return fig


def coverage_figure(nominal: list[float], observed: dict, height: int = 360) -> go.Figure:
    """Observed coverage of each central band against its nominal level, per model."""
    fig = go.Figure()
    labels = [f"{100 * b:g}%" for b in nominal]
    for k, (name, values) in enumerate(observed.items()):
        fig.add_trace(go.Bar(x=labels, y=[values.get(b, np.nan) for b in nominal], name=plot_text(name),
                             marker_color=PALETTE[[0, 5, 2, 3][k % 4]],
                             text=[fmt(values.get(b)) for b in nominal], textposition="outside"))
    fig.add_trace(go.Scatter(x=labels, y=nominal, mode="markers", name="nominal",
                             marker=dict(symbol="line-ew", size=40, line=dict(width=3, color=TRUTH))))
    fig.update_layout(template=TEMPLATE, height=height, barmode="group", yaxis=dict(title="coverage", range=[0, 1.1]),
                      title="Interval coverage by band", legend=LEGEND_RIGHT)
    return fig


# ----------------------------------------------------------------------------------------------- fairness

def group_metric_figure(result, metric: str, title: str, height: int = 380) -> go.Figure:
    """One metric per group with its bootstrap interval (the overall value as a dotted line)."""
    fig = go.Figure()
    for k, g in enumerate(result.groups):
        value = _value(g, metric)
        ci = g.ci.get(metric)
        low = None if ci is None else ci.low
        high = None if ci is None else ci.high
        fig.add_trace(go.Scatter(
            x=[plot_text(g.name)], y=[value], mode="markers", name=f"{plot_text(g.name)} ({g.n_series} series)",
            marker=dict(size=16, color=group_style(k)["color"]),
            error_y=dict(type="data", symmetric=False, array=[nan_if_none(high) - value], arrayminus=[value - nan_if_none(low)],
                         thickness=2.5, width=10),
            hovertemplate=f"<b>{plot_text(g.name)}</b><br>{metric}: %{{y:.4f}}<br>95% CI [{fmt(low, 4)}, {fmt(high, 4)}]<extra></extra>"))
    overall = _value(result.overall, metric)
    if np.isfinite(overall):
        fig.add_hline(y=overall, line=dict(color=NEUTRAL, dash="dot"), annotation_text=f"all: {overall:.3f}",
                      annotation_position="top left")
    fig.update_layout(template=TEMPLATE, height=height, title=title, showlegend=False,
                      xaxis_title=plot_text(result.attribute), yaxis_title=metric)
    return fig


def coverage_gap_figure(result, height: int = 420) -> go.Figure:
    """Coverage minus nominal per group and band, with bootstrap intervals: 0 = the band keeps its promise."""
    fig = go.Figure()
    for k, band in enumerate(result.bands):
        key = f"coverage_{band:g}"
        x = [plot_text(g.name) for g in result.groups]
        y = [nan_if_none(g.coverage[band]) - band for g in result.groups]
        hi = [nan_if_none(g.ci[key].high) - band - v for g, v in zip(result.groups, y)]
        lo = [v - (nan_if_none(g.ci[key].low) - band) for g, v in zip(result.groups, y)]
        fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name=f"{100 * band:g}% band",
                                 marker=dict(size=14, color=PALETTE[k % 8], symbol=["circle", "square", "diamond",
                                                                                    "triangle-up"][k % 4]),
                                 error_y=dict(type="data", symmetric=False, array=hi, arrayminus=lo, thickness=2),
                                 hovertemplate=f"%{{x}}: coverage − {100 * band:g}% = %{{y:+.3f}}<extra></extra>"))
    fig.add_hline(y=0, line=dict(color=TRUTH, width=1.5))
    fig.update_layout(template=TEMPLATE, height=height, title="Coverage gap by group (observed − nominal)",
                      xaxis_title=plot_text(result.attribute), yaxis_title="coverage − nominal",
                      legend=LEGEND_RIGHT, scattermode="group")
    return fig


def skill_figure(result, height: int = 380) -> go.Figure:
    """Per-group skill of model A over model B (1 − CRPS_A/CRPS_B) with intervals; > 0: A is better."""
    fig = go.Figure()
    for k, s in enumerate(result.skills + ([result.skill_overall] if result.skill_overall else [])):
        colour = NEUTRAL if s.name == "all" else group_style(k)["color"]
        fig.add_trace(go.Bar(x=[plot_text(s.name)], y=[s.skill], marker_color=colour, name=plot_text(s.name),
                             error_y=dict(type="data", symmetric=False, array=[nan_if_none(s.ci.high) - s.skill],
                                          arrayminus=[s.skill - nan_if_none(s.ci.low)], thickness=2.5),
                             text=[f"{s.skill:+.3f}" if np.isfinite(s.skill) else "undefined"], textposition="outside",
                             hovertemplate=f"<b>{plot_text(s.name)}</b>: skill %{{y:+.3f}}<br>CRPS A {s.crps_a:.3f} vs B "
                                           f"{s.crps_b:.3f}<br>{100 * s.share_series_better:.0f}% of series better"
                                           "<extra></extra>"))
    fig.add_hline(y=0, line=dict(color=TRUTH, width=1.5))
    fig.update_layout(template=TEMPLATE, height=height, showlegend=False,
                      title=f"Skill of '{plot_text(result.model)}' over '{plot_text(result.compare_model)}' by group",
                      yaxis_title="1 − CRPS_A / CRPS_B", xaxis_title=plot_text(result.attribute))
    return fig


def _value(g, metric: str) -> float:
    if metric.startswith("coverage_"):
        return nan_if_none(g.coverage.get(float(metric.split("_")[1])))
    if metric.startswith("width_"):
        return nan_if_none(g.width.get(float(metric.split("_")[1])))
    return nan_if_none(getattr(g, metric))



def series_fan_figure(fc, series_id: str, attribute: str, group: str, bands) -> go.Figure:
    """One series' quantile fan from uploaded forecasts (``QuantileForecasts``), titled with its names."""
    one = fc.one_series(series_id)
    title = f"{plot_text(fc.model)}: series {plot_text(series_id)} ({plot_text(attribute)} = {plot_text(group)})"
    return fan_figure(one.step, one.q, one.levels, one.truth, one.point, bands=bands, title=title,
                      point_name="point forecast", y_title="value")


def window_figures(fans, i: int, title: str) -> tuple[go.Figure, go.Figure]:
    """One window of ``pipeline.Fans``: its quantile fan around the NVAR forecast (with the history) and its
    density per step ([3] Figs. 5.5–5.6)."""
    tau = scores.levels(fans.quantiles.shape[-1])
    steps = np.arange(1, fans.truth.shape[1] + 1)
    history = (np.arange(-fans.history_x.shape[1] + 1, 1), fans.history_x[i])
    q = fans.quantiles[i]
    return (fan_figure(steps, q, tau, fans.truth[i], fans.nvar[i], history, title=title, point_name="NVAR forecast",
                       x_title=f"step (Δt = {fans.dt:.3f})"),
            density_figure(steps, q, fans.truth[i], fans.nvar[i]))
