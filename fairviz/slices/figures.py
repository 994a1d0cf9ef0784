"""The slices as a treemap: each depth-1 slice a tile holding its refinements, sized by rows and coloured by the
difference of its metric from the rest's (grey: too small to tell or untested)."""
from __future__ import annotations

import numpy as np

from fairviz.core.markup import plot_text
from fairviz.core.theme import TEMPLATE
from fairviz.slices.analysis import SliceResult

MAX_TILES = 400         # the largest slices drawn; the table keeps every one


def treemap(result: SliceResult, metric_title: str):
    import plotly.graph_objects as go

    table = result.table.nlargest(MAX_TILES, "n") if len(result.table) > MAX_TILES else result.table
    ids, parents = list(table["slice"]), []
    known = set(ids)
    for name in ids:
        parts = name.split(" ∧ ")
        parent = " ∧ ".join(parts[:-1])
        parents.append(parent if parent in known else "")
    difference = table["difference"].where(~table["too_small"]).to_numpy(float)
    colour = np.nan_to_num(difference, nan=0.0)
    bound = max(float(np.nanmax(np.abs(difference))) if np.isfinite(difference).any() else 0.0, 1e-9)
    hover = [f"{plot_text(s)}<br>n = {int(n):,}<br>{metric_title} {m:.3f} (rest {r:.3f})<br>adjusted p {p:.2g}"
             if np.isfinite(p) else f"{plot_text(s)}<br>n = {int(n):,}<br>too small to tell"
             for s, n, m, r, p in zip(table["slice"], table["n"], table["metric"], table["rest"],
                                      table["p_adjusted"].fillna(np.nan))]
    labels = [plot_text(name.split(" ∧ ")[-1]) for name in ids]
    figure = go.Figure(go.Treemap(ids=[plot_text(i) for i in ids], parents=[plot_text(p) for p in parents],
                                  labels=labels, values=table["n"].to_numpy(float), branchvalues="remainder",
                                  hovertext=hover, hoverinfo="text",
                                  marker=dict(colors=colour, colorscale="RdBu_r", cmin=-bound, cmid=0, cmax=bound,
                                              colorbar=dict(title=f"{metric_title} − rest"))))
    figure.update_layout(template=TEMPLATE, margin=dict(l=10, r=10, t=30, b=10), height=520)
    return figure
