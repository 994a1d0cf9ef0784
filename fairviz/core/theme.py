"""One look for every figure: a colour-blind-safe palette and projector-sized fonts."""
from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio

# Okabe & Ito (2008): distinguishable under the common colour-vision deficiencies.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]
KNEE_COLOUR = "#D55E00"          # vermillion diamonds, as the paper's red knees
REGION_FILL = "rgba(213, 94, 0, 0.10)"
NEUTRAL = "#6b6b6b"
DIVERGING = [[0.0, "#b35806"], [0.25, "#f1a340"], [0.5, "#f7f7f7"], [0.75, "#998ec3"], [1.0, "#542788"]]
INK = "#1f1f1f"                  # text, ticks and axis lines: dark on white, readable on a projector
FONT = dict(family="Inter, Segoe UI, Helvetica, Arial, sans-serif", size=16, color=INK)
TICKS = dict(tickfont=dict(size=16, color=INK), tickcolor=INK, linecolor=INK, ticks="outside",
             title=dict(font=dict(size=16, color=INK)))
# legends never cover a title: outside the plot area, right of it, from the plot's top edge down (the title sits
# above that edge, in the top margin). Figures with a title use this instead of a horizontal legend over the plot.
LEGEND_RIGHT = dict(orientation="v", x=1.02, xanchor="left", y=1.0, yanchor="top")

pio.templates["fairviz"] = go.layout.Template(layout=go.Layout(
    font=FONT, colorway=PALETTE, paper_bgcolor="white", plot_bgcolor="white",
    title=dict(font=dict(size=20, color=INK), x=0.0, xanchor="left"),
    xaxis=dict(showgrid=True, gridcolor="#e6e6e6", zeroline=False, **TICKS),
    yaxis=dict(showgrid=True, gridcolor="#e6e6e6", zeroline=True, zerolinecolor="#999", **TICKS),
    legend=dict(bgcolor="rgba(255,255,255,0.85)", bordercolor="#ccc", borderwidth=1, font=dict(size=16, color=INK)),
    hoverlabel=dict(font_size=15), margin=dict(l=70, r=30, t=70, b=60),
))
# "plotly_white+fairviz" merged once and registered under one name: a "a+b" name is merged again on every figure
# (≈ 10 ms each, the largest part of building a small figure); the merged template is the same
pio.templates["fairviz_white"] = pio.templates.merge_templates("plotly_white", "fairviz")
TEMPLATE = "fairviz_white"


def group_style(index: int) -> dict:
    """Colour and dash of the index-th group: the dash keeps overlapping curves apart ([1] Fig. 1)."""
    return {"color": PALETTE[index % len(PALETTE)], "dash": DASHES[index % len(DASHES)]}


def vrect(x0: float, x1: float, **style) -> dict:
    """The shape ``fig.add_vrect`` adds (a band over the whole plot height), as a dict: a figure that draws several
    passes them all at once to ``update_layout(shapes=...)``, since each ``add_*`` call re-validates every shape."""
    return dict(type="rect", x0=x0, x1=x1, xref="x", y0=0, y1=1, yref="y domain", **style)


def hline(y: float, **style) -> dict:
    """The shape ``fig.add_hline`` adds (a line across the whole plot width), as a dict (see ``vrect``)."""
    return dict(type="line", x0=0, x1=1, xref="x domain", y0=y, y1=y, yref="y", **style)


def vline(x: float, **style) -> dict:
    """The shape ``fig.add_vline`` adds (a line over the whole plot height), as a dict (see ``vrect``)."""
    return dict(type="line", x0=x, x1=x, xref="x", y0=0, y1=1, yref="y domain", **style)
