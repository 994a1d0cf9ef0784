"""Load test: N concurrent visitors on ONE served app (``streamlit run app.py`` on 127.0.0.1 only).

Each visitor is a headless Chromium context (Debian's /usr/bin/chromium through Playwright; never `playwright
install`) that opens the home page and then each audit page by URL, waiting until Streamlit has finished
running the page. The server's resident memory (its process and children, via psutil) is sampled every 0.2 s.
Prints per-page times (median and max over visitors), the peak RSS of the server, and the time the first visitor
took alone (the reference: how much slower is a page when N visitors ask for it at once?).

    OMP_NUM_THREADS=1 python benchmarks/bench_load.py                 # 20 visitors, the audit pages
    OMP_NUM_THREADS=1 python benchmarks/bench_load.py --sessions 5 --pages residuals parity

Uploads (``--uploads N``): N visitors upload different large CSVs at once and map them (the preview, then the
engine's reduction, then the kept bytes), driven through the app's own functions (app_pages/_upload.py) in threads
of one fresh process, as the server runs them; the process's peak RSS is sampled. It prints the server's byte
budget, the peak, and how many steps had to wait for memory; ``--budget-mb 0`` runs the same with no budget to
compare (mind the machine's memory: about 6× the file per concurrent upload).

    OMP_NUM_THREADS=1 python benchmarks/bench_load.py --uploads 5 --upload-mb 64 --budget-mb 1024

Bounded on purpose: at most 40 sessions, a time limit per page, the server on 127.0.0.1 only.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import shutil
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


# ----------------------------------------------------------------------------------------------- concurrent uploads

def write_csv(path: Path, megabytes: int, seed: int) -> None:
    """A predictions CSV of about ``megabytes`` MB (label, score, two group columns, an id, an age, a short text),
    written in chunks so the generator itself stays small."""
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(seed)
    words = ["the", "loan", "was", "approved", "after", "review", "of", "income", "and", "history"]
    sentences = np.array([" ".join(rng.choice(words, 6)) for _ in range(1000)])
    with path.open("w") as out:
        first = True
        while out.tell() < megabytes * 2**20:
            n = 200_000
            score = rng.uniform(0, 1, n).round(4)
            frame = pd.DataFrame({
                "id": rng.integers(0, 10**9, n), "y": rng.binomial(1, score),
                "score": score, "race": rng.choice(["a", "b", "c", "d", "e", "f"], n),
                "sex": rng.choice(["F", "M"], n), "age": rng.integers(18, 90, n),
                "text": sentences[rng.integers(0, len(sentences), n)]})
            frame.to_csv(out, index=False, header=first)
            first = False


def upload_worker(paths: list[str]) -> None:
    """One process standing for the server: N threads (visitors) preview, reduce and keep N different files."""
    sys.path.insert(0, str(ROOT))
    from fairviz.data import ColumnMapping
    from app_pages import _budget, _upload
    sampler = RssSampler(os.getpid())
    sampler.start()
    raws = [Path(p).read_bytes() for p in paths]          # Streamlit holds each uploaded file's bytes
    time.sleep(0.5)
    base = sampler.peak
    mapping = ColumnMapping(label="y", score="score", groups=("race", "sex"))
    times: list[float] = [0.0] * len(raws)
    errors: list[str] = []

    def visit(k: int) -> None:
        start = time.perf_counter()
        try:
            name = f"visitor{k}.csv"
            _frame, digest, _rows = _upload._read_preview(f"file-{k}", name, raws[k])
            stats = _upload.reduce_upload(digest, name, repr(mapping), raws[k], mapping)
            _upload.KEPT.keep(digest, raws[k], owner=f"visitor{k}")
            assert stats.rows > 0
        except Exception as err:  # noqa: BLE001 - a benchmark reports every failure
            errors.append(f"{type(err).__name__}: {str(err)[:160]}")
        times[k] = time.perf_counter() - start

    threads = [threading.Thread(target=visit, args=(k,)) for k in range(len(raws))]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    time.sleep(0.5)
    sampler.stop.set()
    budget = _budget.BUDGET
    mb = 2**20
    estimate = _budget.reduce_estimate(len(raws[0]))
    print(f"budget {budget.total / mb:,.0f} MB (estimate per reduction {estimate / mb:,.0f} MB); most held at once "
          f"{budget.peak / mb:,.0f} MB; steps that waited for memory: {budget.queued}")
    print(f"RSS: {base / mb:,.0f} MB with the {len(raws)} files' bytes loaded ({sum(map(len, raws)) / mb:,.0f} MB), "
          f"peak {sampler.peak / mb:,.0f} MB (+{(sampler.peak - base) / mb:,.0f} MB); wall {wall:.1f} s; per visitor "
          + ", ".join(f"{t:.1f}" for t in times) + " s")
    print(f"kept uploads: {len(_upload.KEPT)} ({_upload.KEPT.bytes_held / mb:,.0f} MB); "
          f"failed: {len(errors)}" + (f" ({errors[0]})" if errors else ""))


def uploads(args) -> None:
    import tempfile
    with tempfile.TemporaryDirectory(prefix="fairviz-bench-") as folder:
        paths = [str(Path(folder) / f"upload{k}.csv") for k in range(args.uploads)]
        write_csv(Path(paths[0]), args.upload_mb, 0)
        for k, path in enumerate(paths[1:], start=1):     # the same rows and one more: a different file (hash)
            shutil.copyfile(paths[0], path)
            with open(path, "a") as out:
                out.write(f"{k},1,0.5,a,F,30,one more row\n")
        size = os.path.getsize(paths[0]) / 2**20
        print(f"{args.uploads} concurrent uploads of {size:,.0f} MB CSVs ({psutil.cpu_count()} CPU cores, "
              f"{psutil.virtual_memory().total / 2**30:,.0f} GB memory)")
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        if args.budget_mb is not None:                                   # 0: no budget (its 4 TB maximum)
            env["FAIRVIZ_MEMORY_BUDGET_MB"] = str(args.budget_mb or 1 << 22)
        subprocess.run([sys.executable, __file__, "--upload-worker", *paths], env=env, cwd=ROOT, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--pages", nargs="+", default=list(PAGES), choices=list(PAGES))
    parser.add_argument("--timeout", type=float, default=300, help="seconds allowed per page load")
    parser.add_argument("--uploads", type=int, default=0, help="concurrent uploads instead of browser sessions")
    parser.add_argument("--upload-mb", type=int, default=384, help="size of each uploaded CSV (MB)")
    parser.add_argument("--budget-mb", type=int, default=None,
                        help="the server's byte budget for this run (default: the server's own; 0: none)")
    parser.add_argument("--upload-worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.upload_worker:
        upload_worker(args.upload_worker)
        return
    if args.uploads:
        uploads(args)
        return
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
