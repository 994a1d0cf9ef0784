"""Every audit page opens on each bundled sample of each task (AppTest through the whole app): regression and
multiclass data get their own analyses on Residuals, Calibration and Group parity, whose tables hold the numbers a
direct computation from the sample's file gives; binary-only pages say where to look (regression) or read the
sidebar's class one vs rest (multiclass)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

ASSETS = ROOT / "assets"
PAGES = ("app_pages/residuals.py", "app_pages/calibration.py", "app_pages/parity.py", "app_pages/significance.py",
         "app_pages/thresholds.py", "app_pages/reweighting.py", "app_pages/slices.py")


@pytest.fixture(scope="module", params=["adult_hours", "adult_marital"])
def sample(request):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).run()
    at.selectbox(key="sample_choice").set_value(request.param).run()
    assert not at.exception
    return request.param, at


def _errors(at: AppTest) -> list[str]:
    return [str(e.value) for e in at.exception] + [str(e.value) for e in at.error]


def _cell(at: AppTest, column: str, group: str) -> float:
    """The value of ``column`` in the row of ``group`` of the first table on the page that has that column."""
    for table in at.dataframe:
        frame = table.value
        if column in frame.columns and "group" in frame.columns and (frame["group"] == group).any():
            return float(frame.loc[frame["group"] == group, column].iloc[0])
    raise AssertionError(f"no table with {column!r} for {group!r}")


def test_every_audit_page_opens(sample):
    key, at = sample
    for page in PAGES:
        at.switch_page(page).run()
        assert not _errors(at), (key, page, _errors(at))
        assert at.title, (key, page)
    at.switch_page("app_pages/significance.py").run()
    info = " ".join(i.value for i in at.info)
    if key == "adult_hours":
        assert "the loaded data are a regression's" in info           # where to look instead
    else:
        assert at.selectbox(key="class").value == "married"           # the largest class, one vs rest


def test_the_regression_pages_read_the_samples_numbers(sample):
    key, at = sample
    if key != "adult_hours":
        pytest.skip("regression sample only")
    frame = pd.read_csv(ASSETS / "adult_hours.csv")
    female = frame[frame["sex"] == "Female"]
    at.switch_page("app_pages/parity.py").run()
    assert at.title[0].value == "Group parity"
    mae = np.mean(np.abs(female["prediction"] - female["hours_per_week"]))
    assert _cell(at, "MAE", "Female") == pytest.approx(mae, rel=1e-6)
    at.switch_page("app_pages/calibration.py").run()
    assert at.title[0].value == "Calibration in the mean"


def test_the_multiclass_pages_read_the_samples_numbers(sample):
    key, at = sample
    if key != "adult_marital":
        pytest.skip("multiclass sample only")
    frame = pd.read_csv(ASSETS / "adult_marital.csv")
    columns = [c for c in frame.columns if c.startswith("p_")]
    predicted = np.array([c[2:] for c in columns])[frame[columns].to_numpy().argmax(axis=1)]
    female = (frame["sex"] == "Female").to_numpy()
    accuracy = np.mean(predicted[female] == frame["marital"].to_numpy()[female])
    at.switch_page("app_pages/parity.py").run()
    assert _cell(at, "accuracy", "Female") == pytest.approx(accuracy, rel=1e-6)
    at.switch_page("app_pages/calibration.py").run()
    assert at.title[0].value == "Calibration by group"
