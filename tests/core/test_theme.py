"""The shared figure theme: the merged template and the shape dicts that replace fig.add_vrect/add_hline/add_vline."""
from __future__ import annotations

import plotly.graph_objects as go

from fairviz.core.theme import TEMPLATE, hline, vline, vrect


def test_merged_template_equals_the_two_named_templates():
    ours = go.Figure().update_layout(template=TEMPLATE).to_plotly_json()["layout"]["template"]
    theirs = go.Figure().update_layout(template="plotly_white+fairviz").to_plotly_json()["layout"]["template"]
    assert ours == theirs
    assert ours["layout"]["colorway"][0] == "#0072B2"            # fairviz's palette over plotly_white's


def test_shape_dicts_equal_what_the_add_methods_add():
    added = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]))
    added.add_vrect(x0=0.2, x1=0.4, fillcolor="red", line_width=0, layer="below")
    added.add_hline(y=0.5, line=dict(color="#666", width=1))
    added.add_vline(x=0.3, line=dict(color="blue", width=3, dash="dash"))
    ours = go.Figure(go.Scatter(x=[0, 1], y=[0, 1])).update_layout(shapes=[
        vrect(0.2, 0.4, fillcolor="red", line=dict(width=0), layer="below"),
        hline(0.5, line=dict(color="#666", width=1)),
        vline(0.3, line=dict(color="blue", width=3, dash="dash"))])
    assert ours.to_plotly_json()["layout"]["shapes"] == added.to_plotly_json()["layout"]["shapes"]
