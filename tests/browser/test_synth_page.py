"""The Synthetic data (HydraGAN) page in a real browser: upload a small CSV, pick the group, train a tiny model,
see the tables and the download."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from .conftest import no_traceback, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_upload_and_train_a_tiny_model(page, app_url, tmp_path):
    rng = np.random.default_rng(2)
    n = 200
    sex = rng.choice(["F", "M"], n, p=[0.3, 0.7])
    frame = pd.DataFrame({"sex": sex, "hours": rng.normal(40, 8, n).round(1), "job": rng.choice(["a", "b"], n),
                          "approved": (rng.random(n) < 0.3).astype(int)})
    path = tmp_path / "tiny.csv"
    frame.to_csv(path, index=False)
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_test_id("stSidebarNavItems").get_by_role("link", name="Synthetic data (HydraGAN)").click()
    wait_for_app(page)
    page.get_by_text("The Art of Fairness").first.wait_for()
    page.get_by_text("Upload a file").click()
    wait_for_app(page)
    page.locator('input[type="file"]').first.set_input_files(str(path))
    page.get_by_text("tiny.csv: 200 rows").wait_for()
    wait_for_app(page)
    page.get_by_test_id("stMultiSelect").filter(has_text="Group column(s)").click()
    page.get_by_role("option", name="sex").click()
    page.keyboard.press("Escape")
    wait_for_app(page)
    for label, value in (("Epochs", "2"), ("Trials (boxplots)", "1")):
        box = page.get_by_label(label)
        box.fill(value)
        box.press("Enter")
        wait_for_app(page)
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("Realism: a classifier tells real from synthetic rows").wait_for()
    wait_for_app(page)
    page.get_by_role("tab", name="Fairness (Table 3.4)").click()
    page.get_by_test_id("stTabs").get_by_text("Accuracy on the real hold-out").wait_for()
    page.get_by_role("tab", name="The thesis's results").click()
    page.get_by_text("Table 3.5 (the thesis)").wait_for()
    download = page.get_by_role("button", name="Download the synthetic CSV")
    download.first.wait_for()            # drawn below the tabs, after their text: counted once it is there
    assert download.count() == 1
    no_traceback(page)
