"""Calibration and predictive bias ([2]): do the scores mean the same thing for every group?

Controls → one cached analysis → the section's display list (``fairviz.calibration.reliability_display``), drawn part by part
in lazy tabs, plus what only a page has: the pickers of the diagrams, the bins download, recalibration and residuals
over features (run on request, with their own cached calls)."""
from __future__ import annotations

from dataclasses import replace

import streamlit as st

from fairviz.calibration import (
    METHODS,
    OVERALL,
    CalibrationAudit,
    CalibrationParams,
    RecalParams,
    analyse,
    figures,
    readings,
    recalibrate,
    recalibrated_frame,
    recalibrated_model,
    recalibrated_title,
    recalibration_base,
    recalibration_note,
    residual_model,
    residuals_by_feature,
)
from fairviz.core.display import Figure, Group, Item, Table, group, text
from fairviz.core.markup import csv_bytes, md
from fairviz.data import DataError
from fairviz.calibration import display as checks
from fairviz.calibration import mincer_zarnowitz_display, recalibration_display, reliability_display, top_label_display
from fairviz.data.view import View
from fairviz.findings import FindingsParams
from fairviz.report.options import AuditParams
from app_pages import _render, _ui, _upload
from app_pages._compare import compare_view
from app_pages._ui import CACHE_TTL

CALIBRATION = reliability_display.SECTION


def cached_analysis(pred, attribute: str, params: CalibrationParams) -> CalibrationAudit:
    return _ui.cached("calibration", attribute, params, lambda progress: analyse(pred, attribute, params),
                      "Analysing calibration", data=pred, bar=False)


def cached_recalibration(pred, attribute: str, params: RecalParams):
    return _ui.cached("recalibration", attribute, params, lambda progress: recalibrate(pred, attribute, params),
                      "Recalibrating", data=pred, bar=False)


@st.cache_data(show_spinner=False, max_entries=32, ttl=CACHE_TTL)
def cached_feature(fingerprint: str, attribute: str, feature: str, n_bins: int, _pred):
    return residuals_by_feature(_pred, attribute, feature, n_bins)


def cached_model(pred, features: tuple[str, ...], seed: int):
    return _ui.cached("residual_model", features, seed,
                      lambda progress: residual_model(pred, list(features), seed=seed),
                      "Fitting residuals on the features", data=pred, bar=False)


def draw(items: list[Item], where=None) -> None:
    _render.render(items, where, figure_cache=_ui.figure)


COMPARE_TAB = "Compare models"      # compares the models at τ
TABS = ["Reliability diagram", "Calibration tests", "Calibration error", "Recalibration", "Residuals vs features",
        "Subgroup performance"]
TAB_WIDGETS = {0: ("cal_strategy", "cal_layout", "cal_rel_groups", "cal_curve", "cal_zoom", "cal_table_group"),
               3: ("cal_split", "cal_fraction", "cal_split_column", "cal_split_value", "cal_methods", "cal_per_group",
                   "cal_recal_show", "cal_recal_groups", "cal_recal_metric"),
               4: ("cal_feature", "cal_feature_bins", "cal_feature_groups", "cal_model_features", "cal_model_run"),
               5: ("cal_perf_metric",)}


def settings() -> CalibrationParams:
    with st.sidebar.expander("Calibration settings", expanded=False):
        n_bins = st.slider("Reliability bins", 5, 20, 10, key="cal_bins",
                           help="The lecture uses 10 equal-width bins. More bins: finer but noisier.")
        knots = st.select_slider("Spline knots (smooth curve, non-linear test)", [3, 4, 5, 6, 7], value=4,
                                 key="cal_knots", help="Knots of the restricted cubic spline of logit(p̂).")
        resamples = st.select_slider("Bootstrap resamples", [0, 200, 500, 1000, 2000], value=1000, key="cal_resamples",
                                     help="For the intervals of ECE, smooth ECE, their gaps and AUROC/log-loss/Brier. "
                                          "0 skips them (fastest).")
        min_events = st.number_input("Rows of each outcome a group needs for a test", 5, 100, 10, key="cal_min_events")
        seed = st.number_input("Seed", 0, 10_000, 0, key="cal_seed")
    return CalibrationParams(n_bins=n_bins, spline_knots=knots, resamples=resamples, min_events=int(min_events),
                             seed=int(seed))


def page() -> None:
    ctx = _ui.context()
    method = checks.CHECK.section(ctx.spec)       # the check's method for this task
    if method is not CALIBRATION:                 # not the reliability of one probability read at τ
        _method_page(ctx, method)
        return
    params = settings()
    pred = CALIBRATION.given(ctx.pred)      # the engine's table as is where the section reads counts, else rows
    st.title("Calibration")
    st.caption("A score is calibrated when, among rows scored p̂, a share p̂ turn out positive. Calibration *by group* "
               "asks whether a score of 0.3 means the same risk for every group. Bias conditional on the score "
               "(reliability, calibration tests) and conditional on features (residuals) are both shown.")
    if not _ui.intervals_wanted(pred, "cal_intervals", "about 2 s per million rows on two cores"):
        params = replace(params, resamples=0)
    _follow_tau(_analysis(ctx, pred, params), ctx.threshold)


@_ui.tau_part
def _follow_tau(focus: str | None, drawn_at: float) -> None:
    """Calibration's curves, tests and errors do not depend on τ; the group its readings open on does (the Summary's
    top group at τ, unless the address names one: once the page has drawn, it does), and so does the Compare models
    tab. A τ step reruns this check alone, and the whole page only when one of those would show something else
    (the page drew at ``drawn_at``)."""
    ctx = _ui.context()
    compared = st.session_state.get("cal_tab") == COMPARE_TAB and ctx.threshold != drawn_at
    if compared or _ui.focus_group(ctx) != focus:
        st.rerun()


def _analysis(ctx: _ui.Context, pred, params: CalibrationParams) -> str | None:
    """The analysis and its tabs; returns the group its readings open on."""
    audit = cached_analysis(pred, ctx.attribute, params)
    # the headline opens on the reference against the Summary's top group (or the group a link names)
    options = replace(_ui.page_options(ctx, calibration=params), threshold=AuditParams().threshold)
    _ui.keep_selection_in_address("calibration", group=options.focus)
    items = CALIBRATION.display(pred, audit, options)
    draw([i for i in items if not isinstance(i, Group)])        # notes, headline numbers, the finding
    # only the open tab runs (a click on another reruns the page from the caches): recalibration, which fits on
    # rows of the table's expansion, costs nothing until it is looked at
    several = ctx.pred.several_models          # several models: the Compare view of calibration, as a last tab
    tabs = _ui.lazy_tabs(TABS + ([COMPARE_TAB] if several else []), key="cal_tab", keep=TAB_WIDGETS)
    ident = reliability_display.figure_ident(pred, audit)
    bodies = (lambda: _reliability_tab(audit, ident, items), lambda: draw(list(group(items, "tests").items)),
              lambda: draw(list(group(items, "errors").items)),
              lambda: _recalibration_tab(ctx.pred.rows(), ctx),    # a random split of rows: the table expanded
              lambda: _residuals_tab(ctx.pred, ctx), lambda: _performance_tab(audit, ident, items),
              *([lambda: compare_view(ctx, "calibration")] if several else []))
    for tab, body in zip(tabs, bodies):
        if tab.open:
            with tab:
                body()
    _ui.section_json("calibration", pred, audit, options)
    return options.focus


def _reliability_tab(audit: CalibrationAudit, ident: tuple, items: list[Item]) -> None:
    c1, c2 = st.columns([3, 1])
    with c2:
        strategy = st.radio("Bins", ["equal width", "equal count"], horizontal=True, key="cal_strategy",
                            help="Equal count (quantile) bins put the same number of rows in every bin of a group.")
        layout = st.radio("Groups", ["overlaid", "side by side"], horizontal=True, key="cal_layout")
        default = figures.default_groups(audit)
        shown = st.multiselect("Groups shown", [*[g.name for g in audit.groups], OVERALL], default=default,
                               key="cal_rel_groups") or default
        curve = st.checkbox("Smoothed curve with 95% band", value=True, key="cal_curve",
                            help="Logistic regression on a restricted cubic spline of logit(p̂).")
        zoom = st.checkbox("Fit the axes to the scores", value=figures.low_scores(audit), key="cal_zoom")
    key = "uniform" if strategy == "equal width" else "quantile"
    mode = "facet" if layout == "side by side" else "overlay"
    draw([reliability_display.reliability_figure(audit, ident, shown, key, mode, curve, zoom)], c1)
    draw(reliability_display.reliability_reading(audit, shown), c2)
    bins = group(items, "bins")
    note = [i for i in bins.items if not isinstance(i, Table)]
    table = reliability_display.bins_table(audit, key)                  # the picked strategy (the section's is the JSON's)
    names = [audit.key(g) for g in audit.all_groups]
    chosen = st.selectbox("Table for", names, index=len(names) - 1, key="cal_table_group")
    draw([*note, replace(table, frame=table.frame[table.frame["group"] == chosen].reset_index(drop=True))])
    st.download_button("Download all groups' bins as CSV",
                       csv_bytes(table.frame.rename(columns=dict(table.labels))),
                       f"reliability_{key}.csv", "text/csv", key="cal_bins_download")


def _performance_tab(audit: CalibrationAudit, ident: tuple, items: list[Item]) -> None:
    metric = st.radio("Metric", ["auroc", "log_loss", "brier"], horizontal=True, key="cal_perf_metric",
                      format_func={"auroc": "AUROC", "log_loss": "log-loss", "brier": "Brier"}.get)
    rest = [i for i in group(items, "performance").items if not isinstance(i, Figure)]
    draw([reliability_display.performance_figure(audit, ident, metric), *rest])


def _recalibration_tab(pred, ctx) -> None:
    st.markdown("Fit a monotone map from the scores to probabilities on a **calibration split**, then judge it on the "
                "**other rows** (§5). Fitting and judging on the same rows would flatter every method.")
    c1, c2, c3 = st.columns(3)
    # a reduced upload: its own columns while the server keeps its bytes (read row by row only for such a split)
    reduced = ctx.pred.weighted                 # here ``pred`` is the table expanded to rows, without the file's columns
    file_columns = _upload.reduced_columns(ctx.pred.fingerprint) if reduced else tuple(pred.frame.columns)
    columns = [c for c in file_columns if c not in (pred.mapping.score, pred.mapping.label)]
    split = c1.radio("Calibration split", ["random fraction", "a column of the file"] if columns else ["random fraction"],
                     key="cal_split")
    if not columns:
        c1.caption("A split by a column needs the file's rows: this upload was reduced to counts per group, label "
                   "and score (upload it again, or map a feature or id column on the Home page to keep the rows).")
    column = value = None
    fraction = 0.5
    if split == "random fraction":
        fraction = c1.slider("Share of rows that calibrate", 0.1, 0.9, 0.5, 0.05, key="cal_fraction")
    else:
        if reduced:
            try:
                pred = _upload.reduced_rows(ctx.pred.fingerprint)
            except DataError as err:
                _ui.show_data_error(err, "The file cannot be read row by row")
                return
            if pred is None:
                st.info("The uploaded file is no longer kept on the server: upload it again to split by its columns.")
                return
        column = c1.selectbox("Split column", columns, key="cal_split_column")
        values = sorted(pred.frame[column].astype(str).str.strip().unique().tolist())[:200]
        value = c1.selectbox("Rows with this value calibrate", values, key="cal_split_value")
    methods = c2.multiselect("Methods", list(METHODS), default=list(METHODS), format_func=METHODS.get,
                             key="cal_methods") or ["platt"]
    per_group = c3.checkbox("Recalibrate each group separately", value=False, key="cal_per_group",
                            help="One map per group: needs the group at prediction time, i.e. a group-aware model.")
    if per_group:
        c3.warning("Per-group recalibration uses group membership when scoring. That is a group-aware model: "
                   "check that it is allowed for this decision before using it.")
    params = RecalParams(methods=tuple(methods), fraction=fraction, split_column=column, split_value=value,
                         per_group=per_group)
    try:
        result = cached_recalibration(pred, ctx.attribute, params)
    except DataError as err:
        _ui.show_data_error(err, "Recalibration is not possible with this split")
        return
    draw([readings.split_reading(result), *[text("{note}", "caveat", note=note) for note in result.notes]])
    names = [n for n in result.original.metrics if n != OVERALL]
    d1, d2 = st.columns([3, 1])
    method = d2.selectbox("Show after", [m.method for m in result.methods], format_func=lambda m: result.method(m).label,
                          key="cal_recal_show")
    shown = d2.multiselect("Groups", [*names, OVERALL], default=names[:4], key="cal_recal_groups") or names[:4]
    metric = d2.radio("Metric", list(recalibration_display.RECALIBRATION_METRICS), key="cal_recal_metric",
                      format_func=recalibration_display.RECALIBRATION_METRICS.get)
    draw([Figure(lambda: figures.recalibration_figure(result, method, shown)),
          Figure(lambda: figures.recalibration_metric_figure(result, metric))], d1)
    draw(recalibration_display.recalibration_items(result, method))
    # built on click, not on every rerun of the page: it holds every row
    st.download_button("Download recalibrated predictions (CSV)",
                       lambda: csv_bytes(recalibrated_frame(pred, result)),
                       "recalibrated_predictions.csv", "text/csv", key="cal_recal_download")
    _add_as_model(ctx, result, params, by_file_rows=reduced and column is not None)


ADDED = "cal_added_model"            # session key: what the last "Add as a model" click did, shown once


def _add_as_model(ctx, result, params: RecalParams, by_file_rows: bool) -> None:
    """"Recalibrate, then re-run" (Fairness Beyond Metrics' checklist): a method's recalibrated scores become a model
    of this session, which every page then audits (the sidebar's Model picker switches back)."""
    st.markdown("**Add as a model.** The recalibrated scores (fitted on the calibration split above, exactly the "
                "numbers of this tab) become a model of this session: every page then audits it, and the sidebar's "
                "*Model* picker switches between it and the original.")
    if message := st.session_state.pop(ADDED, None):
        (st.success if message[0] == "added" else st.error)(message[1])
    if by_file_rows:
        st.caption("A split by a column of the file reads the file row by row; this upload's audits read its counts. "
                   "Use a random split to add a recalibration as a model.")
        return
    model, taken = ctx.pred.active_model, set(ctx.pred.model_names)
    if base := recalibration_base(model, ctx.pred.model_names):
        st.caption(f"The model audited is '{md(model)}', itself a recalibration of '{md(base)}': pick '{md(base)}' "
                   "in the sidebar's Model picker to add another recalibration of it.")
    for column, fitted in zip(st.columns(len(result.methods)), result.methods):
        title = recalibrated_title(model, fitted.method, result.attribute, params.per_group)
        column.button(f"Add {METHODS[fitted.method]} as a model", key=f"cal_add_{fitted.method}",
                      disabled=title in taken, on_click=_add_model, args=(model, fitted.method, ctx.attribute, params),
                      help=f"Adds the model '{md(title)}'" + (" (already added)" if title in taken else ""))


def _add_model(model: str, method: str, attribute: str, params: RecalParams) -> None:
    """The button's callback: it runs before the page's next run, so the new model is picked before the sidebar's
    Model picker is drawn."""
    try:
        scores, title, note = recalibrated_model(_ui.current().at(View(model=model)), method, attribute, params)
        _ui.add_model(title, scores, note)
    except DataError as err:
        st.session_state[ADDED] = ("error", "The model was not added: " + " ".join(md(p) for p in err.problems))
        return
    how = recalibration_note(title, (note,)) or note
    # a second model brings the Compare models tab: with other labels the tabs would open on the first one
    st.session_state["cal_tab"] = "Recalibration"
    st.session_state[ADDED] = ("added", f"Added the model **{md(title)}**: every page now audits it. {md(how)}")


def _residuals_tab(pred, ctx) -> None:
    st.markdown("Pearson residuals r = (y − p̂)/√(p̂(1 − p̂)) against a feature (§3.2): where their mean is away from 0, "
                "the model is biased for rows like these, whatever their score.")
    if pred.weighted:
        try:
            rows = _upload.reduced_rows(pred.fingerprint)
        except DataError as err:
            _ui.show_data_error(err, "The file cannot be read row by row")
            return
        if rows is None:
            st.info("Residuals against features need the file's rows: this upload was reduced to counts per group, "
                    "label and score. Upload it again, or map the feature columns on the Home page to analyse them "
                    "(the file is then read row by row).")
            return
        st.caption("This tab reads the uploaded file row by row (every column); the other tabs read the engine's "
                   "counts.")
        pred = rows
    candidates = [c for c in pred.frame.columns if c not in (pred.mapping.label, pred.mapping.score, pred.mapping.row_id)]
    if not candidates:
        st.info("The file has no other columns to analyse residuals against.")
        return
    default = next((c for c in pred.mapping.features if c in candidates), candidates[0])
    c1, c2 = st.columns([3, 1])
    feature = c2.selectbox("Feature", candidates, index=candidates.index(default), key="cal_feature")
    n_bins = c2.slider("Bins (numeric features)", 4, 20, 10, key="cal_feature_bins")
    result = cached_feature(pred.fingerprint, ctx.attribute, feature, n_bins, pred)
    names = [n for n in result.groups if n != OVERALL]
    shown = c2.multiselect("Groups", [*names, OVERALL], default=names[:4], key="cal_feature_groups") or names[:4]
    draw([Figure(lambda: figures.feature_residual_figure(result, shown))], c1)
    draw(recalibration_display.feature_items(result, shown), c2)

    st.markdown("**Model-based test** (§3.3): fit the residuals on features; significant terms or a cross-validated "
                "gain over predicting the mean residual are evidence of structure the model missed.")
    default_features = [c for c in [*pred.mapping.features, *pred.mapping.groups] if c in candidates]
    features = st.multiselect("Features in the residual model", candidates, default=default_features[:8],
                              key="cal_model_features")
    run = st.toggle("Fit the residual model", value=False, key="cal_model_run",
                    help="Takes a few seconds: robust Wald tests and 5-fold cross-validation (spline OLS and boosting).")
    if not run or not features:
        return
    try:
        model = cached_model(pred, tuple(features), 0)
    except DataError as err:
        _ui.show_data_error(err, "The residual model cannot be fitted")
        return
    draw(recalibration_display.residual_model_items(model))


# ------------------------------------------------------------------------------- every other method

# the words a method's page opens with: its title, what it asks, and what its cached run says while it runs
INTROS = {
    mincer_zarnowitz_display.SECTION.name: (
        "Calibration in the mean",
        "A prediction is calibrated in the mean when, among rows predicted ŷ, the target averages ŷ: the binned means "
        "E[y | ŷ] per group, and the Mincer–Zarnowitz regression of y on ŷ per group (intercept 0 and slope 1 when "
        "calibrated) with a test of whether the groups share one line.",
        "Fitting each group's calibration line"),
    top_label_display.SECTION.name: (
        "Calibration by group",
        "Top-label calibration: among rows whose most probable class has confidence p, a share p is right. "
        "Class-wise: each class's probability read one vs rest. Per group, with bootstrap intervals.",
        "Resampling each group's reliability"),
}


def _method_page(ctx: _ui.Context, method) -> None:
    """A calibration method without pickers of its own (calibration in the mean, top-label and class-wise, a
    registered task's): its section's result, cached, and its display list, as the audit report shows it."""
    if method is None:
        st.title("Calibration")
        st.info(f"No calibration method serves {ctx.spec.title} yet.")
        return
    title, caption, label = INTROS.get(method.name, (method.title or method.name, None, method.title or method.name))
    st.title(title)
    _ui.task_line(ctx)
    if caption:
        st.caption(caption)
    data = method.given(ctx.data)
    # the Summary's reference and size floor; the settings are the audit's defaults
    options = AuditParams(attribute=ctx.attribute, findings=FindingsParams(reference=ctx.reference))
    result = _run(method.name, ctx.attribute, options, label,
                  lambda progress: method.run(data, replace(options, progress=progress)), data)
    if result is not None:
        _render.render(method.display(data, result, options))


def _run(check: str, view, params, label: str, compute, data):
    """The cached result, or None after showing why the data cannot be analysed (one plain message)."""
    try:
        return _ui.cached(check, view, params, compute, label, data=data)
    except DataError as err:
        _ui.show_data_error(err, "This analysis cannot run on these data")
        return None


_ui.guarded(page)
