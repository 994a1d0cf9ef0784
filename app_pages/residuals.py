"""Residual Distribution Fairness ([1]): where, and for whom, the model's errors sit.

Controls → one cached analysis → the residual section's display list (the HTML report and the terminal render the
same), plus what only this page has: the curves' group and outcome pickers, the lazy tabs, D* and its downloads."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from fairviz.calibration import recalibrated_model, recalibration_note, recalibration_pair
from fairviz.core.display import Figure, Group, Text, group
from fairviz.core.markup import csv_bytes
from fairviz.data import DataError
from fairviz.data.tasks import spec_of
from fairviz.data.view import View
from fairviz.report.options import AuditParams
from fairviz.residuals.display import SECTION as RESIDUALS
from fairviz.residuals.display import THRESHOLD_SECTION
from fairviz.residuals import (
    CalibrationShape,
    KneeParams,
    RDFParams,
    ResidualAudit,
    analyse,
    calibration_shape,
    diagnostic_table,
    file_dstar_rows,
    needs_calibration,
    readings,
    threshold_check,
    threshold_invariance,
)
from fairviz.residuals import figures as figs
from app_pages import _render, _ui, _upload
from app_pages._compare import compare_view
from app_pages._ui import CACHE_TTL


@st.cache_data(show_spinner=False, max_entries=64, ttl=CACHE_TTL)
def cached_threshold(fingerprint: str, attribute: str, threshold: float, _pred):
    return threshold_check(_pred, attribute, threshold)


@st.cache_resource(show_spinner=False, max_entries=4, ttl=CACHE_TTL)
def cached_hover(fingerprint: str, _pred) -> tuple[np.ndarray, np.ndarray | None]:
    """Hover labels and texts, one per row: a million Python strings cost ~0.5 s, so once per data set (shared,
    never mutated: cache_resource does not copy them)."""
    return _pred.row_labels(), _pred.texts()


TABS = ["Pair metrics", "Groups", "Threshold view (Thm 6.1)", "Knee error concentration", "Diagnostic set D*"]
# the display list's groups each tab draws
TAB_GROUPS = [("pairs", "pairs_detail"), ("groups",), ("threshold",), ("concentration",)]


def settings() -> tuple[RDFParams, bool, int]:
    with st.sidebar.expander("Residual settings", expanded=False):
        eps = st.slider("Knee region half-width ε (percentile points)", 0.02, 0.10, 0.05, 0.01,
                        help="Rows within ε of a knee form the diagnostic set D*. The paper uses 0.05; "
                             "0.02 is unstable, 0.10 dilutes the signal.")
        mode = st.radio("Region measured in", ["percentile", "residual"], horizontal=True,
                        help="Percentile: |rank − knee percentile| ≤ ε (§7.1, default). "
                             "Residual: |D − knee residual| < ε (Algorithm 1).")
        iterations = st.select_slider("LOWESS robustness iterations", [0, 1, 2, 3], value=3)
        sensitivity = st.slider("Kneedle sensitivity S", 0.5, 3.0, 1.0, 0.25)
        resamples = st.select_slider("Bootstrap / permutation resamples", [200, 500, 1000, 2000], value=1000)
        knee_resamples = st.select_slider("Resamples for F_h/F_v intervals (knees re-detected)",
                                          [0, 100, 200, 500], value=200)
        shuffle = st.toggle("Random groups (null control)", value=False,
                            help="Permute the group labels (sizes kept) and recompute everything: "
                                 "no real disparity should remain.")
        seed = st.number_input("Seed", 0, 10_000, 0)
    params = RDFParams(region_eps=eps, region_mode=mode, resamples=resamples, knee_resamples=knee_resamples,
                       seed=int(seed), knees=KneeParams(iterations=iterations, sensitivity=sensitivity))
    return params, shuffle, int(seed)


def page() -> None:
    ctx = _ui.context()
    if not spec_of(ctx.pred).thresholded:      # issue 25: a regression's residuals in the target's units
        _task_page(ctx)                        # (multiclass data arrive one vs rest: the sidebar's class)
        return
    params, shuffle, seed = settings()
    # the engine's table (an upload without row-level columns) is read as the audit's residual section reads it:
    # expanded to one entry per row where the analysis needs rows, as is where it reads the counts
    data = RESIDUALS.given(ctx.pred)
    pred = data.with_shuffled_groups(seed) if shuffle else data
    st.title("Residual distribution fairness")
    _render.render([readings.INTRO])
    if not _ui.intervals_wanted(pred, "rdf_intervals", "about 4 s per million rows on two cores"):
        params = replace(params, resamples=0, knee_resamples=0)
    if shuffle:
        _render.render([readings.null_control(seed)])
    _analysis(params, shuffle, seed)


@_ui.tau_part
def _analysis(params: RDFParams, shuffle: bool, seed: int) -> None:
    """The analysis, its tabs and the threshold sweep: the curves do not depend on τ (kept), the rates at τ (the
    Threshold view, the page's JSON) and the group the reading opens on (the Summary's top group at τ, on the first
    view) do; a τ step reruns this part alone."""
    ctx = _ui.context()
    data = RESIDUALS.given(ctx.pred)
    pred = data.with_shuffled_groups(seed) if shuffle else data
    analysed: ResidualAudit = _ui.cached(
        "residuals", ctx.attribute, params,
        lambda progress: analyse(pred, ctx.attribute, params, progress=progress), "Analysing residuals", data=pred)
    # the curves do not depend on τ: the rates at the sidebar's τ are attached to the kept analysis
    audit = analysed.with_rates(cached_threshold(pred.fingerprint, ctx.attribute, ctx.threshold, pred))
    # the reading opens on the reference against the Summary's top group (or the group a link names)
    options = _ui.page_options(ctx, rdf=params)
    _ui.keep_selection_in_address("residuals", group=options.focus)
    items = RESIDUALS.display(pred, audit, options)
    _render.render([i for i in items if isinstance(i, Text)])           # the analysis' warnings

    _curves(audit, pred, params, ctx, items)
    # only the open tab runs (a click on another reruns the page from the caches): the threshold figure, the
    # concentration figure and D* (rows of the table's expansion) cost nothing until they are looked at
    tabs = _ui.lazy_tabs(TABS + (["Compare models"] if ctx.pred.several_models else []), key="rdf_tab")
    for tab, names in zip(tabs, TAB_GROUPS):
        if tab.open:
            with tab:
                for name in names:
                    _tab(group(items, name), audit)
    if tabs[len(TABS) - 1].open:
        with tabs[len(TABS) - 1]:
            _diagnostic_tab(audit, pred, shuffle)
    if len(tabs) > len(TABS) and tabs[-1].open:
        with tabs[-1]:
            compare_view(ctx, "residuals")
    _ui.section_json("residuals", pred, audit, options)
    # the knee tab's calibrate-then-re-run, under the tab's concentration verdict
    if (concentration_tab := tabs[TABS.index("Knee error concentration")]).open:
        with concentration_tab:
            _calibrate_first(ctx, audit, params, shuffle)
    _invariance_section(pred, ctx, params, analysed)


def _curves(audit: ResidualAudit, pred, params: RDFParams, ctx: _ui.Context, items) -> None:
    """The sorted curves of the groups picked, in the outcome picked, with the section's reading beside them."""
    names = [g.name for g in audit.groups]
    c1, c2 = st.columns([3, 1])
    shown = c2.multiselect("Groups shown", names, default=names[: min(len(names), 6)])
    view = c2.radio("View", ["All rows", "Y = 0 only", "Y = 1 only", "Both outcome panels"])
    # weighted data: curve points index rows of the table's expansion, which has no id or text column: the hover
    # then names the row number only (no million label strings are made)
    hover, texts = cached_hover(pred.fingerprint, pred) if pred.weight is None else (None, None)
    key = (pred.fingerprint, ctx.attribute, params, tuple(shown or names))
    if view == "Both outcome panels":
        fig = _ui.figure(("rdf.panels", *key), lambda: figs.outcome_panels(audit, shown or names, hover))
    else:
        outcome = {"All rows": "all", "Y = 0 only": "y0", "Y = 1 only": "y1"}[view]
        fig = _ui.figure(("rdf.sorted", *key, outcome),
                         lambda: figs.sorted_residual_plot(audit, shown or names, outcome, hover, texts))
    _ui.chart_at(c1, fig, width="stretch")
    _render.render([i for i in group(items, "curves").items if not isinstance(i, Figure)], c2)


def _tab(part: Group, audit: ResidualAudit) -> None:
    """One group of the display list (a detail group in an expander); the knee-concentration verdict in the colour of
    its outcome."""
    if part.collapsed:
        _render.render([part], figure_cache=_ui.figure)
        return
    for item in part.items:
        if isinstance(item, Text) and item.level == "finding" and part.key == "concentration":
            _ui.verdict_box("good" if audit.concentration.verdict == "supported" else "warn", _render.markdown(item))
        else:
            _render.render([item], figure_cache=_ui.figure)


def _calibrate_first(ctx: _ui.Context, audit: ResidualAudit, params: RDFParams, shuffled: bool) -> None:
    """The knee tab's "calibrate, then re-run": "calibrate first" when the audited model's ECE is ≥ 0.15, and the
    knee error concentration before and after recalibration ([1] Table 2, Table 7)."""
    if needs_calibration(audit.concentration):
        _ui.verdict_box("warn", _render.markdown(readings.calibrate_first(audit.concentration)))
    _render.render([readings.CALIBRATE_THEN_RERUN])
    if shuffled:
        st.caption("Shown for the real groups only: switch the random-groups null control off.")
        return
    joint = ctx.pred.joint()
    try:
        shape = _ui.cached(
            "calibrate_first", (ctx.pred.active_model, ctx.attribute), params,
            lambda progress: _calibration_shape(ctx, params, audit.concentration),
            "Recalibrating and finding the knees again", data=joint)
    except DataError as err:
        _ui.show_data_error(err, "No recalibration could be fitted for the before and after")
        return
    _render.render([readings.calibration_shape_reading(shape), readings.calibration_shape_table(shape),
                    readings.calibration_shape_note(shape)])


def _calibration_shape(ctx: _ui.Context, params: RDFParams, audited) -> CalibrationShape:
    """The audited model and its recalibration: the session's latest one, else temperature scaling (Table 7's method)
    fitted as the Calibration page fits it, for this view only."""
    joint = ctx.pred.joint()
    before, after = recalibration_pair(ctx.pred.active_model, ctx.pred.model_names)
    added = after is not None
    if not added:
        scores, after, note = recalibrated_model(joint.at(View(model=before)), "temperature", ctx.attribute)
        joint = joint.with_added_model(after, scores, note)
    how = recalibration_note(after, joint.notes) or "added on the Calibration page."
    before_view, after_view = (RESIDUALS.given(joint.at(View(model=m))) for m in (before, after))
    return calibration_shape(before_view, after_view, ctx.attribute, params, how, added,
                             known={ctx.pred.active_model: audited})


def _diagnostic_tab(audit: ResidualAudit, analysed, shuffled: bool) -> None:
    pred = analysed.rows()                         # D* is per row (weighted data: rows of the table's expansion)
    mask = audit.in_knee_region
    _render.render([readings.diagnostic_set(int(mask.sum()), float(mask.mean()), audit.params)])
    st.dataframe(diagnostic_table(audit, pred, limit=2000), hide_index=True, width="stretch")
    # built on click, not on every rerun: D* of a million rows is a large CSV. A deferred download must not rerun
    # the page: the rerun draws the button anew and revokes the callable the click is still fetching
    st.download_button("Download D* as CSV", lambda: csv_bytes(diagnostic_table(audit, pred)),
                       "diagnostic_set.csv", "text/csv", on_click="ignore")
    if pred.frame.shape[1] == 0:
        _file_rows_download(audit, analysed, shuffled)


def _file_rows_download(audit: ResidualAudit, analysed, shuffled: bool) -> None:
    """D* with every column of the uploaded file for data reduced by the engine: one filtered query on the file, run
    on the first click and kept for the server (per file, mapping, data and settings), so a second click, a rerun or
    another visitor asking the same reads no file again."""
    found = None if shuffled else _upload.reduced_source(analysed.fingerprint)
    if found is None:
        if not shuffled and _upload.reduced_gone(analysed.fingerprint):
            st.info(_upload.GONE)
        _render.render([readings.counts_only_dstar(shuffled)])
        return
    raw, stats = found
    what = (analysed.fingerprint, audit.attribute, audit.params)

    def build() -> bytes:
        return csv_bytes(file_dstar_rows(raw, stats, analysed, audit))

    st.download_button("Download D* with every column of the file",
                       lambda: _upload.file_query(stats.fingerprint, stats.mapping, what, raw, stats.source, build),
                       "diagnostic_set_rows.csv", "text/csv", on_click="ignore",
                       help="The uploaded file's own rows in D* (ids, texts, features and all), fetched by one query "
                            "on the file: the audit reads counts, this reads only these rows.")


# ----------------------------------------------------------------------------------------------- other tasks

REGRESSION_TABS = ["Pair metrics", "Groups", "Knee error concentration", "Diagnostic set D*"]
REGRESSION_TAB_GROUPS = [("pairs", "pairs_detail"), ("groups",), ("concentration",)]


def _task_page(ctx: _ui.Context) -> None:
    """A regression: the same analysis on D = ŷ − y in the target's units, without what needs a label in {0, 1} or
    a threshold (outcome views, Theorem 6.1, threshold invariance, calibrate first). A multiclass file is audited one
    class at a time (the sidebar's class)."""
    st.title("Residual distribution fairness")
    if not spec_of(ctx.pred).numeric_target:   # multiclass predictions handed over without a class
        st.info(readings.MULTICLASS)
        return
    _ui.task_line(ctx)
    params, shuffle, seed = settings()
    data = RESIDUALS.given(ctx.pred)
    pred = data.with_shuffled_groups(seed) if shuffle else data
    _render.render([readings.regression_intro(pred.mapping.label)])
    if not _ui.intervals_wanted(pred, "rdf_intervals", "about 4 s per million rows on two cores"):
        params = replace(params, resamples=0, knee_resamples=0)
    if shuffle:
        _render.render([readings.null_control(seed)])
    audit: ResidualAudit = _ui.cached(
        "residuals", ctx.attribute, params,
        lambda progress: analyse(pred, ctx.attribute, params, progress=progress), "Analysing residuals", data=pred)
    options = _ui.page_options(ctx, rdf=params)
    items = RESIDUALS.display(pred, audit, options)
    _render.render([i for i in items if isinstance(i, Text)])           # the warnings and the task's note
    names = [g.name for g in audit.groups]
    c1, c2 = st.columns([3, 1])
    shown = c2.multiselect("Groups shown", names, default=names[: min(len(names), 6)]) or names
    hover, texts = cached_hover(pred.fingerprint, pred) if pred.weight is None else (None, None)
    fig = _ui.figure(("rdf.sorted", pred.fingerprint, ctx.attribute, params, tuple(shown), "all"),
                     lambda: figs.sorted_residual_plot(audit, shown, "all", hover, texts))
    _ui.chart_at(c1, fig, width="stretch")
    _render.render([i for i in group(items, "curves").items if not isinstance(i, Figure)], c2)
    tabs = _ui.lazy_tabs(REGRESSION_TABS, key="rdf_tab")
    for tab, names_ in zip(tabs, REGRESSION_TAB_GROUPS):
        if tab.open:
            with tab:
                for name in names_:
                    _tab(group(items, name), audit)
    if tabs[-1].open:
        with tabs[-1]:
            _diagnostic_tab(audit, pred, shuffle)
    _ui.section_json("residuals", pred, audit, options)


# ----------------------------------------------------------------------------------------------- threshold invariance

def cached_invariance(pred, attribute: str, params: RDFParams, audit):
    """The sweep over τ (``audit``: the analysis of ``pred`` with ``params``, whose knees it reuses)."""
    return _ui.cached("threshold_invariance", attribute, params,
                      lambda progress: threshold_invariance(pred, attribute, knees=params.knees, audit=audit),
                      "Sweeping thresholds", data=pred, keep=32, bar=False)


def _invariance_section(pred, ctx: _ui.Context, params: RDFParams, audit: ResidualAudit) -> None:
    """[1] App. D.1 / Table 5: CV of each metric over τ = 0.1…0.9 (RDF metrics 0% by construction)."""
    section = st.expander("Threshold invariance across τ = 0.1…0.9 (App. D.1, Table 5)", expanded=False,
                          key="rdf_invariance", on_change="rerun")      # computed when opened
    if not section.open:
        return
    with section:
        result = cached_invariance(pred, ctx.attribute, params, audit)
        labels = [f"{p.group_i} vs {p.group_j}" for p in result.pairs]
        chosen = st.selectbox("Pair", labels, key="invariance_pair") if len(labels) > 1 else labels[0]
        pair = result.pairs[labels.index(chosen)]
        _ui.chart(_ui.figure(("rdf.invariance", pred.fingerprint, ctx.attribute, params, chosen),
                                   lambda: figs.invariance_figure(result, pair)), width="stretch")
        options = AuditParams(attribute=ctx.attribute, threshold=ctx.threshold, rdf=params)
        items = THRESHOLD_SECTION.display(pred, result, options)
        _render.render([i for i in items if not (isinstance(i, Group) and i.key == "invariance_figure")])
        _ui.section_json("threshold_invariance", pred, result, options)


_ui.guarded(page)
