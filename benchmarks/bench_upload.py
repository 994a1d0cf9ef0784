"""After a 1M-row upload, the first view of every audit page and one slider change, in Chromium (issue 12).

Run by hand (not a test): ``OMP_NUM_THREADS=1 python benchmarks/bench_upload.py [--rows 1000000]``. Starts the app
on a free port, drives Debian's /usr/bin/chromium through Playwright like tests/browser, uploads a generated CSV
(5 groups; label, score, group) on the home page, confirms the guessed mapping (no text, id or feature column, so the
upload is reduced by DuckDB to counts per group, label and score), then opens every audit page from the sidebar and
times its first view (click → the page's headline drawn and the script finished), and one step of the threshold
slider on the pages that read it. The reference in the same process: pyarrow reading the same CSV (the floor of any
upload) and the engine's reduction of its bytes alone. Targets: first view ≤ 2 s, slider change ≤ 300 ms.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser.conftest import ARGS, CHROMIUM, _free_port, wait_for_app  # noqa: E402
from tests.browser.test_large_upload import AUDIT_PAGES, open_page, upload, write_large_csv  # noqa: E402

# pages whose view depends on the sidebar threshold τ, and a text that shows the new value once redrawn
SLIDER_PAGES = {"Group parity": "Benefit = score ≥ {tau:.2f}", "Sample-size significance": "Benefit = score ≥ {tau:.2f}"}


def start_app() -> tuple[subprocess.Popen, str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1", "--server.port",
         str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": "1"}, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise RuntimeError("streamlit did not start")


def slider_step(page, expect: str) -> float:
    """One step right of the sidebar's threshold slider; seconds until the page shows the new τ and is idle."""
    thumb = page.get_by_test_id("stSidebar").locator('input[type="range"][aria-label="Decision threshold τ"]')
    tau = float(thumb.input_value()) + 0.01
    thumb.focus()
    start = time.perf_counter()
    page.keyboard.press("ArrowRight")
    page.get_by_text(expect.format(tau=tau)).first.wait_for(timeout=60_000)
    wait_for_app(page)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    import pyarrow.csv as pacsv
    from playwright.sync_api import sync_playwright

    from fairviz.core.data import ColumnMapping
    from fairviz.core.engine import Engine

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        path = write_large_csv(Path(tmp) / "large.csv", args.rows)
        print(f"generated {args.rows:,} rows ({path.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - start:.2f} s")
        start = time.perf_counter()
        pacsv.read_csv(path)
        floor = time.perf_counter() - start
        start = time.perf_counter()
        stats = Engine().reduce(path.read_bytes(), ColumnMapping("label", "score", ("group",)), name=path.name)
        reduce_s = time.perf_counter() - start
        print(f"reference: pyarrow read {floor:.2f} s; engine reduction of the bytes {reduce_s:.2f} s "
              f"({reduce_s / floor:.1f}× the read) → {stats.to_dict()}")
        # each audit section's own compute in this process (what a page cannot go below), on what the page reads
        from fairviz.report.audit import SECTIONS, AuditOptions
        pred, options = stats.predictions(), AuditOptions(attribute="group", threshold=0.5)
        for section in SECTIONS:
            if section.name in ("residuals", "calibration", "parity", "significance"):
                start = time.perf_counter()
                section.run(section.given(pred), options)
                print(f"  section {section.name:13s} compute {time.perf_counter() - start:6.2f} s "
                      f"({'table' if section.given(pred) is pred else 'rows'})", flush=True)

        proc, url = start_app()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
                page.set_default_timeout(180_000)
                loaded = upload(page, url, path)
                print(f"upload confirmed → home page redrawn: {loaded:.2f} s ({loaded / floor:.1f}× the read)")
                print(f"{'page':28s} {'first view':>11s} {'slider step':>12s}")
                for nav, expect in AUDIT_PAGES.items():
                    first = open_page(page, nav, expect)
                    slider = "—"
                    if nav in SLIDER_PAGES:
                        slider = f"{1000 * slider_step(page, SLIDER_PAGES[nav]):.0f} ms"
                    print(f"{nav:28s} {first:10.2f}s {slider:>12s}", flush=True)
                for nav, expect in AUDIT_PAGES.items():         # second visit: from the caches
                    print(f"{nav:28s} second view {open_page(page, nav, expect):.2f} s", flush=True)
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
