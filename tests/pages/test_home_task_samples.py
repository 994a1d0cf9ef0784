"""AppTest: Home loads the regression and multiclass samples when they are picked (the data badge states the
task and the overview reads the sample's numbers). The Summary's audit sections for these tasks are the lead's
(issue 25), so only the load is checked here."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

ASSETS = ROOT / "assets"


def _pick(key: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.selectbox(key="sample_choice").set_value(key).run()
    assert not at.exception
    return at


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _badge(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**Data:**"))


def test_home_loads_the_regression_sample():
    at = _pick("adult_hours")
    assert at.subheader[1].value == "Now analysing: Adult hours worked per week (UCI, regression)"
    assert "16,281 rows · Task: regression · target *hours_per_week* · prediction *prediction*" in _badge(at)
    frame = pd.read_csv(ASSETS / "adult_hours.csv")
    metrics = _metrics(at)
    assert metrics["Rows"] == "16,281"
    assert metrics["Mean target"] == f"{frame['hours_per_week'].mean():.2f}" == "40.39"
    assert metrics["Mean prediction"] == f"{frame['prediction'].mean():.2f}"
    assert at.selectbox(key="model").value == "gradient boosting"
    assert at.selectbox(key="model").options == ["gradient boosting", "linear regression"]


def test_home_loads_the_multiclass_sample():
    at = _pick("adult_marital")
    assert at.subheader[1].value == "Now analysing: Adult marital status (UCI, 4 classes)"
    assert "16,281 rows · Task: multiclass (4 classes) · label *marital*" in _badge(at)
    frame = pd.read_csv(ASSETS / "adult_marital.csv")
    probabilities = frame[["p_married", "p_never-married", "p_divorced-or-separated", "p_widowed"]].to_numpy()
    classes = np.array(["married", "never-married", "divorced-or-separated", "widowed"])
    accuracy = np.mean(classes[probabilities.argmax(axis=1)] == frame["marital"].to_numpy())
    metrics = _metrics(at)
    assert metrics["Rows"] == "16,281" and metrics["Accuracy"] == f"{accuracy:.3f}" == "0.644"
    assert float(metrics["Mean confidence"]) == pytest.approx(probabilities.max(axis=1).mean(), abs=5e-4)
    assert at.selectbox(key="class").options == list(classes)
