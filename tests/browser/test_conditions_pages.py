"""The Retraining simulator in a real browser: upload a small file, map its columns, shrink the run with the
sliders, press Run and read the results; then the Evaluation reweighting page on the loaded predictions."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from .conftest import no_traceback, wait_for_app

pytestmark = pytest.mark.browser


def _nav(page, name: str) -> None:
    page.get_by_test_id("stSidebarNavItems").get_by_role("link", name=name).click()
    wait_for_app(page)


def _small_file(path) -> None:
    rng = np.random.default_rng(0)
    n = 600
    y = rng.integers(0, 2, n)
    g = np.where(rng.random(n) < 0.75, y, 1 - y)
    pd.DataFrame({"x1": y + rng.normal(0, 1, n), "x2": g + rng.normal(0, 0.5, n), "label": y,
                  "group": np.where(g, "b", "a"),
                  "split": rng.choice(["train", "dev", "test"], n, p=[0.6, 0.2, 0.2])}).to_csv(path, index=False)


def _to_minimum(page, label: str) -> None:
    thumb = page.get_by_role("slider", name=label)
    thumb.focus()
    thumb.press("Home")
    wait_for_app(page)


def test_simulator_upload_run_and_results(page, app_url, tmp_path):
    page.goto(app_url)
    wait_for_app(page)
    _nav(page, "Retraining simulator")
    page.get_by_text("Upload a file (features or a text column)").click()
    wait_for_app(page)
    path = tmp_path / "small.csv"
    _small_file(path)
    page.locator('input[type="file"]').first.set_input_files(str(path))
    page.get_by_text("small.csv: 600 rows").wait_for()
    wait_for_app(page)
    page.get_by_role("button", name="Use these columns").click()
    wait_for_app(page)
    page.get_by_text("models of up to").wait_for()
    _to_minimum(page, "Seeds")
    page.get_by_text("Base learner and hyperparameters").click()
    _to_minimum(page, "max epochs")
    page.get_by_text("= 36 models of up to 1 epochs").wait_for()          # 9 α × 1 seed × 4 methods
    page.get_by_role("button", name="Run", exact=True).click()
    wait_for_app(page)
    page.get_by_text("Reading.").first.wait_for()
    page.get_by_text("Test figures of the setting selected on dev").first.wait_for()      # the plotly title
    page.get_by_role("tab", name="Training cells").click()
    page.get_by_text("Training cells at").first.wait_for()
    page.get_by_role("tab", name="Results table").click()
    page.get_by_text("Download this table (CSV)").wait_for()
    no_traceback(page)


def test_reweighting_page_on_the_loaded_predictions(page, app_url):
    page.goto(app_url)
    wait_for_app(page)
    _nav(page, "Evaluation reweighting")
    page.get_by_text("Accuracy (as is)").wait_for()
    page.get_by_text("This is not retraining.").wait_for()
    page.get_by_text("JB: every cell balanced").click()
    wait_for_app(page)
    page.get_by_text("The same predictions scored on reweighted test cells").first.wait_for()
    no_traceback(page)
