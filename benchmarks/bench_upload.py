"""After a 1M-row upload, the first view of every audit page and one slider change, in Chromium (issue 12;
Home's Summary at a τ change: issue 23).

Run by hand (not a test): ``OMP_NUM_THREADS=1 python benchmarks/bench_upload.py [--rows 1000000] [--no-sections]``.
Starts the app on a free port, drives Debian's /usr/bin/chromium through Playwright like tests/browser, uploads a
generated CSV (5 groups; label, score, group) on the home page, confirms the guessed mapping (no text, id or feature
column, so the upload is reduced by DuckDB to counts per group, label and score), then opens every audit page from
the sidebar and times its first view, two steps of the sidebar threshold τ on the pages that read it (on the
Residual page after opening its threshold tab: only the open tab runs), and a second view of every page. The
reference in the same process: pyarrow reading the same CSV (the floor of any upload), the engine's reduction of its
bytes alone and (unless --no-sections) each audit section's own compute. Targets: first view ≤ 2 s, slider ≤ 300 ms.

A step ends when the page has received the server's "script finished" message, every visible chart has drawn its
SVG layers and the page is idle (two frames, then ``requestIdleCallback``). It is split in two on the browser's own
clock: *server* = click → "script finished" handled by the page (the script run, the transfer and the page's handling
of the deltas before it), *browser* = the drawing after it. An init script timestamps every websocket message
(``performance.now()``) and reads field 6 (script_finished) of the small ForwardMsg protobufs. Each step also reports
the messages received and the CPU time the server process and every Chromium process spent (wall times on a shared
machine run 2–4× the CPU time).

τ steps only: ``--pages "Home,Group parity"`` (default with ``--home-only``: Home), ``--steps N``, each page's steps
summed up in one line (wall range and median, how many within the target, CPU); ``--floor`` times
τ steps on a two-line app (a sidebar slider and one line) on the same server settings: Streamlit's own floor.
Where a step's time goes: ``--profile DIR`` profiles every script run in the server (``profiled_app.py``: cProfile
on the script thread's CPU clock; ``FAIRVIZ_PROFILE_TIMES_ONLY=1``: timed only) and prints the steps' merged profile
per page; ``BENCH_TRACE=1`` prints the renderer main thread's time per trace event (script, style, layout, paint),
``BENCH_JS_PROFILE=1`` the page's JavaScript self time per script and function, ``BENCH_SERVER_LOG=FILE`` keeps
the server's log.
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

import psutil

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser.conftest import ARGS, CHROMIUM, _free_port, wait_for_app  # noqa: E402
from tests.browser.test_large_upload import AUDIT_PAGES, upload, write_large_csv  # noqa: E402

# pages whose view depends on the sidebar threshold τ, and a text that shows the new value once redrawn (None:
# the page shows no τ; it reads τ through the Summary's top group, the group its readings open on)
SLIDER_PAGES = {"Residual distribution": "Rates at threshold τ = {tau:.2f}", "Calibration": None,
                "Group parity": "Benefit = score ≥ {tau:.2f}", "Sample-size significance": "Benefit = score ≥ {tau:.2f}"}
HOME = "Home"
HOME_SLIDER = "group at τ = {tau:.2f}"                  # the Summary's heading on Home
# the tab that shows τ's effect, opened (a timed step) before the slider moves; only the open tab runs
SLIDER_TAB = {"Residual distribution": "Threshold view (Thm 6.1)"}
FIRST_VIEW_TARGET, SLIDER_TARGET = 2.0, 0.300          # seconds (issue 12)

# every websocket message the page receives: its time on the page's clock and size; a small message is read as a
# protobuf ForwardMsg far enough to see its field 6 (script_finished: 0 = finished, 3 = fragment run finished)
WATCH_SOCKET = """
(() => {
  const Native = window.WebSocket;
  window.__fvMessages = [];
  window.__fvFinished = null;
  const varint = (b, i) => { let v = 0, s = 0, x; do { x = b[i++]; v += (x & 127) * 2 ** s; s += 7; } while (x & 128); return [v, i]; };
  const finished = (b) => {           // the value of top-level field 6 (varint), or -1
    let i = 0;
    while (i < b.length) {
      let key; [key, i] = varint(b, i);
      const field = Math.floor(key / 8), type = key & 7;
      if (type === 0) { let v; [v, i] = varint(b, i); if (field === 6) return v; }
      else if (type === 2) { let n; [n, i] = varint(b, i); i += n; }
      else if (type === 1) i += 8; else if (type === 5) i += 4; else return -1;
    }
    return -1;
  };
  window.__fvLong = [];                // long tasks (> 50 ms on the main thread), printed with BENCH_DEBUG=1
  new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__fvLong.push([e.startTime, e.duration]); }).observe({type: "longtask", buffered: true});
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.binaryType = "arraybuffer";
      this.addEventListener("message", (event) => {
        const t = performance.now(), data = event.data;
        const size = data.byteLength ?? data.length ?? 0;
        const record = {t, size, finished: -1};
        if (size < 256 && data instanceof ArrayBuffer) record.finished = finished(new Uint8Array(data));
        window.__fvMessages.push(record);
        if (record.finished === 0 || record.finished === 3) window.__fvFinished = t;
      });
    }
  };
})();
"""
# the step is over: the server said "script finished" after it began, and every visible chart is drawn (Plotly has
# built its SVG layers in each visible chart element)
DONE = """() => window.__fvFinished !== null && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
  .filter(e => e.offsetParent !== null).every(e => e.querySelector('.main-svg'))"""
# then the page is idle: two frames painted and the main thread free (Plotly draws WebGL traces after its SVG layers;
# ending at the SVG would hand that drawing to the next step, which then waits for it)
IDLE = """() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(
  () => requestIdleCallback(() => r(performance.now()), {timeout: 10000}))))"""


# Streamlit's own floor for a τ step: an app of a sidebar slider and one line that shows its value, run by the same
# server settings (the repository's .streamlit/config.toml) and timed the same way (--floor)
FLOOR_APP = """import streamlit as st
tau = st.sidebar.slider("Decision threshold τ", 0.0, 1.0, 0.5, step=0.01)
st.markdown(f"group at τ = {tau:.2f}")
"""


def start_app(profile: Path | None = None, script: str = "app.py") -> tuple[subprocess.Popen, str]:
    """The app on a free port; with ``profile``, every script run is profiled into that folder (profiled_app.py)."""
    port = _free_port()
    runner = [str(ROOT / "benchmarks" / "profiled_app.py")] if profile else ["-m", "streamlit", "run"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"} | ({"FAIRVIZ_PROFILE_DIR": str(profile)} if profile else {})
    proc = subprocess.Popen(
        [sys.executable, *runner, script, "--server.address", "127.0.0.1", "--server.port",
         str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stderr=subprocess.STDOUT,
        stdout=open(os.environ["BENCH_SERVER_LOG"], "w") if os.environ.get("BENCH_SERVER_LOG") else subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise RuntimeError("streamlit did not start")


def cpu_seconds(processes) -> float:
    """User + system CPU time of these processes (those that ended meanwhile are skipped)."""
    total = 0.0
    for process in processes:
        try:
            times = process.cpu_times()
            total += times.user + times.system
        except psutil.Error:
            pass
    return total


class Meter:
    """CPU time beside wall time: the app server's process, and every Chromium process this benchmark started (the
    browser, its renderer and GPU processes)."""

    def __init__(self, server: subprocess.Popen):
        self.server = psutil.Process(server.pid)

    def browser(self) -> list:
        return [c for c in psutil.Process().children(recursive=True) if "chrom" in c.name().lower()]

    def read(self) -> tuple[float, float]:
        return cpu_seconds([self.server]), cpu_seconds(self.browser())


class Step:
    """One timed step on the page's clock: total (action → script finished, every visible chart drawn, the page
    idle), its server part (action → the "script finished" message arrives) and browser part (the rest: drawing);
    with a ``Meter``, the CPU time the server and Chromium spent meanwhile."""

    meter: Meter | None = None        # set once the app is up
    profile: Path | None = None       # bench_upload.py --profile: the folder of the script runs' profiles

    def __init__(self, page):
        self.page = page
        self.cpu = None

    def __enter__(self):
        self.runs = _profiled_runs(self.profile)
        self.cpu_start = self.meter.read() if self.meter else None
        self.start = self.page.evaluate(
            "() => { window.__fvMessages = []; window.__fvFinished = null; return performance.now(); }")
        return self

    def __exit__(self, *exc):
        if exc[0] is not None:
            return False
        self.page.wait_for_function(DONE, timeout=180_000)
        end = self.page.evaluate(IDLE)
        finished, messages = self.page.evaluate("() => [window.__fvFinished, window.__fvMessages]")
        self.total, self.server = (end - self.start) / 1000, (finished - self.start) / 1000
        self.browser = self.total - self.server
        self.received = sum(m["size"] for m in messages)
        self.messages = len(messages)
        if self.meter:
            time.sleep(0.05)           # the server's last sends after "script finished"
            self.cpu = tuple(b - a for a, b in zip(self.cpu_start, self.meter.read()))
        self.script_runs = _profiled_runs(self.profile)[len(self.runs):]
        if os.environ.get("BENCH_DEBUG"):
            longs = self.page.evaluate("() => window.__fvLong")
            print("long tasks", [(round(a - self.start), round(d)) for a, d in longs if a >= self.start - 50])
            print([(round(m["t"] - self.start), m["size"], m["finished"]) for m in messages if m["size"] > 2000
                   or m["finished"] >= 0])
        return False

    def cells(self, target: float) -> str:
        mark = "ok" if self.total <= target else "OVER"
        cpu = f"; CPU server {self.cpu[0] * 1000:4.0f} + Chromium {self.cpu[1] * 1000:4.0f} ms" if self.cpu else ""
        runs = "".join(f"; script run {wall:.0f} ms wall, {cpu:.0f} ms CPU" for _, wall, cpu in self.script_runs)
        return (f"{self.total * 1000:7.0f} ms {mark:4s} (server {self.server * 1000:5.0f} + browser "
                f"{self.browser * 1000:5.0f}; {self.messages} messages, {self.received / 1e3:.0f} kB{cpu}{runs})")


def summary(steps: list[Step], target: float) -> str:
    """Several steps in one line: wall range and median, how many within the target, CPU ranges, messages."""
    import statistics
    walls = [s.total * 1000 for s in steps]
    line = (f"{min(walls):.0f}–{max(walls):.0f} ms, median {statistics.median(walls):.0f} ms, "
            f"{sum(w <= target * 1000 for w in walls)} of {len(walls)} ≤ {target * 1000:.0f} ms")
    if all(s.cpu for s in steps):
        server, browser = ([s.cpu[k] * 1000 for s in steps] for k in (0, 1))
        line += (f"; CPU server {min(server):.0f}–{max(server):.0f} ms, Chromium {min(browser):.0f}–"
                 f"{max(browser):.0f} ms")
    fewest, most = min(s.messages for s in steps), max(s.messages for s in steps)
    return line + (f"; {fewest}–{most} messages" if most > fewest else f"; {fewest} messages")


def _profiled_runs(folder: Path | None) -> list[tuple[int, float, float]]:
    """The script runs profiled so far: (number, wall ms, script thread's CPU ms)."""
    if folder is None or not (folder / "runs.txt").exists():
        return []
    return [(int(n), float(w), float(c)) for n, w, c in
            (line.split() for line in (folder / "runs.txt").read_text().splitlines())]


def print_profile(folder: Path, runs, top: int = 25) -> None:
    """The script runs' profiles merged, by cumulative time (what one τ step's run spends its time in)."""
    import pstats
    stats = pstats.Stats(*(str(folder / f"run-{n}.prof") for n, _, _ in runs))
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


def timed_open(page, nav: str, headline) -> Step:
    link = page.get_by_test_id("stSidebarNavItems").get_by_role("link", name=nav, exact=True)
    more = page.get_by_test_id("stSidebarNavViewButton")
    if link.count() == 0 and more.count() and "more" in more.inner_text().lower():
        more.click()
    with Step(page) as step:
        link.click()
        for text in headline:
            page.get_by_text(text).first.wait_for(timeout=180_000)
        wait_for_app(page)
    return step


def slider_step(page, expect: str) -> Step:
    """One step right of the sidebar's threshold slider: until the page shows the new τ, is idle and drawn."""
    thumb = _tau_thumb(page)
    tau = float(thumb.input_value()) + 0.01
    thumb.focus()
    with Step(page) as step:
        page.keyboard.press("ArrowRight")
        if expect is not None:
            page.get_by_text(expect.format(tau=tau)).first.wait_for(state="attached", timeout=60_000)
        wait_for_app(page)
    return step


def tau_steps(page, pages: list[str], steps: int, profile: Path | None) -> None:
    """``steps`` τ steps on each page (Home: the Summary), each page opened first (untimed, with its τ tab open);
    with ``profile``, the steps' script runs' merged profile after each page."""
    for nav in pages:
        if nav == HOME:
            page.get_by_test_id("stSidebarNavItems").get_by_role("link", name=HOME, exact=True).click()
            page.get_by_text(HOME_SLIDER.format(tau=float(_tau_thumb(page).input_value()))).first.wait_for()
            wait_for_app(page)
        else:
            timed_open(page, nav, AUDIT_PAGES[nav])
            if nav in SLIDER_TAB:
                page.get_by_role("tab", name=SLIDER_TAB[nav]).click()
                wait_for_app(page)
        runs = []
        js = JsProfile(page) if os.environ.get("BENCH_JS_PROFILE") else None
        trace = os.environ.get("BENCH_TRACE")
        if trace:
            page.context.browser.start_tracing(page=page, categories=["devtools.timeline", "v8.execute", "blink"])
        timed = []
        for k in range(steps):
            step = slider_step(page, HOME_SLIDER if nav == HOME else SLIDER_PAGES[nav])
            runs += step.script_runs
            timed.append(step)
            print(f"{nav:26s} τ step #{k + 1}   {step.cells(SLIDER_TARGET)}", flush=True)
        print(f"{nav:26s} τ steps     {summary(timed, SLIDER_TARGET)}", flush=True)
        if js:
            js.report(f"{nav}: {steps} τ steps")
        if trace:
            print_trace(page.context.browser.stop_tracing(), f"{nav}: {steps} τ steps")
        if profile and runs and os.environ.get("FAIRVIZ_PROFILE_TIMES_ONLY") != "1":
            print(f"--- {nav}: the {len(runs)} τ steps' script runs, merged")
            print_profile(profile, runs)


def streamlit_floor(steps: int) -> None:
    """τ steps on FLOOR_APP: what Streamlit's rerun, transfer and redraw cost before any page's work."""
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "floor_app.py"
        script.write_text(FLOOR_APP)
        proc, url = start_app(script=str(script))
        Step.meter = Meter(proc)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                context.add_init_script(WATCH_SOCKET)
                page = context.new_page()
                page.goto(url)
                wait_for_app(page)
                timed = [slider_step(page, HOME_SLIDER) for _ in range(steps)]
                for k, step in enumerate(timed):
                    print(f"{'floor (two-line app)':26s} τ step #{k + 1}   {step.cells(SLIDER_TARGET)}", flush=True)
                print(f"{'floor (two-line app)':26s} τ steps     {summary(timed, SLIDER_TARGET)}", flush=True)
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)


class JsProfile:
    """BENCH_JS_PROFILE=1: the page's JavaScript CPU profile over the τ steps (Chrome DevTools Protocol), printed as
    self time per function and per script, to see what the browser part of a step spends its time on."""

    def __init__(self, page):
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Profiler.enable")
        self.cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        self.cdp.send("Profiler.start")

    def report(self, title: str, top: int = 30) -> None:
        from collections import Counter
        profile = self.cdp.send("Profiler.stop")["profile"]
        nodes = {n["id"]: n for n in profile["nodes"]}
        by_function, by_script = Counter(), Counter()
        for sample, delta in zip(profile["samples"], profile["timeDeltas"][1:] + [0]):
            frame = nodes[sample]["callFrame"]
            name = frame["functionName"] or "(anonymous)"
            script = frame["url"].rsplit("/", 1)[-1] or "-"
            by_function[f"{name} {script}:{frame['lineNumber']}"] += delta / 1000
            by_script[script] += delta / 1000
        print(f"--- JavaScript self time, {title} (ms)")
        for name, ms in by_script.most_common(12):
            print(f"  {ms:8.1f}  {name}")
        for name, ms in by_function.most_common(top):
            print(f"  {ms:8.1f}  {name}")


def print_trace(data: bytes, title: str, top: int = 25) -> None:
    """BENCH_TRACE=1: the renderer's main-thread time per trace event (self time: style, layout, paint, scripts)."""
    import json
    from collections import Counter, defaultdict
    events = json.loads(data)["traceEvents"]
    main = {(e["pid"], e["tid"]) for e in events if e.get("name") == "thread_name"
            and e.get("args", {}).get("name") == "CrRendererMain"}
    spans = defaultdict(list)
    for e in events:
        if (e.get("pid"), e.get("tid")) in main and e.get("ph") == "X" and "dur" in e:
            spans[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e["name"]))
    self_time = Counter()
    for thread in spans.values():             # self time: a span's duration less its direct children's
        thread.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for start, end, name in thread:
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack:
                self_time[stack[-1][2]] -= min(end, stack[-1][1]) - start
            self_time[name] += end - start
            stack.append((start, end, name))
    print(f"--- renderer main thread, self time per event, {title} (ms)")
    for name, us in self_time.most_common(top):
        print(f"  {us / 1000:8.1f}  {name}")


def _tau_thumb(page):
    return page.get_by_test_id("stSidebar").locator('input[type="range"][aria-label="Decision threshold τ"]')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--no-sections", action="store_true", help="skip timing each section's compute in-process")
    parser.add_argument("--home-only", action="store_true", help="the upload and Home's τ steps only (the Summary)")
    parser.add_argument("--pages", help="only τ steps, on these pages (comma separated sidebar names, 'Home' for "
                                        "Home; default: every page that reads τ): no first and second views")
    parser.add_argument("--steps", type=int, default=None, help="τ steps per page (default 2; 4 with --home-only)")
    parser.add_argument("--floor", action="store_true", help="only Streamlit's floor: τ steps on a two-line app "
                                                                 "(a sidebar slider and the line showing its value)")
    parser.add_argument("--profile", type=Path, help="profile every script run into this folder and print the "
                                                     "τ steps' merged profile per page")
    args = parser.parse_args()
    if args.home_only:
        args.pages = HOME
    pages = None if args.pages is None else [name.strip() for name in args.pages.split(",") if name.strip()]
    unknown = [name for name in pages or () if name != HOME and name not in SLIDER_PAGES]
    if unknown:
        parser.error(f"no τ steps on {unknown}: pick from {[HOME, *SLIDER_PAGES]}")
    steps = args.steps or (4 if args.home_only else 2)
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
        for old in [*args.profile.glob("run-*.prof"), args.profile / "runs.txt"]:
            old.unlink(missing_ok=True)
    import pyarrow.csv as pacsv
    from playwright.sync_api import sync_playwright

    from fairviz.data import ColumnMapping
    from fairviz.data.engine import Engine

    if args.floor:
        return streamlit_floor(steps)
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
        from fairviz.report.plan import AuditParams, sections_for
        pred, options = stats.predictions(), AuditParams(attribute="group", threshold=0.5)
        for section in () if args.no_sections else sections_for("binary"):
            if section.name in ("residuals", "calibration", "parity", "significance"):
                start = time.perf_counter()
                section.run(section.given(pred), options)
                print(f"  section {section.name:13s} compute {time.perf_counter() - start:6.2f} s "
                      f"({'table' if section.given(pred) is pred else 'rows'})", flush=True)

        proc, url = start_app(args.profile)
        Step.meter, Step.profile = Meter(proc), args.profile
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                context.add_init_script(WATCH_SOCKET)
                page = context.new_page()
                page.set_default_timeout(180_000)
                loaded = upload(page, url, path)
                print(f"upload confirmed → home page redrawn: {loaded:.2f} s ({loaded / floor:.1f}× the read)")
                print(f"targets: first view ≤ {FIRST_VIEW_TARGET * 1000:.0f} ms, slider step ≤ "
                      f"{SLIDER_TARGET * 1000:.0f} ms (total = server + browser, on the page's clock)")
                if pages is not None:
                    tau_steps(page, pages, steps, args.profile)
                    browser.close()
                    return
                tau_steps(page, [HOME], steps, args.profile)
                for nav, expect in AUDIT_PAGES.items():
                    first = timed_open(page, nav, expect)
                    print(f"{nav:26s} first view  {first.cells(FIRST_VIEW_TARGET)}", flush=True)
                    if nav in SLIDER_TAB:
                        with Step(page) as step:
                            page.get_by_role("tab", name=SLIDER_TAB[nav]).click()
                        print(f"{nav:26s} open tab    {step.cells(FIRST_VIEW_TARGET)}", flush=True)
                    if nav in SLIDER_PAGES:
                        for k in range(steps):
                            step = slider_step(page, SLIDER_PAGES[nav])
                            print(f"{nav:26s} slider #{k + 1}   {step.cells(SLIDER_TARGET)}", flush=True)
                for nav, expect in AUDIT_PAGES.items():         # second visit: from the caches
                    print(f"{nav:26s} second view {timed_open(page, nav, expect).cells(FIRST_VIEW_TARGET)}",
                          flush=True)
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
