"""Long runs on a shared server: one Run/Stop pattern for every page that trains, explains or searches.

A meeting's server is shared, so a heavy run must (1) be stoppable within a second or two, (2) never run twice
at once for one visitor, (3) wait politely when the server is busy, and (4) be computed once when many visitors
ask for the same thing. Stopping is cooperative: Streamlit interrupts a running script at its next element
call, so every long computation reports progress often (each batch, epoch or candidate); a click on Stop then
ends it at the next report, and ``finally`` blocks give its server slot back.

Usage on a page::

    request = _jobs.controls("synth", settings, idle="Choose quotas, then press Run.", data=table.fingerprint)
    if request is not None:
        result = _jobs.run("synth", key=(fingerprint, request), label="Training HydraGAN",
                           compute=lambda progress: synth.train(data, request, progress=progress))
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable

import streamlit as st
from streamlit.runtime.scriptrunner import RerunException, StopException

from fairviz.core.progress import Stopped
from fairviz.core.settings import env_float, env_int
from app_pages._budget import BUDGET, ByteStore, size_of

Progress = Callable[[float, str], None]
# server-wide, set by whoever runs it; a bad value is named in the log and replaced by the default
MAX_HEAVY_RUNS = env_int("FAIRVIZ_MAX_HEAVY_RUNS", 2, 1, 64)
MAX_ANALYSES = env_int("FAIRVIZ_MAX_ANALYSES", 4, 1, 256)               # page analyses (residuals, calibration, …)
POOLS = {"heavy": (MAX_HEAVY_RUNS, "heavy runs"), "analysis": (MAX_ANALYSES, "analyses")}
QUEUE_TIMEOUT_S = env_float("FAIRVIZ_QUEUE_TIMEOUT_S", 600.0, 1.0, 86_400.0)
RESULTS_PER_JOB = 8


_MISSING = object()
_UNBOUNDED = 1 << 62


@dataclass
class _Server:
    """Process-wide state: heavy-run slots, finished results per job (bounded in entries and, for results built
    from visitors' files, in bytes), and one lock per key being computed."""

    slots: dict = field(default_factory=lambda: {name: threading.BoundedSemaphore(size)
                                                 for name, (size, _) in POOLS.items()})
    running: int = 0
    results: dict[str, ByteStore] = field(default_factory=dict)
    key_locks: dict[tuple, threading.Lock] = field(default_factory=dict)
    guard: threading.Lock = field(default_factory=threading.Lock)

    def lock_for(self, key: tuple) -> threading.Lock:
        with self.guard:
            return self.key_locks.setdefault(key, threading.Lock())

    def release_key(self, key: tuple, lock: threading.Lock) -> None:
        """Give the key's lock back and forget it when nobody holds it (the lock table stays small)."""
        lock.release()
        with self.guard:
            if self.key_locks.get(key) is lock and not lock.locked():
                del self.key_locks[key]

    def lookup(self, job: str, key: Hashable) -> Any:
        return self.store(job).get(key, _MISSING)

    def store(self, job: str, keep: int = RESULTS_PER_JOB, keep_bytes: int | None = None) -> ByteStore:
        with self.guard:
            if job not in self.results:
                self.results[job] = ByteStore(entries=keep, total_bytes=keep_bytes or _UNBOUNDED)
            return self.results[job]


@st.cache_resource(show_spinner=False, max_entries=1)      # one per process, on purpose without a lifetime
def _server() -> _Server:
    return _Server()


def controls(job: str, request: Hashable, idle: str, run_label: str = "Run", data: str | None = None) -> Any | None:
    """Run and Stop buttons. Returns the request to compute (the settings at the last Run), or None.

    When the settings changed since that Run, says so and keeps showing the last run's request. ``data``: the
    fingerprint of the page's data; a request made on other data is dropped (its results would not match the
    page), and the visitor is asked to press Run again.
    """
    state_key = f"_job_request_{job}"
    b1, b2, _ = st.columns([1, 1, 4])
    if b1.button(run_label, type="primary", key=f"_job_run_{job}"):
        st.session_state[state_key] = (data, request)
        st.session_state.pop(_partial_key(job), None)
    if b2.button("Stop", key=f"_job_stop_{job}", help="Interrupts the run within a second or two; what finished "
                                                      "before is shown, marked partial."):
        st.session_state.pop(state_key, None)
        st.info("Stopped. Change the settings and press Run again.")
        return None
    stored = st.session_state.get(state_key)
    if stored is None:
        st.info(idle)
        return None
    last_data, last = stored
    if last_data != data:
        forget(job)
        st.info(f"The data changed since the last run: press **{run_label}**.")
        return None
    if last != request:
        st.caption(f"Settings changed since the last run: press **{run_label}** to recompute; below is the last run.")
    return last


def forget(job: str) -> None:
    """Drop a page's pending request (for example when its data changed)."""
    st.session_state.pop(f"_job_request_{job}", None)
    st.session_state.pop(_partial_key(job), None)


def stopped_result(job: str, data: str | None = None) -> Any | None:
    """What the visitor's last stopped run of ``job`` finished (a result marked partial), or None. ``data``: the
    page's data fingerprint, which the run's key began with (None: any).

    Kept in the visitor's session only, never among the finished results: the next Run computes afresh."""
    kept = st.session_state.get(_partial_key(job))
    if kept is None or (data is not None and kept[0] != data):
        return None
    return kept[2]


def _partial_key(job: str) -> str:
    return f"_job_partial_{job}"


def run(job: str, key: Hashable, label: str, compute: Callable[[Progress], Any], pool: str = "heavy",
        keep: int = RESULTS_PER_JOB, nbytes: int = 0, keep_bytes: int | None = None, bar: bool = True) -> Any:
    """``compute(progress)`` once per (job, key) for the whole server, with a progress bar and a server slot.

    Visitors asking for the same key while it runs wait for that run instead of starting their own; finished
    results are kept (the last ``keep`` per job) and served at once. Results must be immutable. ``pool`` picks
    the slots: "heavy" (training, attribution, search: FAIRVIZ_MAX_HEAVY_RUNS at a time) or "analysis" (page
    analyses: FAIRVIZ_MAX_ANALYSES at a time). ``nbytes``: the step's peak memory, taken from the server's byte
    budget (``_budget.BUDGET``) before the slot; it waits with a message while other steps hold the budget, and
    is given back when the step ends, is stopped or its tab closes. ``keep_bytes``: the job's kept results are
    bounded in bytes too (results built from visitors' files). ``bar=False``: a transient spinner instead of the
    bar, for a computation that reports no progress (the page's layout then holds no element for it).
    """
    st.session_state.pop(_partial_key(job), None)         # a new run supersedes what an older one left
    server = _server()
    server.store(job, keep, keep_bytes)                   # made with this job's bounds on its first use
    found = server.lookup(job, key)
    if found is not _MISSING:
        return found
    if not bar:
        with st.spinner(f"{label}…"):
            return _compute(server, job, key, label, compute, pool, keep, nbytes, keep_bytes, _Quiet())
    return _compute(server, job, key, label, compute, pool, keep, nbytes, keep_bytes, st.progress(0.0, text=label))


class _Quiet:
    """A bar that draws nothing (``run(bar=False)``: a spinner says the page is working)."""

    def progress(self, *args, **kwargs) -> None:
        pass

    def empty(self) -> None:
        pass


def _compute(server: _Server, job: str, key: Hashable, label: str, compute: Callable[[Progress], Any], pool: str,
             keep: int, nbytes: int, keep_bytes: int | None, bar) -> Any:
    """``run``'s miss: wait for the key's lock (another visitor computing it), the byte budget and a slot, then
    compute and keep the result."""
    slots = server.slots[pool]
    size, what = POOLS[pool]
    store = server.store(job, keep, keep_bytes)
    full_key = (job, key)
    lock = server.lock_for(full_key)
    try:
        _wait(lock, bar, f"{label}: another visitor is computing exactly this; waiting for their result")
        try:
            found = server.lookup(job, key)          # computed by the visitor we waited for
            if found is not _MISSING:
                return found
            held = BUDGET.acquire(nbytes, _memory_wait(bar, label), QUEUE_TIMEOUT_S) if nbytes else 0
            try:
                _wait(slots, bar, f"{label}: the server is busy ({size} {what} at a time); waiting for a free slot")
                with server.guard:
                    server.running += 1
                try:
                    result = compute(_progress(bar, label))
                except Stopped as stop:
                    _keep_partial(job, key, stop)
                    raise stop.interrupt or stop
                finally:
                    with server.guard:
                        server.running -= 1
                    slots.release()
            finally:
                if held:
                    BUDGET.release(held)
            store.put(key, result, size_of(result) if keep_bytes else 0)
            return result
        finally:
            server.release_key(full_key, lock)
    finally:
        bar.empty()


def kept(job: str, key: Hashable, build: Callable[[], Any], keep: int = RESULTS_PER_JOB) -> Any:
    """``build()`` once per (job, key), kept in the same server store as ``run``'s results, without a bar or a
    slot: for what takes milliseconds (a figure). Two sessions building the same key at once may both build it."""
    store = _server().store(job, keep)
    found = store.get(key, _MISSING)
    if found is _MISSING:
        found = build()
        store.put(key, found, 0)
    return found


def _keep_partial(job: str, key: Hashable, stop: Stopped) -> None:
    """Keep a stopped run's partial result in the session (see ``stopped_result``); the data fingerprint is the
    key's first part where the page put one there."""
    if stop.partial is not None:
        data = key[0] if isinstance(key, tuple) and key else None
        st.session_state[_partial_key(job)] = (data, key, stop.partial)


def _wait(lock, bar, message: str) -> None:
    """Acquire ``lock``, updating the bar every half second so a Stop click can interrupt the wait."""
    if lock.acquire(blocking=False):
        return
    start = time.monotonic()
    while not lock.acquire(timeout=0.5):
        waited = time.monotonic() - start
        if waited > QUEUE_TIMEOUT_S:
            raise TimeoutError(f"The server stayed busy for {QUEUE_TIMEOUT_S:.0f} s; try again in a moment.")
        bar.progress(0.0, text=f"{message} ({waited:.0f} s)…")


def _memory_wait(bar, label: str) -> Callable[[int, float], None]:
    """The queue's message; drawing it is where a Stop click or a closed tab interrupts the wait."""
    def update(ahead: int, waited: float) -> None:
        bar.progress(0.0, text=f"{label}: waiting for memory: {ahead} {'request' if ahead == 1 else 'requests'} "
                               f"ahead of yours ({waited:.0f} s)…")
    return update


def _progress(bar, label: str) -> Progress:
    """The bar's update. Streamlit interrupts a run at an element call (here); that interrupt reaches the compute
    as ``Stopped`` so a loop can keep what it finished, and ``run`` raises the interrupt itself again."""
    def update(fraction: float, message: str = "") -> None:
        try:
            bar.progress(min(max(float(fraction), 0.0), 1.0), text=f"{label}: {message}" if message else label)
        except (StopException, RerunException) as interrupt:
            raise Stopped(interrupt) from interrupt
    return update
