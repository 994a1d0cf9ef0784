"""Load test: N concurrent visitors on ONE served app (``streamlit run app.py`` on 127.0.0.1 only).

Each visitor is a headless Chromium context (Debian's /usr/bin/chromium through Playwright; never `playwright
install`) that opens the home page and then each audit page by URL, waiting until Streamlit has finished
running the page. The server's resident memory (its process and children, via psutil) is sampled every 0.2 s.
Prints per-page times (median and max over visitors), the peak RSS of the server, and the time the first visitor
took alone (the reference: how much slower is a page when N visitors ask for it at once?).

    OMP_NUM_THREADS=1 python benchmarks/bench_load.py                 # 20 visitors, the audit pages
    OMP_NUM_THREADS=1 python benchmarks/bench_load.py --sessions 5 --pages residuals parity

Bounded on purpose: at most 40 sessions, a time limit per page, the server on 127.0.0.1 only.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAGES = {"home": "", "residuals": "residuals", "calibration": "calibration", "parity": "parity",
         "significance": "significance"}
DONE = ("() => document.querySelector('[data-testid=\"stApp\"]') && "
        "!document.querySelector('[data-testid=\"stStatusWidget\"]') && "
        "!document.querySelector('[data-stale=\"true\"]') && "
        "document.querySelector('h1')")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RssSampler(threading.Thread):
    """Peak resident memory of a process and its children."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.proc = psutil.Process(pid)
        self.peak = 0
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                procs = [self.proc, *self.proc.children(recursive=True)]
                self.peak = max(self.peak, sum(p.memory_info().rss for p in procs))
            except psutil.Error:
                pass
            time.sleep(0.2)


def start_server(port: int) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
         "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(240):
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1).read() == b"ok":
                return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("streamlit did not start")


async def visitor(browser, url: str, pages: list[str], timeout_s: float, delay: float = 0.0) -> dict:
    await asyncio.sleep(delay)              # visitors arrive within a few seconds of each other, not in one tick
    context = await browser.new_context(viewport={"width": 1300, "height": 900})
    page = await context.new_page()
    times = {}
    try:
        for name in pages:
            start = time.perf_counter()
            await page.goto(f"{url}/{PAGES[name]}", timeout=timeout_s * 1000, wait_until="domcontentloaded")
            await page.wait_for_function(DONE, timeout=timeout_s * 1000)
            if await page.locator('[data-testid="stException"]').count():
                times[name] = float("nan")
                continue
            times[name] = time.perf_counter() - start
            times[f"{name}:title"] = await page.locator("h1").first.inner_text()
    finally:
        await context.close()
    return times


async def drive(url: str, sessions: int, pages: list[str], timeout_s: float) -> tuple[dict, list[dict]]:
    from playwright.async_api import async_playwright
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            alone = await visitor(browser, url, pages, timeout_s)          # warms the shared caches too
            crowd = await asyncio.gather(*(visitor(browser, url, pages, timeout_s, 0.25 * k) for k in range(sessions)),
                                         return_exceptions=True)
        finally:
            await browser.close()
    return alone, crowd


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--pages", nargs="+", default=list(PAGES), choices=list(PAGES))
    parser.add_argument("--timeout", type=float, default=300, help="seconds allowed per page load")
    args = parser.parse_args()
    sessions = max(1, min(args.sessions, 40))
    port = _free_port()
    server = start_server(port)
    sampler = RssSampler(server.pid)
    sampler.start()
    base = sampler.proc.memory_info().rss
    try:
        t0 = time.perf_counter()
        alone, crowd = asyncio.run(drive(f"http://127.0.0.1:{port}", sessions, args.pages, args.timeout))
        wall = time.perf_counter() - t0
    finally:
        sampler.stop.set()
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    failed = [c for c in crowd if isinstance(c, BaseException)]
    ok = [c for c in crowd if not isinstance(c, BaseException)]
    print(f"{sessions} concurrent sessions on one server (127.0.0.1), pages {', '.join(args.pages)}; "
          f"{len(failed)} sessions failed" + (f" ({type(failed[0]).__name__}: {str(failed[0])[:120]})" if failed else ""))
    print("titles seen alone: " + "; ".join(alone.get(f"{n}:title", "?") for n in args.pages))
    print(f"{'page':<14}{'alone (s)':>10}{'median (s)':>12}{'max (s)':>10}{'ratio':>8}")
    for name in args.pages:
        values = [c[name] for c in ok if name in c and c[name] == c[name]]
        if not values:
            print(f"{name:<14}{alone.get(name, float('nan')):>10.2f}{'—':>12}{'—':>10}")
            continue
        med = statistics.median(values)
        print(f"{name:<14}{alone[name]:>10.2f}{med:>12.2f}{max(values):>10.2f}{med / alone[name]:>7.1f}×")
    print(f"server RSS: {base / 2**20:,.0f} MB at start, peak {sampler.peak / 2**20:,.0f} MB; wall {wall:.0f} s; "
          f"{psutil.cpu_count()} CPU cores")


if __name__ == "__main__":
    main()
