"""A 1M-row upload in Chromium: the home page reduces it on the engine (counts per group, label and score), and every
audit page then opens on it and shows its groups and headline (issue 12)."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import expect

from .conftest import no_traceback, wait_for_app

GROUPS = ("g1", "g2", "g3", "g4", "g5")
# page (sidebar link) → what its first view must show (its figures also draw every uploaded group: see GROUPS)
AUDIT_PAGES = {
    "Residual distribution": ("Sorted residuals by group", "against the reference"),
    "Calibration": ("Smooth ECE, all rows", "Worst group: g"),
    "Group parity": ("Objective Fairness Index", "Benefit = score ≥"),
    "Sample-size significance": ("group × metric scores differ", "differ from all other rows"),
    "Evaluation reweighting": ("Accuracy (as is)", "With 5 groups"),
}
# the groups its figures draw by default (calibration shows the four largest testable groups at first)
DRAWS_GROUPS = {"Residual distribution": GROUPS, "Calibration": GROUPS[:4], "Group parity": GROUPS,
                "Sample-size significance": GROUPS}


def write_large_csv(path: Path, rows: int = 1_000_000, seed: int = 0) -> Path:
    """``rows`` predictions × 5 groups (label, score, group), written by pyarrow in well under a second per 1M rows.
    Scores are beta draws rounded to 4 decimals and shifted per group, labels Bernoulli(score before the shift)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    rng = np.random.default_rng(seed)
    codes = rng.choice(len(GROUPS), rows, p=[.4, .25, .15, .12, .08])
    p = rng.beta(0.7, 1.3, rows)
    label = (rng.random(rows) < p).astype(np.int8)
    score = np.clip(p + np.array([0.0, 0.05, -0.05, 0.1, 0.0])[codes], 0, 1).round(4)
    group = pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(GROUPS)).cast(pa.string())
    pacsv.write_csv(pa.table({"label": label, "score": score, "group": group}), path)
    return path


def upload(page, app_url: str, path: Path) -> float:
    """Upload ``path`` on the home page and confirm the guessed mapping; returns the seconds until it is loaded."""
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_text("Upload a file").click()
    page.locator('input[type="file"]').set_input_files(str(path))
    page.get_by_text(f"{path.name}:").first.wait_for()
    wait_for_app(page)
    start = time.perf_counter()
    page.get_by_role("button", name="Use these columns").click()
    page.get_by_text(f"Now analysing: {path.name}").wait_for(timeout=180_000)
    wait_for_app(page)
    return time.perf_counter() - start


def open_page(page, nav: str, headline: tuple[str, str], timeout: float = 180_000) -> float:
    """Click a sidebar link and wait for the page's headline; returns the seconds of its first view."""
    link = page.get_by_test_id("stSidebarNavItems").get_by_role("link", name=nav, exact=True)
    more = page.get_by_test_id("stSidebarNavViewButton")           # a long menu is folded: "View more"
    if link.count() == 0 and more.count() and "more" in more.inner_text().lower():
        more.click()
    start = time.perf_counter()
    link.click()
    for text in headline:
        page.get_by_text(text).first.wait_for(timeout=timeout)
    wait_for_app(page)
    return time.perf_counter() - start


@pytest.mark.slow
def test_a_million_row_upload_opens_every_audit_page(page, app_url, tmp_path):
    path = write_large_csv(tmp_path / "large.csv")
    upload(page, app_url, path)
    no_traceback(page)
    page.get_by_text("reduced to").first.wait_for()            # the engine's path, said on screen
    rows = page.get_by_test_id("stMetric").filter(has_text="Rows")
    assert "1,000,000" in rows.inner_text()
    for nav, headline in AUDIT_PAGES.items():
        open_page(page, nav, headline)
        if nav in DRAWS_GROUPS:                                  # legends and axes of its figures (SVG text)
            for name in DRAWS_GROUPS[nav]:
                expect(page.locator(".js-plotly-plot").get_by_text(name).first).to_be_attached(timeout=180_000)
        no_traceback(page)
        assert page.get_by_text("Something went wrong").count() == 0, nav
        assert page.get_by_text("large.csv").count() >= 1, nav          # the sidebar's data badge: still the upload
        assert "1,000,000 rows" in page.get_by_test_id("stSidebar").inner_text(), nav
