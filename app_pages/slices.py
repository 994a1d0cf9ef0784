"""Slices: where does the model fail? Every slice of up to k group attributes (values combined) against the rest of
the data, with Fisher's exact test (Welch's t-test for a regression) and a false-discovery correction over every
slice tested (worst-slice discovery
in the manner of SliceLine, Sagadeeva and Boehm, SIGMOD 2021, with the small-sample guards of *The Art of
Fairness*: a support floor and CPS-smoothed estimates). A slice can become the group attribute of every page."""
from __future__ import annotations

import dataclasses
import json

import streamlit as st

from fairviz.core.serialize import clean
from fairviz.data import DataError, Predictions
from fairviz.slices.display import MAX_ROWS, slices_display
from fairviz.data.tasks import spec_of
from fairviz.slices import SliceParams, SliceResult, find_slices, slice_counts
from fairviz.slices.methods import method_of
from fairviz.data.model import SLICE_PREFIX, slice_attribute
from fairviz.slices.counts import FULL_LATTICE, MAX_DEPTH, default_top_k
from fairviz.slices.readings import metric_title
from app_pages import _ui
from app_pages._render import render

SECTION = "slices"
TEST_LABELS = {"fisher": "Fisher's exact (slice vs rest)", "match": "MATCH (the rest as known)"}
TOP_BUTTONS = 5             # slices offered as "this slice vs the rest"


def cached_slices(pred: Predictions, view, attributes: tuple[str, ...], depth: int, support: float, metric: str,
                  top_k: int = 0, test: str = "fisher") -> SliceResult:
    """The slice search on ``pred`` (what the frame's ``view`` selects for ``metric``), once per settings."""
    def compute(progress):
        counts = slice_counts(pred, attributes, depth, support, view.threshold, metric=metric, top_k=top_k or None)
        return find_slices(counts, SliceParams(metric=metric, test=test))
    return _ui.cached("slices", view, (attributes, depth, support, metric, top_k, test), compute,
                      "Searching the slices", data=pred, bar=False)


def metric_choices(ctx) -> list[str]:
    """The metrics of the loaded data's task; per class, after them the sidebar's class one vs rest (FPR, FNR,
    selection rate) — a multiclass error rate (predicted ≠ label) reads every class."""
    data = ctx.data
    own = list(method_of(data.task).metrics)
    if spec_of(data).per_class:
        own += [m for m in method_of(ctx.pred.task).metrics if m not in own]
    return own


def searched(ctx, metric: str) -> tuple[Predictions, str]:
    """The predictions the metric reads and their task: a metric of a task without τ (a numeric target, every
    class) reads the loaded data; a metric at τ, the frame's model (or its class one vs rest)."""
    data = ctx.data
    if metric in method_of(data.task).metrics and not spec_of(data).thresholded:
        return data, data.task
    return ctx.pred, ctx.pred.task


def metric_label(ctx, metric: str) -> str:
    pred, task = searched(ctx, metric)
    title = metric_title(metric, task)
    if ctx.class_name is None:
        return title
    return title + (", every class" if pred is not ctx.pred else f", class '{ctx.class_name}' vs the rest")


def searched_attributes(pred: Predictions) -> tuple[str, ...]:
    """The mapped group columns (not the intersections or slices built from them)."""
    return tuple(a for a in pred.mapping.groups if a in pred.attributes and not a.startswith(SLICE_PREFIX))


def audit_slice(values: dict) -> None:
    """Add "this slice vs the rest" to the session's data and make it the attribute every page audits (a button's
    callback: the frame's attribute picker takes the new value when it is next drawn)."""
    pred = _ui.current()
    name, view = slice_attribute(pred, values)
    st.session_state[_ui.PRED] = dataclasses.replace(pred, attributes={**pred.attributes, name: view},
                                                     _derived={})
    st.session_state[_ui.ATTRIBUTE] = name


def _any_slice(result: SliceResult, offered: int) -> None:
    """Any slice of the ranked table (not only the significant ones offered above) as "this slice vs the rest"."""
    ranked = result.table.head(MAX_ROWS)
    if len(ranked) <= offered:
        return
    with st.expander("Audit any other slice on every page"):
        names, sizes = list(ranked["slice"]), ranked["n"].to_numpy()
        chosen = st.selectbox("Slice", range(len(names)), key="slices_pick",
                              format_func=lambda i: f"{names[i]} ({int(round(sizes[i])):,} rows)")
        row = ranked.iloc[int(chosen)]
        values = {a: row[a] for a in result.counts.attributes if isinstance(row[a], str)}
        st.button("Audit the chosen slice vs the rest", key="slices_audit_pick", on_click=audit_slice,
                  args=(values,))


def page() -> None:
    ctx = _ui.context()
    st.title("Slices")
    spec = ctx.spec
    test = "Welch's t-test" if spec.numeric_target else "Fisher's exact test"
    st.caption(f"Every slice defined by up to k group attributes (sex=F ∧ age=18-25) against the rest of the data: "
               f"{test}, Benjamini–Yekutieli over every slice tested, a support floor and smoothed estimates for "
               "small slices (*The Art of Fairness*, ch. 4), in the manner of SliceLine (Sagadeeva and Boehm, "
               "SIGMOD 2021), whose pruning keeps many attributes fast.")
    c1, c2, c3, c4 = st.columns(4)
    depth = c1.slider("Attributes per slice", 1, MAX_DEPTH, MAX_DEPTH, key="slices_depth")
    support = c2.number_input("Minimum support (rows)", 1, 1_000_000, 100, step=10, key="slices_support")
    choices = metric_choices(ctx)
    if st.session_state.get("slices_metric") not in choices:
        st.session_state.pop("slices_metric", None)
    metric = c3.selectbox("Metric", choices, index=choices.index(spec.error_metric),
                          format_func=lambda m: metric_label(ctx, m), key="slices_metric")
    pred, _ = searched(ctx, metric)
    attributes = searched_attributes(pred)
    top_k = c4.number_input("Prune to the top k (0: every slice)", 0, 1_000, default_top_k(len(attributes)),
                            step=5, key="slices_top_k",
                            help="SliceLine's pruning: a slice is expanded only while its score bound can beat the "
                                 f"k-th best score. Faster for many attributes (on by default past {FULL_LATTICE} "
                                 "attribute combinations); the slices left out count in the correction as never "
                                 "rejected.")
    test = "fisher"
    if spec_of(pred).thresholded:
        test = st.radio("Test", ("fisher", "match"), horizontal=True, key="slices_test", format_func=TEST_LABELS.get,
                        help="Fisher's exact test compares the slice with the rest as two samples (default). MATCH "
                             "(The Art of Fairness, §4.5) draws the slice from the rest's cells as if they were "
                             "known: right for a small slice, too sure for one holding much of the data.")
    try:
        result = cached_slices(pred, ctx.view, attributes, int(depth), float(support), metric, int(top_k), test)
    except DataError as err:
        _ui.show_data_error(err, "Slices cannot be searched in these data")
        return
    render(slices_display(result), figure_cache=_ui.figure)
    data = clean(result.to_dict())
    st.session_state.setdefault(_ui.PAGE_JSON, {})[SECTION] = data
    top = result.significant.head(TOP_BUTTONS)
    if len(top):
        st.subheader("Audit a slice on every page")
        for i, (_, row) in enumerate(top.iterrows()):
            values = {a: row[a] for a in result.counts.attributes if isinstance(row[a], str)}
            st.button(f"Audit this slice vs the rest: {row['slice']}", key=f"slices_audit_{i}",
                      on_click=audit_slice, args=(values,))
    _any_slice(result, len(top))
    st.download_button("Slices (JSON)", json.dumps(data, indent=2).encode(),
                       f"{_ui.safe_stem(ctx.pred.source)}_slices.json", "application/json", key="slices_json")


_ui.guarded(page)
