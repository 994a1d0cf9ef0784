"""The audit report as a PDF: headless Chromium prints the self-contained HTML report.

Why this route: the HTML report draws its charts with plotly.js, so only a browser engine renders them as they look
on screen; HTML-to-PDF converters without JavaScript (WeasyPrint, wkhtmltopdf's old WebKit) print empty charts, and
exporting each figure as an image first (kaleido) would need its own browser build and a second layout. Debian's
``chromium`` is already what the browser tests drive; nothing is downloaded. The Summary comes first because the
HTML report starts with it.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
TIMEOUT_S = 120
# Closed network, no profile, no GPU: the flags a headless print needs on a server (no calls home).
_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
          "--no-pdf-header-footer", "--run-all-compositor-stages-before-draw", "--virtual-time-budget=15000")


class PdfUnavailable(RuntimeError):
    """No Chromium on this machine (or it failed): the HTML report is still there."""


def chromium_path() -> str | None:
    configured = os.environ.get("FAIRVIZ_CHROMIUM")
    if configured:
        return configured if Path(configured).is_file() else None
    return next((p for p in map(shutil.which, CHROMIUM_CANDIDATES) if p), None)


def html_to_pdf(html: str, timeout_s: float = TIMEOUT_S) -> bytes:
    """Print ``html`` (a self-contained page: no network is needed or allowed) to PDF bytes."""
    browser = chromium_path()
    if browser is None:
        raise PdfUnavailable("a PDF needs Chromium on the server (Debian's 'chromium' package); "
                             "the HTML report has the same content")
    with tempfile.TemporaryDirectory(prefix="fairviz-pdf-") as folder:
        page, out = Path(folder) / "report.html", Path(folder) / "report.pdf"
        page.write_text(html, encoding="utf-8")
        command = [browser, *_FLAGS, f"--user-data-dir={folder}/profile", f"--print-to-pdf={out}", page.as_uri()]
        try:
            subprocess.run(command, check=True, timeout=timeout_s, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as err:
            raise PdfUnavailable(f"Chromium could not print the report ({type(err).__name__})") from err
        if not out.is_file() or out.stat().st_size == 0:
            raise PdfUnavailable("Chromium printed nothing")
        return out.read_bytes()
