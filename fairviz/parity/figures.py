"""Figures of the Group parity page: pairwise heatmaps and the benefit bars. They take results, never rows.

Colour means the same thing on every heatmap: purple favours the row group i, orange favours the column
group j, white is the metric's pivot (0, or 1 for DI). Metrics where a larger score *disfavours* i (TE, DCA,
DCR, PPV gap) are therefore coloured by the negated score, and DI by log(DI), so equal ratios either way get
equal colour. The printed numbers are always the metric's own values. Undefined cells are grey and say so.

Group names are data: they are escaped where they enter a figure (``plot_text``), so the markup we write (a bold DI
cell outside the four-fifths band) renders and a name's markup shows as typed.
"""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from fairviz.core.markup import plot_text
from fairviz.parity.di import FOUR_FIFTHS
from fairviz.parity.pair_metrics import PAIR_METRICS, PairwiseMatrix
from fairviz.parity.results import ParityAudit
from fairviz.core.theme import DIVERGING, LEGEND_RIGHT, NEUTRAL, PALETTE, TEMPLATE, hline, vrect

UNDEFINED_FILL = "#d9d9d9"
SEQUENTIAL = [[0.0, "#ffffff"], [1.0, "#0072B2"]]       # undirected gaps: white (none) → blue (large)
ANNOTATE_MAX = 14                                        # print numbers in cells up to this many groups


def colour_values(matrix: PairwiseMatrix) -> np.ndarray:
    """What the colour encodes: > 0 favours row i, < 0 favours column j (magnitude metrics: the gap itself)."""
    metric, values = matrix.metric, matrix.values
    with np.errstate(divide="ignore", invalid="ignore"):
        if metric.kind == "ratio":           # DI = 0 (i gets nothing, j something) is defined: log → −inf, drawn
            return np.where(values >= 0, np.log(values), np.nan)         # at the far "favours j" end
        if metric.kind == "magnitude":
            return values
        return metric.orientation * (values - metric.pivot)


MAX_GROUPS = 60                                          # a heatmap never sends more than 60 × 60 cells


def heatmap(matrix: PairwiseMatrix, highlight: tuple[str, str] | None = None, height: int | None = None,
            title: str | None = None, max_groups: int = MAX_GROUPS) -> go.Figure:
    shown_note = ""
    if len(matrix.groups) > max_groups:          # groups come largest first: keep the largest ones
        shown_note = f" — the {max_groups} largest of {len(matrix.groups)} groups"
        matrix = PairwiseMatrix(matrix.metric, matrix.groups[:max_groups], matrix.values[:max_groups, :max_groups],
                                matrix.reasons[:max_groups, :max_groups])
    metric, names = matrix.metric, list(matrix.groups)
    z = colour_values(matrix)
    finite = np.abs(z[np.isfinite(z)])
    span = float(finite.max()) if finite.size else 0.0
    z = np.where(np.isneginf(z), -max(span, 1.0), z)
    if metric.kind == "ratio":
        band = math.log(FOUR_FIFTHS[1])
        span = max(span, 1.6 * band)
        colorscale = _four_fifths_scale(band / span)
        ticks = sorted({-span, math.log(FOUR_FIFTHS[0]), 0.0, band, span})
        ticktext = [f"{math.exp(t):.2f}" for t in ticks]
        ticktext[0] += " favours j"
        ticktext[-1] += " favours i"
    elif metric.kind == "magnitude":
        span = max(span, 1e-9)
        colorscale, ticks, ticktext = SEQUENTIAL, [0, span], ["0 (no gap)", f"{span:.2f}"]
    else:
        span = max(span, 1e-9)
        colorscale = DIVERGING
        ticks, ticktext = [-span, 0, span], ["favours column j", "no bias", "favours row i"]
    text = _cell_text(matrix) if len(names) <= ANNOTATE_MAX else None
    hover = _hover(matrix)
    labels = [plot_text(name) for name in names]
    fig = go.Figure(go.Heatmap(
        z=z, x=labels, y=labels, zmin=-span if metric.kind != "magnitude" else 0, zmax=span, colorscale=colorscale,
        text=text, texttemplate="%{text}" if text is not None else None, textfont=dict(size=15),
        customdata=hover, hovertemplate="%{customdata}<extra></extra>", hoverongaps=True, xgap=2, ygap=2,
        colorbar=dict(title=dict(text=metric.label, side="right"), tickvals=ticks, ticktext=ticktext, len=0.9)))
    if highlight is not None and highlight[0] in names and highlight[1] in names:
        r, c = names.index(highlight[0]), names.index(highlight[1])
        fig.add_shape(type="rect", x0=c - 0.5, x1=c + 0.5, y0=r - 0.5, y1=r + 0.5,
                      line=dict(color="black", width=4))
    size = height or min(900, 170 + 60 * len(names))
    fig.update_layout(
        template=TEMPLATE, height=size, plot_bgcolor=UNDEFINED_FILL,
        title=(title or f"{metric.label}(row i, column j) = {metric.formula}") + shown_note,
        xaxis=dict(title="column group j", showgrid=False, side="bottom", tickangle=-30 if len(names) > 5 else 0),
        yaxis=dict(title="row group i", showgrid=False, autorange="reversed", zeroline=False),
        margin=dict(l=140, r=40, t=80, b=120))
    return fig


def _four_fifths_scale(band: float) -> list:
    """Orange ↔ purple with pale tints inside the four-fifths band (|log DI| ≤ log 1.25) and a jump outside."""
    inner = band / 2
    return [[0.0, "#b35806"], [0.5 - inner - 1e-6, "#f1a340"], [0.5 - inner, "#fee0b6"], [0.5, "#f7f7f7"],
            [0.5 + inner, "#d8daeb"], [0.5 + inner + 1e-6, "#998ec3"], [1.0, "#542788"]]


def _cell_text(matrix: PairwiseMatrix) -> np.ndarray:
    values = matrix.values
    out = np.empty(values.shape, dtype=object)
    digits = 2 if matrix.metric.kind == "ratio" else 3
    for (r, c), v in np.ndenumerate(values):
        if not np.isfinite(v):
            out[r, c] = "undefined"
        elif matrix.metric.key == "di" and (v < FOUR_FIFTHS[0] or v > FOUR_FIFTHS[1]):
            out[r, c] = f"<b>{v:.{digits}f}</b>"          # bold: outside the four-fifths band
        else:
            out[r, c] = f"{v:+.{digits}f}" if matrix.metric.kind == "difference" else f"{v:.{digits}f}"
    return out


def _hover(matrix: PairwiseMatrix) -> np.ndarray:
    metric, names = matrix.metric, matrix.groups
    out = np.empty(matrix.values.shape, dtype=object)
    for (r, c), v in np.ndenumerate(matrix.values):
        head = f"<b>{plot_text(names[r])}</b> (i) vs <b>{plot_text(names[c])}</b> (j)<br>{metric.label} = "
        if not np.isfinite(v):
            out[r, c] = head + f"undefined<br>{_wrap(plot_text(matrix.reasons[r, c]))}"   # reasons name groups
            continue
        favours = metric.favours_i(v)
        lean = "" if favours is None else f"<br>favours {plot_text(names[r] if favours else names[c])}"
        out[r, c] = head + f"{v:.4f}{lean}"
    return out


def _wrap(text: str, width: int = 60) -> str:
    words, lines, line = str(text).split(), [], ""
    for word in words:
        if len(line) + len(word) > width:
            lines.append(line)
            line = ""
        line += (" " if line else "") + word
    return "<br>".join(lines + [line])


def small_multiples(audit: ParityAudit, metrics: tuple[str, ...] = ("ofi", "di", "te", "pp")) -> list[go.Figure]:
    """The thesis's Figure 3.2 panels (TE, PP, DI, OFI) as separate, consistently coloured heatmaps."""
    return [heatmap(audit.matrices[m], height=min(560, 150 + 45 * len(audit.groups)),
                    title=PAIR_METRICS[m].label) for m in metrics]


def benefit_figure(audit: ParityAudit, highlight: tuple[str, str] | None = None) -> go.Figure:
    """What each group got (benefit rate b = P̂/n) next to what its labels warrant (E[b] = P/n); 𝓑 is the gap."""
    names = [g.name for g in audit.groups]
    labels = [plot_text(name) for name in names]
    got = [g.benefit_rate for g in audit.groups]
    deserved = [g.expected_benefit for g in audit.groups]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=got, name="benefit received  b = P̂/n", marker_color=PALETTE[0],
                         hovertemplate="%{x}: b = %{y:.3f}<extra></extra>"))
    fig.add_trace(go.Bar(x=labels, y=deserved, name="benefit warranted by labels  E[b] = P/n",
                         marker_color=PALETTE[1], marker_pattern_shape="/",
                         hovertemplate="%{x}: E[b] = %{y:.3f}<extra></extra>"))
    # annotations and shapes set once: fig.add_annotation/add_vrect/add_hline re-validate all of them on each call
    annotations = [dict(x=plot_text(g.name), y=max(g.benefit_rate, g.expected_benefit) + 0.04, showarrow=False,
                        text=f"𝓑 = {g.marginal_benefit:+.3f}",
                        font=dict(size=14, color="#542788" if g.marginal_benefit > 0 else "#b35806"))
                   for g in audit.groups]
    shapes = [vrect(names.index(name) - 0.45, names.index(name) + 0.45, line=dict(width=0),
                    fillcolor="rgba(0,0,0,0.06)", layer="below") for name in highlight or () if name in names]
    fig.update_layout(template=TEMPLATE, barmode="group", height=430,
                      title="Marginal benefit per group: 𝓑 = b − E[b] (OFI(i, j) = 𝓑_i − 𝓑_j)",
                      yaxis=dict(title="share of the group", range=[0, 1.12]),
                      legend=LEGEND_RIGHT,
                      annotations=annotations, shapes=[*shapes, hline(0, line=dict(color=NEUTRAL, width=1))])
    return fig
