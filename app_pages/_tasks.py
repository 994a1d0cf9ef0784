"""Calibration and Group parity for regression and multiclass data: the page's controls → one cached call with a
progress bar (``_ui.cached_with_progress``) → the concept's display list.

Multiclass data reach every binary page one class at a time (the sidebar's class, ``Predictions.at``);
these two pages show every class at once: top-label and class-wise calibration, per-class parity, GAP, the
confusion matrices and MATCH per class. Regression data get calibration in the mean and error and prediction
parity."""
from __future__ import annotations

import streamlit as st

from app_pages import _render, _ui
from app_pages._compare import compare_view
from fairviz.calibration import display as calibration_tasks
from fairviz.calibration.mincer_zarnowitz import RegressionParams
from fairviz.calibration.mincer_zarnowitz import analyse_regression as regression_calibration
from fairviz.calibration.top_label_ece import MulticlassParams
from fairviz.calibration.top_label_ece import analyse_multiclass as multiclass_calibration
from fairviz.core.focus import Focus
from fairviz.core.markup import md
from fairviz.data import DataError
from fairviz.parity.one_vs_rest import MulticlassParityParams, analyse_multiclass as multiclass_parity
from fairviz.parity.error_parity import RegressionParityParams, analyse_regression as regression_parity
from fairviz.parity import display as parity_display
from fairviz.sample_size.class_match import analyse_class_match
from fairviz.sample_size.display import class_match_display

TASK_LINE = {"regression": "Task: **regression** — target *{label}*, prediction *{score}*.",
             "multiclass": "Task: **multiclass** — label *{label}*, {classes} classes; the sidebar's class is what "
                           "the one-vs-rest pages (Residuals, Sample-size significance, thresholds) read."}


def task_line(ctx) -> None:
    data = ctx.data or ctx.pred
    st.caption(TASK_LINE[ctx.task].format(label=md(data.mapping.label), score=md(data.mapping.score),
                                          classes=len(data.classes)))


def calibration_page(ctx) -> None:
    """Calibration in the mean (regression) or top-label and class-wise calibration (multiclass)."""
    data = ctx.data
    st.title("Calibration by group" if ctx.task == "multiclass" else "Calibration in the mean")
    task_line(ctx)
    if ctx.task == "regression":
        st.caption("A prediction is calibrated in the mean when, among rows predicted ŷ, the target averages ŷ: "
                   "the binned means E[y | ŷ] per group, and the Mincer–Zarnowitz regression of y on ŷ per group "
                   "(intercept 0 and slope 1 when calibrated) with a test of whether the groups share one line.")
        params = RegressionParams()
        key = (data.fingerprint, ctx.attribute, params)
        result = _run("calibration_regression", key, "Fitting each group's calibration line",
                      lambda progress: regression_calibration(data, ctx.attribute, params, data.quantiles,
                                                              data.quantile_levels))
        if result is not None:
            _render.render(calibration_tasks.regression_display(result, data.mapping.label,
                                                                Focus(reference=ctx.reference), (data.fingerprint,)))
        return
    st.caption("Top-label calibration: among rows whose most probable class has confidence p, a share p is right. "
               "Class-wise: each class's probability read one vs rest. Per group, with bootstrap intervals.")
    params = MulticlassParams()
    key = (data.fingerprint, ctx.attribute, params, ctx.reference)
    result = _run("calibration_multiclass", key, "Resampling each group's reliability",
                  lambda progress: multiclass_calibration(data, ctx.attribute, params, ctx.reference, progress))
    if result is not None:
        _render.render(calibration_tasks.multiclass_display(result, Focus(reference=ctx.reference),
                                                            (data.fingerprint,)))


def parity_page(ctx) -> None:
    """Error and prediction parity (regression) or per-class parity, GAP and MATCH per class (multiclass)."""
    data = ctx.data
    st.title("Group parity")
    task_line(ctx)
    if ctx.task == "regression":
        st.caption("Error parity: is the model as wrong (bias ŷ − y, MAE, RMSE) for every group? Prediction parity: "
                   "are the groups' predictions distributed alike (Wasserstein-1, KS, the statistical-parity AUC)? "
                   "And the fairness of *Systematic Evaluation of Predictive Fairness* (Han et al.) through "
                   "quantile proxy classes of the target. Each gap with a permutation p-value, BH over pairs.")
        params = RegressionParityParams(reference=ctx.reference)
        key = (data.fingerprint, ctx.attribute, params)
        result = _run("parity_regression", key, "Comparing the groups' errors",
                      lambda progress: regression_parity(data, ctx.attribute, params))
        if result is not None:
            _render.render(parity_display.regression_display(result, (data.fingerprint, ctx.attribute)))
        if ctx.joint.several_models:
            st.subheader("Compare models")
            compare_view(ctx, "parity")
        return
    st.caption("Each class one vs rest: TPR, FPR and selection rate per group with their gaps, OFI and DI per class; "
               "GAP (Han et al.: the root mean square over classes of the groups' gaps), the confusion matrices, "
               "accuracy and macro-F1 per group, and MATCH per class (sample-size significance).")
    params = MulticlassParityParams(reference=ctx.reference)
    key = (data.fingerprint, ctx.attribute, params)
    result = _run("parity_multiclass", key, "Comparing the groups class by class",
                  lambda progress: (multiclass_parity(data, ctx.attribute, params),
                                    analyse_class_match(data, ctx.attribute)))
    if result is not None:
        parity, match = result
        view = (data.fingerprint, ctx.attribute)
        _render.render(parity_display.multiclass_display(parity, class_match_display(match, view), view))


def _run(namespace: str, key: tuple, label: str, compute):
    """The cached result, or None after showing why the data cannot be analysed (one plain message)."""
    try:
        return _ui.cached_with_progress(namespace, key, compute, label)
    except DataError as err:
        _ui.show_data_error(err, "This analysis cannot run on these data")
        return None
