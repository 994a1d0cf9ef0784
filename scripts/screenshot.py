"""Take README screenshots of the running app with Debian's chromium: `python scripts/screenshot.py URL PAGE OUT`."""
from __future__ import annotations

import sys

from playwright.sync_api import sync_playwright

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"]


def shoot(url: str, out: str, nav_label: str | None = None, width: int = 1500, height: int = 1100) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(url)
        page.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
        if nav_label:
            page.get_by_test_id("stSidebarNavItems").get_by_role("link", name=nav_label).click()
        page.wait_for_selector(".js-plotly-plot", timeout=120_000)
        page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=180_000)
        page.wait_for_timeout(1500)
        page.screenshot(path=out, full_page=False)
        browser.close()


if __name__ == "__main__":
    shoot(sys.argv[1], sys.argv[3], sys.argv[2] if sys.argv[2] != "-" else None)
