"""Figures of the Synthetic data (HydraGAN) page; they take a ``SynthAudit``, never rows."""
from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fairviz.core.markup import plot_text
from fairviz.core.serialize import nan_if_none
from fairviz.core.theme import NEUTRAL, PALETTE, TEMPLATE
from fairviz.synth.evaluate import FAIRNESS_METRICS
from fairviz.synth.results import METRIC_LABELS, SynthAudit
from fairviz.synth.thesis import IDEAL

SIDES = (("real", "trained on real data", PALETTE[0]), ("synthetic", "trained on synthetic data", PALETTE[1]))


def distribution_figure(result: SynthAudit, height: int = 380) -> go.Figure:
    """Target, real and synthetic shares of the labels and of the groups (what Table 3.5 measures)."""
    fig = make_subplots(1, 2, subplot_titles=(f"Label '{plot_text(result.label)}'",
                                                  f"Groups: {plot_text(result.condition_name)}"),
                        column_widths=[0.3, 0.7])
    for col, key in enumerate(("label", "group"), start=1):
        d = result.distribution[key]
        x = [plot_text(v) for v in d.levels]
        for name, values, colour in (("target", d.target, NEUTRAL), ("real", d.real, PALETTE[0]),
                                     ("synthetic", d.synthetic, PALETTE[1])):
            fig.add_bar(x=x, y=list(values), name=name, marker_color=colour, legendgroup=name, showlegend=col == 1,
                        hovertemplate=f"{name}: %{{y:.3f}}<extra>%{{x}}</extra>", row=1, col=col)
    fig.update_yaxes(title_text="share of rows", rangemode="tozero")
    fig.update_layout(template=TEMPLATE, barmode="group", height=height, title="Shares: target, real, synthetic")
    return fig


def boxplot_figure(result: SynthAudit, height: int = 520) -> go.Figure:
    """Fig. 3.4's form: each fairness metric per protected group over the trials, real- vs synthetic-trained."""
    fig = make_subplots(2, 2, subplot_titles=[METRIC_LABELS[m] for m in FAIRNESS_METRICS], vertical_spacing=0.14)
    for k, metric in enumerate(FAIRNESS_METRICS):
        row, col = divmod(k, 2)
        for side, label, colour in SIDES:
            x, y = [], []
            for group in result.fairness:
                values = getattr(group, side)[metric]
                x += [plot_text(group.group)] * len(values)
                y += [nan_if_none(v) for v in values]
            fig.add_box(x=x, y=y, name=label, marker_color=colour, legendgroup=side, showlegend=k == 0,
                        boxpoints="all", jitter=0.3, pointpos=0, row=row + 1, col=col + 1)
        fig.add_hline(y=IDEAL[metric], line=dict(color=NEUTRAL, dash="dot", width=1), row=row + 1, col=col + 1)
    fig.update_layout(template=TEMPLATE, boxmode="group", height=height,
                      title=f"Bias per protected group over {result.trials} trials (dotted: no bias)")
    return fig


def loss_figure(result: SynthAudit, height: int = 360) -> go.Figure:
    """Per-epoch mean loss of the critic, the gradient penalty and each generator head."""
    fig = go.Figure()
    for k, (name, values) in enumerate(result.history.items()):
        fig.add_scatter(x=list(range(1, len(values) + 1)), y=list(values), mode="lines+markers", name=name,
                        line=dict(color=PALETTE[k % len(PALETTE)]))
    fig.update_layout(template=TEMPLATE, height=height, title="Training losses per head",
                      xaxis_title="epoch", yaxis_title="mean loss")
    return fig
