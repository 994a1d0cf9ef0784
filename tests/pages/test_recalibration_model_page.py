"""'Recalibrate, then re-run' in Streamlit's AppTest (issue 24 item 3): a recalibration added on the Calibration page
becomes a model that the sidebar's Model picker lists and every page audits; the knee-concentration tab shows the
before/after shape and says 'calibrate first' when ECE ≥ 0.15."""
from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fairviz.calibration import RecalParams, recalibrated_model
from fairviz.core.ece import ece
from fairviz.data.samples import load_sample

from tests.conftest import ROOT
from tests.pages.tabs import open_tab

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
