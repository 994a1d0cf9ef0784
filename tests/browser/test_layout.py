"""Presenter-ready layout, measured in Chromium at 1280×720 (a projector) with the sidebar open, on every audit page
and its tabs with the COMPAS sample: no headline number or table cut off, no legend over a chart's title, no chart
text cut at the chart's edge, the first chart within the first screen, chart ticks at 16 px or more, and the caveats
folded into one expander."""
from __future__ import annotations

import pytest

from .conftest import new_page, no_traceback, wait_for_app, wait_for_charts

pytestmark = pytest.mark.slow             # ("browser" comes from tests/conftest.py, by folder)

VIEWPORT = {"width": 1280, "height": 720}
# (link in the navigation, None for Home): the audit pages a presenter walks through
PAGES = ["Home", "Residual distribution", "Calibration", "Group parity", "Sample-size significance", "Slices",
         "Knee probing & augmentation", "Explanation disparity"]

AXIS_FREE = {"Slices"}                      # pages whose first chart has no axes (a treemap): no ticks to measure
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
  const clipped = [];                      // chart text running past the chart's edges is cut off on screen
  for (const chart of charts) {
    const box = chart.getBoundingClientRect();
    for (const t of chart.querySelectorAll('svg text')) {
      const r = t.getBoundingClientRect();
      if (r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1)) clipped.push(t.textContent);
    }
  }
  const ticks = [];
  for (const chart of charts)
    for (const t of chart.querySelectorAll('.xtick text, .ytick text'))
      ticks.push(parseFloat(getComputedStyle(t).fontSize));
  const sidebar = document.querySelector('[data-testid="stSidebar"]');
  const summary = [...document.querySelectorAll('h2, h3')].find(h => h.textContent.startsWith('Summary:'));
  return {metrics, tables, overlaps, ticks, clipped,
          firstChartTop: charts.length ? charts[0].getBoundingClientRect().top : null,
          summaryTop: summary ? summary.getBoundingClientRect().top : null,
          sidebarOpen: !!sidebar && sidebar.getAttribute('data-collapsed') === 'false' && visible(sidebar),
          warningsOutsideExpanders: [...document.querySelectorAll('[data-testid="stAlertContentWarning"]')]
            .filter(e => visible(e) && !e.closest('[data-testid="stExpander"]')).length};
}"""


@pytest.fixture(scope="module")
def projector(browser, app_url):
    page = new_page(browser, VIEWPORT)
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_text("Now analysing: COMPAS").wait_for()
    yield page
    page.context.close()


def _open(page, name: str) -> dict:
    if name != "Home":
        page.get_by_test_id("stSidebarNavItems").get_by_role("link", name=name, exact=True).click()
        wait_for_app(page)
    page.locator(".js-plotly-plot").first.wait_for()
    wait_for_charts(page)                                       # Plotly lays out after the element is attached
    no_traceback(page)
    return page.evaluate(MEASURE)


# tabs whose grid holds the file's own rows with every column (D*): a data grid that scrolls, as a spreadsheet does
DATA_GRIDS = {"Diagnostic set D*"}


def _fits(shown: dict, where: str, tab: str = "") -> None:
    assert shown["metrics"] == [], f"{where}: headline numbers cut off: {shown['metrics']}"
    assert tab in DATA_GRIDS or shown["tables"] == [], f"{where}: tables wider than their place: {shown['tables']}"
    assert shown["overlaps"] == [], f"{where}: a legend covers a title: {shown['overlaps']}"
    assert min(shown["ticks"], default=16) >= 16, f"{where}: {sorted(set(shown['ticks']))}"
    assert shown["clipped"] == [], f"{where}: chart text cut at the chart's edge: {shown['clipped']}"


@pytest.mark.parametrize("name", PAGES)
def test_page_fits_a_projector(projector, name):
    shown = _open(projector, name)
    assert shown["sidebarOpen"]
    _fits(shown, name)
    # the page opens on its result: the first chart (Home: the Summary of findings, its data overview comes after)
    first = shown["summaryTop"] if name == "Home" else shown["firstChartTop"]
    assert first is not None and first < VIEWPORT["height"], first
    if name not in AXIS_FREE:
        assert shown["ticks"] and min(shown["ticks"]) >= 16, sorted(set(shown["ticks"]))
    assert shown["warningsOutsideExpanders"] == 0                # caveats are folded, not stacked
    tabs = projector.locator('[data-testid="stTabs"]').first.get_by_role("tab")
    for index in range(1, tabs.count()):               # every tab of the page's first tab row, as a click opens it
        label = tabs.nth(index).inner_text()
        tabs.nth(index).click()
        wait_for_charts(projector)
        _fits(projector.evaluate(MEASURE), f"{name}, tab {label!r}", label)
    if tabs.count() > 1:
        tabs.nth(0).click()                             # the next page opens as a presenter left this one
        wait_for_app(projector)
