"""Upload a CSV in a real browser, map its columns, open the RDF page; a broken file gets a message; the frame's
choices (attribute, τ, benefit) hold across pages."""
from __future__ import annotations

from urllib.parse import urlparse

import numpy as np
import pandas as pd
from playwright.sync_api import expect

from .conftest import choose, no_traceback, wait_for_app


def _upload(page, path) -> None:
    page.get_by_text("Upload a file").click()
    page.locator('input[type="file"]').set_input_files(str(path))


def test_upload_map_and_open_residual_page(page, app_url, tmp_path):
    rng = np.random.default_rng(3)
    n = 3000
    frame = pd.DataFrame({"outcome": rng.integers(0, 2, n), "prob": rng.uniform(0, 1, n),
                          "gender": rng.choice(["woman", "man"], n)})
    path = tmp_path / "my_model.csv"
    frame.to_csv(path, index=False)

    page.goto(app_url)
    wait_for_app(page)
    page.get_by_text("Now analysing: COMPAS").wait_for()          # opens on the sample at once
    _upload(page, path)
    page.get_by_text("my_model.csv: 3,000 rows").wait_for()
    page.get_by_role("button", name="Use these columns").click()
    page.get_by_text("Now analysing: my_model.csv").wait_for()
    wait_for_app(page)
    page.get_by_test_id("stSidebarNavItems").get_by_role("link", name="Residual distribution").click()
    page.locator(".js-plotly-plot").first.wait_for()
    wait_for_app(page)
    page.get_by_role("tab", name="Pair metrics").wait_for()
    assert page.get_by_text("man vs woman").count() + page.get_by_text("woman vs man").count() >= 1
    page.get_by_text("Sorted residuals by gender").first.wait_for()
    no_traceback(page)

    page.get_by_role("tab", name="Diagnostic set D*").click()
    shown = page.get_by_text("lie within ε").inner_text()
    with page.expect_download() as download:                        # the CSV is built on click
        page.get_by_role("button", name="Download D* as CSV").click()
    d_star = pd.read_csv(download.value.path())
    assert f"{len(d_star):,} rows" in shown and 0 < len(d_star) < n
    assert set(d_star.columns) >= {"residual D", "nearest knee", "gender (analysed)", "outcome", "prob", "gender"}
    assert np.allclose(d_star["residual D"], d_star["prob"] - d_star["outcome"])


def test_every_audit_page_reads_the_uploaded_data(page, app_url, tmp_path):
    rng = np.random.default_rng(4)
    n = 2000
    group = rng.choice(["north", "south", "east"], n)
    score = np.clip(rng.beta(2, 3, n) + np.where(group == "south", 0.15, 0.0), 0, 1)
    frame = pd.DataFrame({"y": rng.binomial(1, score), "score": score, "region": group})
    path = tmp_path / "regions.csv"
    frame.to_csv(path, index=False)

    page.goto(app_url)
    wait_for_app(page)
    _upload(page, path)
    page.get_by_role("button", name="Use these columns").click()
    page.get_by_text("Now analysing: regions.csv").wait_for()
    wait_for_app(page)
    for nav in ("Calibration", "Group parity", "Sample-size significance", "Residual distribution"):
        page.get_by_test_id("stSidebarNavItems").get_by_role("link", name=nav, exact=True).click()
        wait_for_app(page)
        page.locator(".js-plotly-plot").first.wait_for()
        expect(page.get_by_text("regions.csv").first).to_be_attached()            # the sidebar's data badge
        expect(page.get_by_text("south").first).to_be_attached()                   # the uploaded groups are drawn
        no_traceback(page)


def test_broken_file_gets_a_message(page, app_url, tmp_path):
    path = tmp_path / "broken.csv"
    path.write_text("label,score,group\n1,high,A\n0,0.2,B\n1,0.9,A\n")
    page.goto(app_url)
    wait_for_app(page)
    _upload(page, path)
    page.get_by_role("button", name="Use these columns").click()
    page.get_by_text("non-numeric values").wait_for()
    page.get_by_text("Now analysing: COMPAS").wait_for()            # the previous data is kept
    no_traceback(page)


def _nav(page, name: str, path: str) -> None:
    """Open a page by its link and wait until its address shows and its script has run."""
    page.get_by_test_id("stSidebarNavItems").get_by_role("link", name=name, exact=True).click()
    page.wait_for_url(lambda url: url.split("?")[0].rstrip("/").endswith(path))
    wait_for_app(page)


def _frame(page) -> tuple[str, str, bool]:
    """What the sidebar shows: the attribute, τ and whether the positive prediction is the benefit."""
    sidebar = page.get_by_test_id("stSidebar")
    attribute = sidebar.get_by_test_id("stSelectbox").first.locator("input").first.input_value()
    threshold = sidebar.get_by_test_id("stSliderThumbValue").first.inner_text()
    return attribute, threshold, sidebar.get_by_role("radio", name="Positive prediction (score ≥ τ)").is_checked()


def test_the_frames_choices_survive_page_switches(page, app_url):
    """Attribute, τ and benefit are drawn once by the app's frame: set on Home, they hold on the audit pages, through
    a page without the frame (Lorenz), and back on Home."""
    page.goto(app_url)
    wait_for_app(page)
    sidebar = page.get_by_test_id("stSidebar")
    choose(page, sidebar.get_by_test_id("stSelectbox").first.locator("input").first, "sex")
    thumb = sidebar.get_by_role("slider").first
    thumb.focus()
    for _ in range(3):                                   # 0.40 → 0.43, one step a key press
        thumb.press("ArrowRight")
    wait_for_app(page)
    sidebar.get_by_text("Positive prediction (score ≥ τ)").click()
    wait_for_app(page)
    chosen = _frame(page)
    assert chosen[0] == "sex" and chosen[1] == "0.43" and chosen[2]
    _nav(page, "Group parity", "/parity")
    page.get_by_text("Benefit = score ≥ 0.43").wait_for()
    assert _frame(page) == chosen
    _nav(page, "Lorenz & PTN", "/lorenz")
    sidebar.get_by_text("Lorenz-63 system", exact=True).wait_for()
    assert sidebar.get_by_role("radio", name="Positive prediction (score ≥ τ)").count() == 0     # no frame here
    _nav(page, "Sample-size significance", "/significance")
    assert _frame(page) == chosen
    _nav(page, "Home", urlparse(app_url).netloc)                 # Home: the bare address
    assert _frame(page) == chosen
    no_traceback(page)
