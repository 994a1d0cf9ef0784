"""The Calibration page in a real browser on the default sample (COMPAS): diagram, tests tab, small groups."""
from __future__ import annotations

import re

import pandas as pd
import pytest

from .conftest import no_traceback, wait_for_app

pytestmark = pytest.mark.browser


def test_calibration_page_in_the_browser(page, app_url):
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_text("Now analysing: COMPAS").wait_for()
    page.get_by_test_id("stSidebarNavItems").get_by_role("link", name="Calibration").click()
    page.get_by_text("Reliability by race").first.wait_for()
    wait_for_app(page)
    assert page.locator(".js-plotly-plot").count() >= 1
    caveats = page.get_by_test_id("stExpander").filter(has_text=re.compile(r"\d+ caveats?"))
    caveats.first.locator("summary").click()                        # the caveats are folded after the first chart
    page.get_by_text("Group 'Native American': not enough data (n = 18").first.wait_for()
    page.get_by_role("tab", name="Calibration tests").click()
    page.get_by_text("Does calibration differ by group?").wait_for()
    page.get_by_role("tab", name="Subgroup performance").click()
    page.get_by_text("AUROC by race with 95% bootstrap intervals").first.wait_for()
    no_traceback(page)

    page.get_by_role("tab", name="Recalibration").click()
    with page.expect_download() as download:                        # every row, built on click
        page.get_by_role("button", name="Download recalibrated predictions (CSV)").click()
    recalibrated = pd.read_csv(download.value.path())
    assert len(recalibrated) == 7214
    assert set(recalibrated.split) == {"calibration", "evaluation"}
    assert recalibrated.filter(like="score_").apply(lambda c: c.between(0, 1)).all().all()
