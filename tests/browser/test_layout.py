"""Presenter-ready layout, measured in Chromium at 1280×720 (a projector) with the sidebar open, on every audit page
with the COMPAS sample: no headline number or table cut off, no legend over a chart's title, the first chart starts
within the first screen, chart ticks at 16 px or more, and the caveats folded into one expander after the first
chart."""
from __future__ import annotations

import pytest

from .conftest import no_traceback, wait_for_app

pytestmark = pytest.mark.slow             # ("browser" comes from tests/conftest.py, by folder)

VIEWPORT = {"width": 1280, "height": 720}
# (link in the navigation, None for Home): the audit pages a presenter walks through
PAGES = ["Home", "Residual distribution", "Calibration", "Group parity", "Sample-size significance",
         "Knee probing & augmentation", "Explanation disparity"]

# What the page shows, measured in the browser: every number is read from the laid-out DOM.
MEASURE = """() => {
  const visible = e => { const r = e.getBoundingClientRect(), d = e.closest('details');
                         return r.width > 0 && r.height > 0 && !(d && !d.open); };      // not in a closed expander
  const cut = e => e.scrollWidth > e.clientWidth + 1 || /…$/.test(e.textContent.trim());
  const metrics = [];
  for (const el of document.querySelectorAll('[data-testid="stMetricValue"], [data-testid="stMetricLabel"]')) {
    if (!visible(el)) continue;
    if ([el, ...el.querySelectorAll('*')].some(cut)) metrics.push(el.textContent.trim());
  }
  const tables = [];
  for (const el of document.querySelectorAll('[data-testid="stDataFrame"]')) {
    if (!visible(el)) continue;
    const scroller = el.querySelector('.dvn-scroller');
    if (scroller && scroller.scrollWidth > scroller.clientWidth + 1)
      tables.push({content: scroller.scrollWidth, shown: scroller.clientWidth});
  }
  for (const el of document.querySelectorAll('[data-testid="stTable"]')) {
    if (visible(el) && el.scrollWidth > el.clientWidth + 1) tables.push({content: el.scrollWidth, shown: el.clientWidth});
  }
  const overlaps = [];
  const charts = [...document.querySelectorAll('.js-plotly-plot')].filter(visible);
  for (const chart of charts) {
    const title = chart.querySelector('.gtitle'), legend = chart.querySelector('.legend');
    if (!title || !legend || !visible(title) || !visible(legend)) continue;
    const a = title.getBoundingClientRect(), b = legend.getBoundingClientRect();
    if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)
      overlaps.push(title.textContent);
  }
  const ticks = [];
  for (const chart of charts)
    for (const t of chart.querySelectorAll('.xtick text, .ytick text'))
      ticks.push(parseFloat(getComputedStyle(t).fontSize));
  const sidebar = document.querySelector('[data-testid="stSidebar"]');
  const summary = [...document.querySelectorAll('h2, h3')].find(h => h.textContent.startsWith('Summary:'));
  return {metrics, tables, overlaps, ticks,
          firstChartTop: charts.length ? charts[0].getBoundingClientRect().top : null,
          summaryTop: summary ? summary.getBoundingClientRect().top : null,
          sidebarOpen: !!sidebar && sidebar.getAttribute('data-collapsed') === 'false' && visible(sidebar),
          warningsOutsideExpanders: [...document.querySelectorAll('[data-testid="stAlertContentWarning"]')]
            .filter(e => visible(e) && !e.closest('[data-testid="stExpander"]')).length};
}"""


@pytest.fixture(scope="module")
def projector(browser, app_url):
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_text("Now analysing: COMPAS").wait_for()
    yield page
    context.close()


def _open(page, name: str) -> dict:
    if name != "Home":
        page.get_by_test_id("stSidebarNavItems").get_by_role("link", name=name, exact=True).click()
        wait_for_app(page)
    page.locator(".js-plotly-plot").first.wait_for()
    wait_for_app(page)
    page.wait_for_timeout(500)                                  # Plotly lays out after the element is attached
    no_traceback(page)
    return page.evaluate(MEASURE)


@pytest.mark.parametrize("name", PAGES)
def test_page_fits_a_projector(projector, name):
    shown = _open(projector, name)
    assert shown["sidebarOpen"]
    assert shown["metrics"] == [], f"headline numbers cut off: {shown['metrics']}"
    assert shown["tables"] == [], f"tables wider than their place: {shown['tables']}"
    assert shown["overlaps"] == [], f"a legend covers a title: {shown['overlaps']}"
    # the page opens on its result: the first chart (Home: the Summary of findings, its data overview comes after)
    first = shown["summaryTop"] if name == "Home" else shown["firstChartTop"]
    assert first is not None and first < VIEWPORT["height"], first
    assert shown["ticks"] and min(shown["ticks"]) >= 16, sorted(set(shown["ticks"]))
    assert shown["warningsOutsideExpanders"] == 0                # caveats are folded, not stacked
