"""The Group parity and Sample-size significance pages in a real browser, on the COMPAS sample."""
from __future__ import annotations

import re

import pytest

from .conftest import no_traceback, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _open(page, app_url, link: str, heading: str) -> None:
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_text("Now analysing: COMPAS").wait_for()
    page.get_by_test_id("stSidebarNavItems").get_by_role("link", name=link).click()
    page.get_by_text(heading).first.wait_for()
    page.locator(".js-plotly-plot").first.wait_for()
    wait_for_app(page)


def test_group_parity_page(page, app_url):
    _open(page, app_url, "Group parity", "Group parity: Objective Fairness Index")
    # the sample's threshold τ = 0.4 survives the page switch (the sidebar slider keeps its value)
    assert page.get_by_test_id("stSliderThumbValue").first.inner_text() == "0.40"
    # it opens on the Summary's top group against the reference (issue 23), not on the two smallest groups
    page.get_by_text("Algorithmic bias in favour of Caucasian (OFI = -0.120)").wait_for()
    assert page.locator(".js-plotly-plot").count() >= 2                   # heatmap and benefit bars
    page.get_by_text("+0.254").first.wait_for()                           # the heatmap's cell annotations
    # flip the beneficial outcome: OFI changes sign, so the reading now favours the other group
    page.get_by_text("Positive prediction (score ≥ τ)").click()
    wait_for_app(page)
    page.get_by_text("Algorithmic bias in favour of African-American (OFI = +0.120)").wait_for()
    page.get_by_role("tab", name="Scenario builder").click()
    page.get_by_text("The thesis prints for this preset: OFI −0.06, DI 0.38").wait_for()
    assert page.get_by_test_id("stMetricValue").filter(has_text="-0.056").count() >= 1
    no_traceback(page)


def test_sample_size_significance_page(page, app_url):
    _open(page, app_url, "Sample-size significance", "Sample-size significance: MATCH")
    page.get_by_text("50 of 96").wait_for()           # every metric on the label (57 on the benefit, issue 34)
    page.get_by_text("Unlikely to be sampling noise at n = 3,696").first.wait_for()  # African-American, the top group
    assert page.locator(".js-plotly-plot").count() >= 2                              # the map and the null
    page.get_by_role("tab", name="Cross-Prior Smoothing").click()
    page.get_by_text("CPS with λ = 5 gives").wait_for()
    page.get_by_role("tab", name="Jaggedness and holes").click()
    page.get_by_text("Holes: how often is each metric undefined?").wait_for()
    no_traceback(page)


def test_di_heatmap_cells_are_bold_not_tags(page, app_url):
    """The DI panel bolds the cells outside the four-fifths band: Plotly draws our <b> as bold text, not as tags."""
    _open(page, app_url, "Group parity", "Group parity: Objective Fairness Index")
    bold = page.locator(".js-plotly-plot tspan[style*='bold']")

    def bold_ratios() -> list[str]:
        return [t for t in bold.all_text_contents() if re.fullmatch(r"\d+\.\d\d", (t or "").strip())]

    assert not bold_ratios()                                             # OFI's heatmap bolds no cell
    page.get_by_text("The thesis's Figure 3.2 panels").click()
    wait_for_app(page)
    page.locator(".js-plotly-plot").nth(5).wait_for()                   # heatmap, bars and the four panels
    assert "2.37" in bold_ratios()                                       # DI(Other, Native American), bold
    assert page.locator(".js-plotly-plot").filter(has_text="<b>").count() == 0
    no_traceback(page)
