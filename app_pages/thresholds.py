"""Per-group thresholds: a threshold explorer on the loaded scores (post-processing in the sense of Hardt, Price and
Srebro, *Equality of Opportunity in Supervised Learning*, NeurIPS 2016). Choose a constraint; see each group's
thresholds, the accuracy/fairness trade-off curve with the chosen point and a single threshold τ, and add the
adjusted decisions as a model every page audits."""
from __future__ import annotations

import json

import streamlit as st

from fairviz.core.markup import csv_bytes, md
from fairviz.core.serialize import clean
from fairviz.data import DataError, Predictions
from fairviz.thresholds import display as report
from fairviz.thresholds import (CONSTRAINT_TITLES, CONSTRAINTS, ThresholdExplorer, ThresholdParams, decision_rows,
                                decisions_frame, explore_model, readings)
from app_pages import _ui
from app_pages._render import render

SECTION = "thresholds"
ADDED = "thr_added"         # the title of the decisions this page added last
SEED = 0                    # which of the interchangeable rows a randomised rule gives its yeses (the model's note)
SLACK_HELP = ("The largest gap allowed between any two groups' constrained rates (0: equal). A little slack buys "
              "accuracy back: the curve below shows how much.")


def cached_explore(fingerprint: str, n: int, model: str, attribute: str, constraint: str, slack: float, tau: float,
                   _rows: Predictions) -> ThresholdExplorer:
    return _ui.cached("thresholds", (model, attribute, tau), (n, constraint, slack),
                      lambda progress: explore_model(_rows, attribute, constraint, tau, SEED,
                                                     ThresholdParams(constraint, slack), model),
                      "Fitting per-group thresholds", data=_rows, bar=False)


@st.cache_data(show_spinner=False, max_entries=4, ttl=_ui.CACHE_TTL)
def cached_csv(fingerprint: str, n: int, model: str, attribute: str, constraint: str, slack: float, tau: float,
               _rows: Predictions, _result: ThresholdExplorer) -> bytes:
    return csv_bytes(decisions_frame(_rows, _result.adjusted))


def page() -> None:
    ctx = _ui.context()
    if not _ui.binary_only(ctx, "Per-group thresholds"):
        return
    st.title("Per-group thresholds")
    st.caption("A threshold per group on the scores of the model chosen in the sidebar, so that the groups' rates "
               "match — post-processing in the sense of Hardt, Price and Srebro, *Equality of Opportunity in "
               "Supervised Learning* (NeurIPS 2016). No model object is needed; the adjusted decisions can be added "
               "as a model that every page audits.")
    if st.session_state.get(ADDED) == ctx.model:        # the decisions just added are the audited model now
        render([readings.added_note(ctx.model)])
        return
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
    render(report.explorer(result, key), figure_cache=_ui.figure)
    data = clean(result.to_dict())
    st.session_state.setdefault(_ui.PAGE_JSON, {})[SECTION] = data
    stem = _ui.safe_stem(ctx.pred.source)
    a1, a2, a3 = st.columns([2, 1, 1])
    with a1:
        _add_model(rows, result)
    with a2:
        st.download_button("Thresholds (JSON)", json.dumps(data, indent=2).encode(), f"{stem}_thresholds.json",
                           "application/json", key="thr_json")
    with a3:
        st.download_button("Decisions (CSV)", lambda: cached_csv(*key, _rows=rows, _result=result),
                           f"{stem}_decisions.csv", "text/csv", key="thr_csv", on_click="ignore",
                           help="One line per row: its id (or row number), group, score and decision (1 = yes).")
    render(report.notes(result))


def _add_model(rows: Predictions, result: ThresholdExplorer) -> None:
    adjusted = result.adjusted
    if not st.button("Add the decisions as a model", key="thr_add", type="primary",
                     help=f"Adds '{md(adjusted.title)}' beside the loaded models; every page then audits it."):
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
    st.session_state[ADDED] = adjusted.title
    st.rerun()


_ui.guarded(page)
