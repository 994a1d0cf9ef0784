"""Presenter-ready figures (issue 23): 16 px dark text on every axis, legends outside the plot area where they
cannot cover a title, and knee markers in their group's colour."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from fairviz.core.counts import ConfusionCounts
from fairviz.core.theme import INK, LEGEND_RIGHT, TEMPLATE, group_style
from fairviz.data import ColumnMapping, build_predictions
from fairviz.residuals import RDFParams, analyse, threshold_check
from fairviz.residuals import figures as residual_figures
from fairviz.sample_size import figures as size_figures
from fairviz.sample_size.jaggedness import jaggedness


def _pred(seed: int = 5, n: int = 6000):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 1, n)
    group = rng.choice(["a", "b", "c"], n)
    frame = pd.DataFrame({"y": rng.binomial(1, p), "s": np.clip(p + (group == "b") * 0.1, 0, 1), "g": group})
    return build_predictions(frame, ColumnMapping("y", "s", ("g",)), source="t.csv")


def test_every_axis_of_the_template_has_16_px_dark_ticks():
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1])).update_layout(template=TEMPLATE)
    layout = fig.layout.template.layout
    for axis in (layout.xaxis, layout.yaxis):
        assert axis.tickfont.size >= 16 and axis.tickfont.color == INK
        assert axis.tickcolor == INK and axis.linecolor == INK
    assert layout.font.size >= 16 and layout.legend.font.size >= 16


def _legend_clear_of_title(fig: go.Figure) -> bool:
    """A legend cannot cover the title when it sits outside the plot area to the right from the plot's top edge
    down, or below the plot (the title is above the plot's top edge)."""
    legend = fig.layout.legend
    right = legend.x is not None and legend.x >= 1 and legend.xanchor == "left" and (legend.y or 1) <= 1
    below = legend.y is not None and legend.y < 0 and legend.yanchor == "top"
    return right or below


def test_threshold_view_and_jaggedness_legends_never_cover_their_titles():
    pred = _pred()
    threshold = residual_figures.threshold_figure(threshold_check(pred, "g", 0.5))
    jagged = size_figures.jaggedness_figure(jaggedness(ConfusionCounts(tp=40, fn=20, fp=30, tn=110), "tpr",
                                                       [10, 50, 100], draws=50), "a")
    for fig in (threshold, jagged):
        assert fig.layout.title.text and _legend_clear_of_title(fig), fig.layout.legend
    assert threshold.layout.legend.to_plotly_json() == go.layout.Legend(LEGEND_RIGHT).to_plotly_json()


def test_knee_markers_take_their_groups_colour():
    audit = analyse(_pred(), "g", RDFParams(resamples=0, knee_resamples=0))
    fig = residual_figures.sorted_residual_plot(audit)
    names = [g.name for g in audit.groups]
    knees = [t for t in fig.data if t.mode == "markers" and "knee" in (t.name or "")]
    assert len({t.legendgroup for t in knees}) >= 2                   # knees of at least two groups drawn
    for trace in knees:
        assert trace.marker.color == group_style(names.index(trace.legendgroup))["color"], trace.name


def test_the_invariance_figure_uses_the_shared_template():
    from fairviz.residuals.threshold_invariance import threshold_invariance
    pred = _pred()
    audit = analyse(pred, "g", RDFParams(resamples=0, knee_resamples=0))
    fig = residual_figures.invariance_figure(threshold_invariance(pred, "g", audit=audit))
    assert fig.layout.template.layout.xaxis.tickfont.size >= 16 and _legend_clear_of_title(fig)


def test_not_enough_data_sits_mid_panel_and_keeps_its_row():
    """A group without a calibration test reads "not enough data" in the middle of each panel (at x = 0 it ran past
    the right edge of the slope panel and was cut off), and its row stays on the axis."""
    from fairviz.calibration import CalibrationParams, analyse
    from fairviz.calibration.figures import coefficient_figure
    rng = np.random.default_rng(3)
    n = 4000
    group = np.where(np.arange(n) < 12, "tiny", rng.choice(["a", "b"], n))
    p = rng.uniform(0.05, 0.95, n)
    frame = pd.DataFrame({"y": rng.binomial(1, p), "s": p, "g": group})
    pred = build_predictions(frame, ColumnMapping("y", "s", ("g",)), source="t.csv")
    fig = coefficient_figure(analyse(pred, "g", CalibrationParams(resamples=0)))
    notes = [a for a in fig.layout.annotations if a.text == "not enough data"]
    assert len(notes) == 2 and {a.xref for a in notes} == {"x domain", "x2 domain"}
    assert all(a.x == 0.5 and a.y == "tiny" for a in notes)
    assert "tiny" in [y for t in fig.data for y in t.y]
    assert not any(t.mode == "text" for t in fig.data)
