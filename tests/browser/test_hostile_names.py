"""No link, image or HTML from data reaches a page (issue 22): group names that are Markdown links and images, HTML
tags and a bare URL, uploaded through Home, are shown as typed on every audit page and every tab: no off-site
``<a>`` or ``<img>`` (iframes included) and no request to their host."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from .conftest import no_traceback, wait_for_app, wait_for_charts

pytestmark = pytest.mark.slow             # ("browser" comes from tests/conftest.py, by folder)

HOST = "evil.example"
NAMES = ["[click me](http://evil.example/)", "![x](http://evil.example/t.png)", "<img src=http://evil.example/a.png>",
         "<a href=http://evil.example>x</a>", "http://evil.example/bare"]
PAGES = ["Residual distribution", "Calibration", "Group parity", "Sample-size significance",
         "Evaluation reweighting"]

# every attribute that makes a browser follow or fetch a URL, in the page and in every same-origin iframe
OFF_SITE = """(host) => {
  const found = [];
  // a URL attribute counts where it leads (our own page links carry names, URL-encoded, in their query); style and
  // srcset hold URLs inside text, so any mention counts there
  const points = (name, value) => {
    if (!value.includes(host)) return false;
    if (['style', 'srcset'].includes(name)) return true;
    try { return new URL(value, location.href).host.includes(host); } catch (e) { return true; }
  };
  const scan = (doc, where) => {
    for (const el of doc.querySelectorAll('*')) {
      for (const attr of el.attributes) {
        const name = attr.name.toLowerCase();
        const fetches = ['href', 'xlink:href', 'src', 'srcset', 'action', 'formaction', 'poster', 'data',
                         'background', 'style'].includes(name);
        if (fetches && points(name, attr.value)) found.push(`${where} <${el.tagName.toLowerCase()} ${name}="${attr.value}">`);
      }
      if (el.tagName.toLowerCase() === 'iframe') {
        try { if (el.contentDocument) scan(el.contentDocument, 'iframe'); } catch (e) { found.push('cross-origin iframe'); }
      }
    }
  };
  scan(document, 'page');
  const anchors = [...document.querySelectorAll('a')].map(a => a.getAttribute('href') || a.getAttribute('xlink:href'))
    .filter(h => h && /^(https?:)?\\/\\//.test(h) && !h.includes(location.host));
  const images = [...document.querySelectorAll('img')].map(i => i.getAttribute('src'))
    .filter(s => s && /^(https?:)?\\/\\//.test(s) && !s.includes(location.host));
  return {found, anchors, images};
}"""


def _hostile_csv(path) -> None:
    rng = np.random.default_rng(22)
    group = np.repeat(NAMES, 300)
    score = np.clip(rng.beta(2, 3, group.size) + (group == NAMES[1]) * 0.1, 0, 1)
    pd.DataFrame({"y": rng.binomial(1, score), "score": score, "group": group}).to_csv(path, index=False)


def _check(page, where: str, requests: list[str]) -> None:
    shown = page.evaluate(OFF_SITE, HOST)
    assert shown["found"] == [], (where, shown["found"])
    assert [a for a in shown["anchors"] if HOST in a] == [], (where, shown["anchors"])
    assert [i for i in shown["images"] if HOST in i] == [], (where, shown["images"])
    assert [r for r in requests if HOST in r] == [], (where, requests)
    no_traceback(page)


def test_hostile_group_names_never_become_links_images_or_requests(page, app_url, tmp_path):
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    path = tmp_path / "hostile.csv"
    _hostile_csv(path)
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_text("Upload a file").click()
    page.locator('input[type="file"]').set_input_files(str(path))
    page.get_by_role("button", name="Use these columns").click()
    page.get_by_text("Now analysing: hostile.csv").wait_for()
    wait_for_app(page)
    page.get_by_text("click me").first.wait_for(state="attached")       # the names are on the page, as text
    _check(page, "Home", requests)
    for name in PAGES:
        page.get_by_test_id("stSidebarNavItems").get_by_role("link", name=name, exact=True).click()
        wait_for_app(page)
        page.locator(".js-plotly-plot").first.wait_for()
        wait_for_app(page)
        _check(page, name, requests)
        tabs = page.locator('[data-testid="stTabs"]').first.get_by_role("tab")
        for index in range(1, tabs.count()):                          # lazy tabs: each one draws on its click
            tabs.nth(index).click()
            wait_for_charts(page)
            _check(page, f"{name}, tab {index}", requests)
