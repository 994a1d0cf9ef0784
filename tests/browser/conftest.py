"""Browser tests: start the app on a free port and drive Debian's chromium through Playwright.

Never `playwright install`: the browser is /usr/bin/chromium (installed by `make test` when root).
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180_000           # ms: what any wait allows by default (a page's first view on a loaded 2-core machine)
RUN_TIMEOUT = 300_000       # ms: for the app to finish a run
CHROMIUM = "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else shutil.which("chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

SERVER_LOGS: list[Path] = []    # this worker's app server log, shown beside a failed browser test (CI keeps no files)
LOG_TAIL = 6_000                # characters


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test carries the end of the app server's log: a download or a run that never came often
    has its reason only there."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and SERVER_LOGS and SERVER_LOGS[-1].exists():
        text = SERVER_LOGS[-1].read_bytes()[-LOG_TAIL:].decode("utf-8", "replace")
        report.sections.append(("app server log (end)", text))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed")
    port = _free_port()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    # the server's output to a file: a pipe nobody reads fills up (64 kB) and then blocks the server mid-run
    log_path = tmp_path_factory.mktemp("app") / "streamlit.log"
    SERVER_LOGS.append(log_path)
    log = open(log_path, "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
         "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + RUN_TIMEOUT / 1000
        while True:                                 # until the server answers its health check (or has exited)
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=5).read() == b"ok":
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("streamlit did not start") from None
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def browser():
    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


# The app's run state, read from its WebSocket (installed in every page before the app's own script): a rerun the
# page has asked for (BackMsg field 11) is pending until the server starts a run (ForwardMsg new_session, field 4,
# or session_status_changed, field 9, saying it runs); a run lasts until the server says it finished (script_finished,
# field 6, other than "finished early for a rerun", 2) or stopped running; the page is not idle before its first run
# finished. Streamlit's own "Running…" widget shows only after a run has lasted 500 ms, so it cannot tell a run that
# has just been asked for.
WATCH_RUNS = """
(() => {
  if (window.__fvApp) return;
  const app = window.__fvApp = {pending: false, running: false, finished: false};
  const varint = (b, i) => { let v = 0, s = 0, x; do { x = b[i++]; v += (x & 127) * 2 ** s; s += 7; } while (x & 128); return [v, i]; };
  const fields = (b) => {
    const out = [];
    let i = 0;
    while (i < b.length) {
      let key; [key, i] = varint(b, i);
      const field = Math.floor(key / 8), type = key & 7;
      if (type === 0) { let v; [v, i] = varint(b, i); out.push([field, v]); }
      else if (type === 2) { let n; [n, i] = varint(b, i); out.push([field, b.subarray(i, i + n)]); i += n; }
      else if (type === 1) i += 8; else if (type === 5) i += 4; else break;
    }
    return out;
  };
  const bytes = (d) => d instanceof ArrayBuffer ? new Uint8Array(d)
    : ArrayBuffer.isView(d) ? new Uint8Array(d.buffer, d.byteOffset, d.byteLength) : null;
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.binaryType = "arraybuffer";
      this.addEventListener("message", (event) => {
        const b = bytes(event.data);
        if (!b) return;
        for (const [field, value] of fields(b)) {
          if (field === 4) { app.pending = false; app.running = true; }
          else if (field === 9) {
            if (fields(value).some(([f, v]) => f === 2 && v === 1)) { app.pending = false; app.running = true; }
            else app.running = false;
          }
          else if (field === 6 && value !== 2) { app.running = false; app.finished = true; }
        }
      });
    }
    send(data) {
      const b = bytes(data);
      if (b && fields(b).some(([field]) => field === 11)) app.pending = true;
      return super.send(data);
    }
  };
})();
"""
IDLE = """() => { const app = window.__fvApp;
  return !!document.querySelector('[data-testid="stApp"]') && (!app || (app.finished && !app.pending && !app.running))
    && !document.querySelector('[data-testid="stStatusWidget"]') && !document.querySelector('[data-stale="true"]'); }"""


def new_page(browser, viewport: dict, timeout: int = TIMEOUT):
    """A page in a new context that watches the app's runs (``wait_for_app``); every wait allows ``timeout`` ms."""
    from playwright.sync_api import expect
    expect.set_options(timeout=timeout)             # expect(...) waits as long as any other wait (its default: 5 s)
    context = browser.new_context(viewport=viewport)
    context.add_init_script(WATCH_RUNS)
    pg = context.new_page()
    pg.set_default_timeout(timeout)
    return pg


@pytest.fixture
def page(browser, app_url):
    pg = new_page(browser, {"width": 1400, "height": 1000})
    yield pg
    pg.context.close()


def wait_for_app(page) -> None:
    """Wait until the app is idle: no rerun asked for and not yet started, no run going, nothing stale on screen."""
    page.wait_for_function(IDLE, timeout=RUN_TIMEOUT)


# every chart drawn at its place's width (Streamlit's Plotly element lays the figure out again once it is attached)
CHARTS_DRAWN = """() => [...document.querySelectorAll('.js-plotly-plot')].every(gd => {
  const box = gd.getBoundingClientRect();
  if (box.width === 0 || box.height === 0) return true;                // hidden (a closed tab or expander)
  return !!gd._fullLayout && !!gd.querySelector('.main-svg') && Math.abs(gd._fullLayout.width - box.width) < 2; })"""


def wait_for_charts(page) -> None:
    """Wait until the app is idle and every visible chart is laid out at its final size."""
    wait_for_app(page)
    page.wait_for_function(CHARTS_DRAWN)


# the option in the open list of ``box`` (a combobox), or the list closed (a rerun redrew the box)
OPTION_OR_CLOSED = """([box, want, exact]) => {
  if (!box.isConnected || box.getAttribute('aria-expanded') !== 'true') return true;
  return [...document.querySelectorAll('[role="option"]')]
    .some(o => exact ? o.textContent.trim() === want : o.textContent.includes(want)); }"""


def choose(page, box, option: str, exact: bool = True, attempts: int = 5) -> None:
    """Pick ``option`` in the selectbox whose input is ``box`` and wait for the run it starts. The list is opened once
    the app is idle; a rerun that lands meanwhile redraws the box and closes its list, so it is opened again. Done
    when the box shows the option."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import expect
    for _ in range(attempts):
        wait_for_app(page)
        if _shows(box, option, exact):
            return
        if box.get_attribute("aria-expanded") != "true":
            box.click()
        page.wait_for_function(OPTION_OR_CLOSED, arg=[box.element_handle(), option, exact])
        shown = page.get_by_role("option", name=option, exact=exact).element_handles()     # now, without waiting
        if shown:
            try:
                shown[0].click()                        # a handle: fails at once when a rerun removed the option
            except PlaywrightError:
                continue
    wait_for_app(page)
    if exact:
        expect(box).to_have_value(option)
    else:
        expect(box).to_have_value(re.compile(re.escape(option)))


def _shows(box, option: str, exact: bool) -> bool:
    value = box.input_value()
    return value == option if exact else option in value


def no_traceback(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, "a traceback is shown"
