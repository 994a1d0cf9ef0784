"""Evaluation reweighting: the loaded predictions scored as if the test cells (class × group) were distributed
differently — instant, no retraining (Han, Shen, Cohn, Baldwin and Frermann, *Systematic Evaluation of
Predictive Fairness*, AACL 2022, §3.2 and §4.2)."""
from __future__ import annotations

import json

import numpy as np
import streamlit as st

from fairviz.conditions import DEFAULT_ALPHAS, ReweightingAudit, readings, reweight
from fairviz.conditions.metrics import Scores, evaluate
from fairviz.core.counts import decisions
from fairviz.core.display import Group, text
from fairviz.core.serialize import clean
from fairviz.data import DataError
from fairviz.conditions import display as report
from app_pages import _ui
from app_pages._render import render

SECTION = "conditions_reweighting"
GRID_S = tuple(np.round(np.arange(0.1, 0.91, 0.1), 2).tolist())


@st.cache_data(show_spinner=False, max_entries=32, ttl=_ui.CACHE_TTL)
def cached_reweight(fingerprint: str, attribute: str, threshold: float, kind: str, values: tuple,
                    _y, _hat, _z, _groups) -> ReweightingAudit:
    return reweight(_y, _hat, _z, kind, values, classes=("0", "1"), groups=_groups)


@st.cache_data(show_spinner="Bootstrapping within (class, group) cells…", max_entries=16, ttl=_ui.CACHE_TTL)
def cached_intervals(fingerprint: str, attribute: str, threshold: float, _y, _hat, _z, n_groups: int) -> Scores:
    return evaluate(_y, _hat, _z, 2, n_groups, resamples=1000, seed=0)


def page() -> None:
    ctx = _ui.context()
    if not _ui.binary_only(ctx, "Evaluation reweighting"):
        return
    pred = ctx.pred.rows()          # the engine's table expanded to rows (np.repeat): the cells' bootstrap needs rows
    st.title("Evaluation reweighting")
    st.caption("How would this model's accuracy and fairness read on a test set with other class and group "
               "proportions? Each (class, group) cell keeps its own predictions and gets a new weight — the "
               "data conditions of Han, Shen, Cohn, Baldwin and Frermann, *Systematic Evaluation of Predictive "
               "Fairness* (AACL 2022, §3.2): conditional balance (CB) balances the groups within each class, "
               "joint balance (JB) balances every cell, α = 0 is the data as they are, 1 balanced, 2 inverted.")
    render([text(readings.NOT_RETRAINING, "finding")])
    view = pred.groups(ctx.attribute)
    hat = decisions(pred.score, ctx.threshold).astype(int)
    y = pred.y.astype(int)
    c1, c2 = st.columns([1, 2])
    kind = c1.radio("Target distribution", ["cb", "jb", "grid"], key="rw_kind", format_func={
        "cb": "CB: groups balanced within each class", "jb": "JB: every cell balanced",
        "grid": "Direct: class ratio p_y and stereotyping s"}.get)
    if kind == "grid":
        if len(view.names) != 2:
            render([readings.two_groups_needed(ctx.attribute, len(view.names))])
            return
        p_y = c2.slider("p_y = P′(y = 1)", 0.1, 0.9, 0.5, 0.1, key="rw_py")
        values = tuple((p_y, s) for s in GRID_S)
    else:
        values = DEFAULT_ALPHAS
    try:
        res = cached_reweight(pred.fingerprint, ctx.attribute, ctx.threshold, kind, values, y, hat, view.codes,
                              tuple(view.names))
    except DataError as err:
        _ui.show_data_error(err, "These predictions cannot be reweighted")
        return
    ci = {}
    if pred.n <= _ui.LARGE_ROWS or st.toggle(
            "Bootstrap intervals", value=False, key="rw_intervals",
            help=f"1,000 resamples of the {pred.n:,} rows within each (class, group) cell: about 30 s per million rows."):
        ci = cached_intervals(pred.fingerprint, ctx.attribute, ctx.threshold, y, hat, view.codes, len(view.names)).ci
    else:
        st.caption(f"Intervals are off for {pred.n:,} rows (they resample every row); switch them on above.")
    key = (pred.fingerprint, ctx.attribute, ctx.threshold, kind, values)
    head = report.reweighting_head(res, ci)
    render([i for i in head if not isinstance(i, Group)])
    for group in (i for i in head if isinstance(i, Group)):
        with st.expander(group.title, expanded=True):
            render(group.items)
    render([report.reweighting_figure(res, key)], figure_cache=_ui.figure)
    options = [r.condition.label for r in res.rows]
    chosen = st.select_slider("Show the cell weights at", options, value=options[len(options) // 2], key="rw_show")
    render(report.cells_table(res, y, hat, view.codes, options.index(chosen)))
    render(report.conditions_table(res))
    data = clean({**res.to_dict(), "original_ci": {k: v.to_list() for k, v in ci.items()}})
    st.session_state.setdefault(_ui.PAGE_JSON, {})[SECTION] = data
    st.download_button("This page's numbers (JSON)", json.dumps(data, indent=2).encode(), "reweighting.json",
                       "application/json", key="rw_json")


_ui.guarded(page)
