"""Figures of the probing and augmentation results, built from their JSON dicts (``to_dict()`` after ``clean``), so
the shipped results, a fresh computation and the CLI's JSON all draw the same way. The probed texts are data and
are escaped where they enter a figure (``plot_text``)."""
from __future__ import annotations

import plotly.graph_objects as go

from fairviz.core.markup import plot_text
from fairviz.core.serialize import nan_if_none
from fairviz.core.theme import LEGEND_RIGHT, TEMPLATE
from fairviz.probing.results import AUGMENT_STRATEGIES, PROBES, STRATEGY_NAMES

REGION_COLOURS = {"knee": "#d62728", "non-knee": "#7f7f7f"}
STRATEGY_COLOURS = {"random": "#7f7f7f", "uncertainty": "#1f77b4", "rdf": "#d62728"}


def _err(value, interval):
    if value is None or not interval or interval[0] is None:
        return None, None
    return value - interval[0], interval[1] - value


def region_figure(data: dict) -> go.Figure:
    """Mean Δd per probe in the knee and non-knee samples, with their bootstrap intervals ([1] App. O, Table 11)."""
    fig = go.Figure()
    for region, key in (("knee", "knee_mean"), ("non-knee", "nonknee_mean")):
        values, minus, plus = [], [], []
        for probe in PROBES:
            row = data["probes"][probe]
            value = row[key]
            low, high = _err(value, row[f"{key}_ci"])
            values.append(nan_if_none(value))
            minus.append(nan_if_none(low))
            plus.append(nan_if_none(high))
        fig.add_trace(go.Bar(x=list(PROBES.values()), y=values, name=f"{region} sample",
                             marker_color=REGION_COLOURS[region],
                             error_y={"type": "data", "array": plus, "arrayminus": minus, "visible": True}))
    fig.update_layout(template=TEMPLATE, legend=LEGEND_RIGHT, barmode="group", height=340,
                      title="Counterfactual sensitivity by region: mean |Δd|", yaxis_title="mean |f(x′) − f(x)|", margin={"t": 50, "b": 40})
    return fig


def strategy_figure(data: dict) -> go.Figure:
    """App. D.2: demographic sensitivity and identity dependence of four selection strategies."""
    names = list(data["strategies"])
    fig = go.Figure()
    for key, label in (("demographic_sensitivity", "demographic sensitivity (swap)"),
                       ("identity_dependence", "identity dependence (removal)")):
        fig.add_trace(go.Bar(x=[STRATEGY_NAMES[n] for n in names],
                             y=[nan_if_none(data["strategies"][n][key]) for n in names], name=label))
    fig.update_layout(template=TEMPLATE, legend=LEGEND_RIGHT, barmode="group", height=340,
                      title="Which selection finds the sensitive examples? (App. D.2)", yaxis_title="mean |Δd|", margin={"t": 50, "b": 40})
    return fig


def scatter_figure(data: dict) -> go.Figure:
    """§8.2 "error vs. sensitivity": |d| against Δd of the swap for every probed example, by region."""
    ex = data["examples"]
    fig = go.Figure()
    for region in ("non-knee", "knee"):
        rows = [e for e in ex if e["region"] == region]
        fig.add_trace(go.Scatter(x=[abs(e["residual"]) for e in rows], y=[e["delta_swap"] for e in rows],
                                 mode="markers", name=f"{region} sample", marker={"color": REGION_COLOURS[region],
                                                                                  "size": 6, "opacity": 0.6},
                                 text=[plot_text(e["text"]) for e in rows], hovertemplate="%{text}<br>|d| %{x:.3f}, Δd %{y:.3f}"))
    c = data["error_vs_sensitivity"]
    rho = "undefined" if c["spearman"] is None else f"{c['spearman']:.2f}"
    fig.update_layout(template=TEMPLATE, legend=LEGEND_RIGHT, title=f"Error vs. sensitivity (Spearman ρ = {rho})",
                      height=360, xaxis_title="|residual| = |f(x) − y|", yaxis_title="|Δd| under the demographic swap",
                      margin={"t": 50, "b": 40})
    return fig


def augmentation_figure(data: dict, metric: str = "f_pattern") -> go.Figure:
    """Mean ΔF ± std over seeds per strategy and k (the paper's Tables 3 and 9, our sign convention)."""
    fig = go.Figure()
    ks = sorted({r["k"] for r in data["records"]})
    for strategy in AUGMENT_STRATEGIES:
        rows = [next((r for r in data["records"] if r["strategy"] == strategy and r["k"] == k), None) for k in ks]
        if not any(rows):
            continue
        fig.add_trace(go.Bar(x=[f"k = {k}" for k in ks],
                             y=[nan_if_none(r["delta"][metric]["mean"]) if r else float("nan") for r in rows],
                             error_y={"type": "data", "visible": True,
                                      "array": [nan_if_none(r["delta"][metric]["std"]) if r else float("nan")
                                                for r in rows]},
                             name=AUGMENT_STRATEGIES[strategy], marker_color=STRATEGY_COLOURS[strategy]))
    better = "higher is fairer" if metric == "f_pattern" else "lower is fairer"
    fig.update_layout(template=TEMPLATE, legend=LEGEND_RIGHT, barmode="group", height=340, margin={"t": 50, "b": 40},
                      title=f"Δ{metric.replace('f_', 'F_')} after fine-tuning (mean ± std over seeds; {better})",
                      yaxis_title=f"Δ{metric.replace('f_', 'F_')} = after − before")
    return fig
