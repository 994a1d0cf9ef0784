"""The Compare view of a page (issue 24): two of the loaded models on the same rows, with paired differences.

Controls (models A and B, resamples) → one cached comparison for the whole server → the part of its display list
that the page is about (``topic``: 'calibration', 'residuals', 'parity'; None: every difference)."""
from __future__ import annotations

import streamlit as st

from app_pages import _render, _ui
from fairviz.compare import CompareParams, ErrorComparison, ModelComparison, compare_errors, compare_models
from fairviz.compare import display as section

RESAMPLES = (200, 500, 1000, 2000)


def compare_view(ctx: _ui.Context, topic: str | None) -> ModelComparison | ErrorComparison | None:
    """Pick two models (the first two by default), compare them once (kept per data, choices and models) and render
    the ``topic``'s tables, readings and overlaid figures (a numeric target: its errors per group, any topic)."""
    joint = ctx.joint
    names = joint.model_names
    if len(names) < 2:
        st.info("The data holds one model: map another score column on Home, or add a recalibrated model on the "
                "Calibration page, to compare two.")
        return None
    if st.session_state.get("compare_a") not in names:
        st.session_state["compare_a"] = names[0]
    c1, c2, c3 = st.columns([2, 2, 2])
    model_a = c1.selectbox("First model (A)", names, key="compare_a")
    others = [n for n in names if n != model_a]
    if st.session_state.get("compare_b") not in others:
        st.session_state["compare_b"] = others[0]
    model_b = c2.selectbox("Second model (B)", others, key="compare_b",
                           help="Every difference is B minus A, on the same rows.")
    if section.by_errors(joint):       # errors (a target's, or classes right or wrong): paired t-tests, no resampling
        return _numeric(ctx, joint, model_a, model_b)
    resamples = c3.select_slider("Resamples", RESAMPLES, value=500, key="compare_resamples",
                                 help="Paired bootstrap resamples and paired permutations (scores swapped within "
                                      "rows) of every difference.")
    params = CompareParams(resamples=int(resamples), permutations=int(resamples))
    view = (ctx.attribute, ctx.threshold, ctx.benefit, ctx.reference, model_a, model_b)
    result = _ui.cached(
        "compare", view, params, lambda progress: compare_models(joint, ctx.attribute, ctx.threshold, ctx.benefit,
                                                                 ctx.reference, model_a, model_b, params, progress),
        "Comparing the two models", data=joint)
    sample = _ui.current_sample()
    _render.render(section.display(result, topic, sample.words if sample is not None else None),
                   figure_cache=_ui.figure)
    return result


def _numeric(ctx: _ui.Context, joint, model_a: str, model_b: str) -> ErrorComparison:
    """Two models of a numeric target: paired t-tests of each group's errors and of its gaps to the reference (no
    resampling: a single pass over the rows)."""
    params = CompareParams()
    result = _ui.cached(
        "compare_regression", (ctx.attribute, ctx.reference, model_a, model_b), params,
        lambda progress: compare_errors(joint, ctx.attribute, ctx.reference, model_a, model_b, params),
        "Comparing the two models", data=joint)
    _render.render(section.errors_display(result), figure_cache=_ui.figure)
    return result
