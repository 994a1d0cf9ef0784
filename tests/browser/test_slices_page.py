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
    page.wait_for_function("(want) => { const box = document.querySelector("
                           "'[data-testid=\"stSidebar\"] [data-testid=\"stSelectbox\"] input');"
                           " return box && box.value === want; }", arg=attribute)   # the frame's attribute picker
    page.get_by_test_id("stSidebarNavItems").get_by_role("link", name="Group parity", exact=True).click()
    page.get_by_text("Group parity: Objective Fairness Index").first.wait_for()
    wait_for_app(page)
    no_traceback(page)
    sidebar = page.get_by_test_id("stSidebar")
    assert sidebar.get_by_test_id("stSelectbox").first.locator("input").first.input_value() == attribute
    page.get_by_text("in the slice").first.wait_for()                       # its two groups: the slice and the rest
    assert page.get_by_text("the rest").count() >= 1
