"""The Slices page in Chromium on the COMPAS sample: the ranked slices and their treemap, then a click on "Audit this
slice vs the rest" makes the slice the attribute every audit page reads — Group parity then compares the slice's
rows with the rest."""
from __future__ import annotations

import re

from .conftest import no_traceback, wait_for_app


def test_a_slice_clicked_becomes_every_pages_attribute(page, app_url):
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_text("Now analysing: COMPAS").wait_for()
    page.get_by_test_id("stSidebarNavItems").get_by_role("link", name="Slices", exact=True).click()
    page.get_by_text("Slices: where the false positive rate differs").first.wait_for()
    wait_for_app(page)
    no_traceback(page)
    page.locator(".js-plotly-plot").first.wait_for()                         # the treemap
    button = page.get_by_role("button", name=re.compile(r"^Audit this slice vs the rest: ")).first
    slice_name = button.inner_text().split(": ", 1)[1]
    button.click()
    wait_for_app(page)
    attribute = f"slice: {slice_name}"
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text(attribute).first.wait_for()                         # the frame's attribute picker shows it
    page.get_by_test_id("stSidebarNavItems").get_by_role("link", name="Group parity", exact=True).click()
    page.get_by_text("Group parity: Objective Fairness Index").first.wait_for()
    wait_for_app(page)
    no_traceback(page)
    assert sidebar.get_by_text(attribute).count() >= 1                      # still the attribute on the next page
    page.get_by_text("in the slice").first.wait_for()                       # its two groups: the slice and the rest
    assert page.get_by_text("the rest").count() >= 1
