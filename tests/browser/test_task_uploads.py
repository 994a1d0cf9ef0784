"""Regression and multiclass uploads in a real browser: the task is guessed and shown, the file loads through the
engine, and the task's pages open on it (Residuals, Calibration, Group parity) with the task stated."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .conftest import no_traceback, wait_for_app


def _upload_and_load(page, app_url, path, task_title: str) -> None:
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_text("Now analysing: COMPAS").wait_for()
    page.get_by_text("Upload a file").click()
    page.locator('input[type="file"]').set_input_files(str(path))
    page.get_by_text(f"{path.name}: ").first.wait_for()
    assert page.get_by_role("radio", name=task_title).is_checked()          # the guessed task, shown
    page.get_by_role("button", name="Use these columns").click()
    page.get_by_text(f"Now analysing: {path.name}").wait_for()
    wait_for_app(page)
    no_traceback(page)


def _open(page, name: str) -> None:
    page.get_by_test_id("stSidebarNavItems").get_by_role("link", name=name).click()
    wait_for_app(page)
    no_traceback(page)


def test_a_regression_upload_opens_its_pages(page, app_url, tmp_path):
    rng = np.random.default_rng(7)
    n = 3000
    region = rng.choice(["north", "south", "east"], n)
    price = rng.normal(200, 40, n)
    path = tmp_path / "houses.csv"
    pd.DataFrame({"price": price, "price_pred": price + rng.normal(0, 10, n) + 15 * (region == "south"),
                  "region": region}).to_csv(path, index=False)
    _upload_and_load(page, app_url, path, "Regression (numeric target)")
    page.get_by_text("Task: regression").first.wait_for()                   # the sidebar states the task
    _open(page, "Group parity")
    page.get_by_text("Error parity: bias, MAE and RMSE per group").first.wait_for()
    _open(page, "Calibration")
    page.get_by_role("heading", name="Calibration in the mean", exact=True).wait_for()
    _open(page, "Residual distribution")
    page.locator(".js-plotly-plot").first.wait_for()


def test_a_multiclass_upload_opens_its_pages(page, app_url, tmp_path):
    rng = np.random.default_rng(8)
    n = 3000
    classes = np.array(["cat", "dog", "bird"])
    probabilities = rng.dirichlet([2, 2, 2], n)
    path = tmp_path / "animals.csv"
    frame = pd.DataFrame({"animal": classes[rng.integers(0, 3, n)], "region": rng.choice(["north", "south"], n)})
    for k, name in enumerate(classes):
        frame[f"p_{name}"] = probabilities[:, k]
    frame.to_csv(path, index=False)
    _upload_and_load(page, app_url, path, "Multiclass (a label with 3 or more classes)")
    page.get_by_text("Task: multiclass (3 classes)").first.wait_for()
    _open(page, "Group parity")
    page.get_by_text("Per class, one vs rest").first.wait_for()
    _open(page, "Calibration")
    page.get_by_role("heading", name="Calibration by group", exact=True).wait_for()
    _open(page, "Sample-size significance")                                  # a binary page, one class vs rest
    page.locator(".js-plotly-plot").first.wait_for()
