"""Per-group thresholds: a threshold explorer on the loaded scores (post-processing in the sense of Hardt, Price and
Srebro, *Equality of Opportunity in Supervised Learning*, NeurIPS 2016). Choose a constraint; see each group's
thresholds, the accuracy/fairness trade-off curve with the chosen point and a single threshold τ, and add the
adjusted decisions as a model every page audits."""
from __future__ import annotations

import json

import streamlit as st

from fairviz.core.markup import csv_bytes
from fairviz.core.serialize import clean
from fairviz.data import DataError, Predictions
from fairviz.report import thresholds as report
from fairviz.thresholds import (CONSTRAINT_TITLES, CONSTRAINTS, ThresholdExplorer, ThresholdParams, decision_rows,
                                decisions_frame, explore_model, readings)
from app_pages import _ui
from app_pages._render import render

SECTION = "thresholds"
SEED = 0                    # which of the interchangeable rows a randomised rule gives its yeses (the model's note)
SLACK_HELP = ("The largest gap allowed between any two groups' constrained rates (0: equal). A little slack buys "
              "accuracy back: the curve below shows how much.")


@st.cache_data(show_spinner="Fitting per-group thresholds…", max_entries=16, ttl=_ui.CACHE_TTL)
def cached_explore(fingerprint: str, n: int, model: str, attribute: str, constraint: str, slack: float, tau: float,
                   _rows: Predictions) -> ThresholdExplorer:
    return explore_model(_rows, attribute, constraint, tau, SEED, ThresholdParams(constraint, slack), model)


@st.cache_data(show_spinner=False, max_entries=4, ttl=_ui.CACHE_TTL)
def cached_csv(fingerprint: str, n: int, model: str, attribute: str, constraint: str, slack: float, tau: float,
               _rows: Predictions, _result: ThresholdExplorer) -> bytes:
    return csv_bytes(decisions_frame(_rows, _result.adjusted))


def page() -> None:
    ctx = _ui.context()
    st.title("Per-group thresholds")
    st.caption("A threshold per group on the scores of the model chosen in the sidebar, so that the groups' rates "
               "match — post-processing in the sense of Hardt, Price and Srebro, *Equality of Opportunity in "
               "Supervised Learning* (NeurIPS 2016). No model object is needed; the adjusted decisions can be added "
               "as a model that every page audits.")
    c1, c2 = st.columns([2, 1])
    constraint = c1.selectbox("Constraint", CONSTRAINTS, index=CONSTRAINTS.index("equal_tpr"),
                              format_func=CONSTRAINT_TITLES.get, key="thr_constraint")
    slack = c2.slider("Allowed gap", 0.0, 0.2, 0.0, 0.01, key="thr_slack", help=SLACK_HELP)
    try:
        rows = decision_rows(ctx.joint)
        key = (rows.fingerprint, rows.n, ctx.model, ctx.attribute, constraint, float(slack), ctx.threshold)
        result = cached_explore(*key, _rows=rows)
    except DataError as err:
        _ui.show_data_error(err, "Per-group thresholds cannot be fitted to these data")
        return
    render(report.display(result, key), figure_cache=_ui.figure)
    _add_model(rows, result, ctx.model)
    data = clean(result.to_dict())
    st.session_state.setdefault(_ui.PAGE_JSON, {})[SECTION] = data
    stem = _ui.safe_stem(ctx.pred.source)
    d1, d2 = st.columns(2)
    with d1:
        st.download_button("Thresholds (JSON)", json.dumps(data, indent=2).encode(), f"{stem}_thresholds.json",
                           "application/json", key="thr_json")
    with d2:
        st.download_button("Decisions (CSV)", lambda: cached_csv(*key, _rows=rows, _result=result),
                           f"{stem}_decisions.csv", "text/csv", key="thr_csv",
                           help="One line per row: its id (or row number), group, score and decision (1 = yes).")


def _add_model(rows: Predictions, result: ThresholdExplorer, active: str) -> None:
    adjusted = result.adjusted
    if st.session_state.get("thr_added") == active:
        render([readings.added_note(active)])
    if not st.button("Add the decisions as a model", key="thr_add", type="primary",
                     help=f"Adds '{adjusted.title}' beside the loaded models; every page then audits it."):
        return
    scores = adjusted.decisions.astype(float)
    try:
        if rows is not _ui.current().joint():
            # weighted data: the decisions may differ between rows of one entry, so the session's data becomes its
            # rows (decision_rows says so in the data's notes); checked first so a refusal leaves the data as it was
            rows.with_added_model(adjusted.title, scores, adjusted.note)
            st.session_state[_ui.PRED] = rows
        _ui.add_model(adjusted.title, scores, adjusted.note)
    except DataError as err:
        _ui.show_data_error(err, "The decisions were not added")
        return
    st.session_state["thr_added"] = adjusted.title
    st.rerun()


_ui.guarded(page)
