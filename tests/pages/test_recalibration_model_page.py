"""'Recalibrate, then re-run' in Streamlit's AppTest (issue 24 item 3): a recalibration added on the Calibration page
becomes a model that the sidebar's Model picker lists and every page audits; the knee-concentration tab shows the
before/after shape and says 'calibrate first' when ECE ≥ 0.15; with several models the Calibration page compares two."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairviz.calibration import RecalParams, recalibrated_model
from fairviz.compare import CompareParams, compare_models
from fairviz.core.ece import ece
from fairviz.data import ColumnMapping, build_predictions
from fairviz.data.engine import Engine, resolve
from fairviz.data.samples import load_sample, sample_path, samples
from fairviz.residuals import RDFParams, calibration_shape
from fairviz.data.view import View

from tests.conftest import ROOT
from tests.pages.tabs import open_tab
from tests.residuals.test_calibrate_first import overconfident

CALIBRATION, RESIDUALS = "app_pages/calibration.py", "app_pages/residuals.py"


def open_page(page: str, pred=None, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    if pred is not None:
        at.session_state["predictions"] = pred
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def shape_table(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "knees diagnostic" in d.value.columns)


def model_picker(at: AppTest):
    return next(s for s in at.sidebar.selectbox if s.label == "Model")


@pytest.mark.slow
@pytest.mark.parametrize("sample, attribute", [("adult", "sex"), ("compas", "race")])
def test_add_as_a_model_lists_the_model_and_the_residual_page_audits_it(sample, attribute):
    pred = load_sample(sample)
    at = open_page(CALIBRATION, pred, cal_resamples=0, rdf_intervals=False)
    open_tab(at, "cal_tab", "Recalibration")
    first = pred.model_names[0]
    at.button(key="cal_add_isotonic").click().run()
    assert not at.exception, at.exception
    title = f"{first} · isotonic"
    assert any(title in s.value and "every page now audits it" in s.value for s in at.success)
    picker = model_picker(at)
    assert title in picker.options and picker.value == title and first in picker.options
    joint = at.session_state["predictions"]
    assert joint.model_names == [*pred.model_names, title]
    expected, _, _ = recalibrated_model(pred, "isotonic", attribute)
    np.testing.assert_array_equal(joint.scores[title], expected)
    # the Residual page audits the new model: its ECE is the new scores' ECE, not the original's
    at.switch_page(RESIDUALS).run()
    assert not at.exception, at.exception
    assert model_picker(at).value == title
    open_tab(at, "rdf_tab", "Knee error concentration")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["ECE (15 bins)"] == f"{ece(expected, pred.y):.3f}"
    assert f"{ece(expected, pred.y):.3f}" != f"{ece(pred.score, pred.y):.3f}"
    # calibrate, then re-run: the knee tab sets the original model beside its recalibration just added
    shape = shape_table(at)
    assert list(shape["model"]) == [first, title] and list(shape[""]) == ["before", "after"]
    assert any("It is one of this session's models." in c.value for c in at.caption)
    assert not any("Calibrate first" in w.value for w in at.warning)          # ECE well below 0.15
    # switching back in the picker audits the original again
    model_picker(at).set_value(first).run()
    open_tab(at, "rdf_tab", "Knee error concentration")
    assert {m.label: m.value for m in at.metric}["ECE (15 bins)"] == f"{ece(pred.score, pred.y):.3f}"
    # back on the original model, the recalibration already added cannot be added twice
    at.switch_page(CALIBRATION).run()
    open_tab(at, "cal_tab", "Recalibration")
    assert at.button(key="cal_add_isotonic").disabled and not at.button(key="cal_add_platt").disabled


@pytest.mark.slow
def test_per_group_recalibration_is_added_under_its_own_name():
    pred = load_sample("compas")
    at = open_page(CALIBRATION, pred, cal_resamples=0)
    open_tab(at, "cal_tab", "Recalibration")
    at.checkbox(key="cal_per_group").check().run()
    at.button(key="cal_add_platt").click().run()
    assert not at.exception, at.exception
    title = f"{pred.model_names[0]} · Platt per race"
    joint = at.session_state["predictions"]
    expected, _, _ = recalibrated_model(pred, "platt", "race", RecalParams(per_group=True))
    np.testing.assert_array_equal(joint.scores[title], expected)
    assert model_picker(at).value == title


@pytest.mark.slow
def test_knee_tab_says_calibrate_first_and_shows_the_recalibrated_shape_on_a_miscalibrated_file():
    pred = build_predictions(overconfident(), ColumnMapping("y", "score", ("group",)), source="overconfident.csv")
    at = open_page(RESIDUALS, pred)
    open_tab(at, "rdf_tab", "Knee error concentration")
    warning = next(w.value for w in at.warning if "Calibrate first" in w.value)
    assert f"ECE {ece(pred.score, pred.y):.3f}" in warning and "diagnostic only for calibrated models" in warning
    # no recalibration in the session: temperature scaling (Table 7's method) is fitted for the view, not added
    scores, title, note = recalibrated_model(pred, "temperature", "group")
    joint = pred.with_added_model(title, scores, note)
    expected = calibration_shape(joint.at(View(model="score")), joint.at(View(model=title)), "group",
                                 RDFParams(resamples=0), note, False)
    shape = shape_table(at)
    assert list(shape["model"]) == ["score", "score · temperature"]
    assert list(shape["calibration regime"]) == ["poor", "good"]
    np.testing.assert_allclose(shape["ECE (15 bins)"], [expected.before.ece, expected.after.ece], atol=5e-4)
    np.testing.assert_allclose(shape["error ratio knee / elsewhere"], [expected.before.ratio, expected.after.ratio],
                               atol=5e-3)
    assert any(f"ECE {expected.before.ece:.3f} (poor) → {expected.after.ece:.3f} (good)" in m.value
               for m in at.markdown)
    assert any("not added" in c.value for c in at.caption)
    assert at.session_state["predictions"].model_names == ["score"]        # nothing was added to the session


@pytest.mark.slow
def test_add_as_a_model_on_an_upload_reduced_to_counts():
    weighted = Engine().reduce(resolve(sample_path("compas")), samples()["compas"].mapping).predictions()
    at = open_page(CALIBRATION, weighted, cal_resamples=0, sample_key=None, attribute="race")
    open_tab(at, "cal_tab", "Recalibration")
    at.button(key="cal_add_spline").click().run()
    assert not at.exception, at.exception
    title = f"{weighted.model_names[0]} · monotone spline"
    joint = at.session_state["predictions"]
    assert joint.weighted and joint.model_names == [*weighted.model_names, title]
    expected, _, _ = recalibrated_model(weighted, "spline", "race")
    np.testing.assert_array_equal(joint.scores[title], expected)
    assert model_picker(at).value == title


@pytest.mark.slow
def test_calibration_page_compares_two_models_and_a_recalibration_brings_the_tab():
    at = open_page(CALIBRATION, load_sample("adult"), cal_resamples=0, compare_resamples=200)
    open_tab(at, "cal_tab", "Compare models")
    differences = next(d.value for d in at.dataframe if "Δ (second − first)" in d.value.columns)
    assert {"ECE", "log-loss", "Brier score", "AUROC"} <= set(differences["Metric"])
    expected = compare_models(load_sample("adult"), "sex", 0.5, "positive", None, "gradient boosting",
                              "logistic regression", CompareParams(resamples=200, permutations=200))
    row = differences[(differences["Metric"] == "ECE") & (differences["Group"] == "every row")].iloc[0]
    assert row["Δ (second − first)"] == pytest.approx(expected.difference("ece").difference)
    assert any("Reliability of both models" in c.proto.spec for c in at.get("plotly_chart"))
    # one model: no tab, until a recalibration is added as a model
    at = open_page(CALIBRATION, load_sample("compas"), cal_resamples=0)
    assert "Compare models" not in [t.label for t in at.tabs]
    open_tab(at, "cal_tab", "Recalibration")
    at.button(key="cal_add_platt").click().run()
    assert "Compare models" in [t.label for t in at.tabs]
