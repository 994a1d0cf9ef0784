"""app_pages/_jobs.py on a shared server: identical requests compute once, each pool bounds how many run at a time."""
from __future__ import annotations

import threading
import time
import uuid

from app_pages import _jobs, _ui


def _in_threads(n: int, target) -> list:
    results = [None] * n

    def call(k):
        results[k] = target(k)

    threads = [threading.Thread(target=call, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return results


def test_twenty_identical_requests_compute_once():
    calls = []
    key = ("fingerprint", uuid.uuid4().hex)

    def compute(progress):
        calls.append(1)
        for step in range(5):
            progress(step / 5, "working")
            time.sleep(0.05)
        return {"value": 42}

    results = _in_threads(20, lambda k: _ui.cached("test_same", key, None, compute, "Computing", data="data"))
    assert len(calls) == 1
    assert all(r is results[0] for r in results) and results[0] == {"value": 42}
    assert _jobs._server().key_locks == {} or all(not lock.locked() for lock in _jobs._server().key_locks.values())


def test_a_pool_bounds_concurrent_runs():
    running, peak, guard = [0], [0], threading.Lock()

    def compute(progress):
        with guard:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.3)
        with guard:
            running[0] -= 1
        return None

    tag = uuid.uuid4().hex
    _in_threads(6, lambda k: _jobs.run("test_pool", key=(tag, k), label="Heavy", compute=compute, pool="heavy"))
    assert peak[0] == _jobs.MAX_HEAVY_RUNS


def test_finished_results_are_bounded_per_job():
    tag = uuid.uuid4().hex
    for k in range(5):
        _jobs.run("test_keep", key=(tag, k), label="x", compute=lambda progress, k=k: k, keep=3)
    assert [key[1] for key in _jobs._server().store("test_keep") if key[0] == tag] == [2, 3, 4]


def _controls_script():
    import streamlit as st

    from app_pages import _jobs
    data = st.session_state.get("data", "file-a")
    request = _jobs.controls("demo", ("settings", 1), idle="Press Run.", data=data)
    st.write(f"request: {request}")


def test_a_run_on_other_data_is_dropped_and_the_visitor_asked_again():
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_function(_controls_script, default_timeout=30).run()
    assert at.info[0].value == "Press Run."
    at.button(key="_job_run_demo").click().run()
    assert at.markdown[-1].value == "request: ('settings', 1)"
    at.session_state["data"] = "file-b"                     # the page's data changed since that Run
    at.run()
    assert "The data changed since the last run" in at.info[0].value
    assert at.markdown[-1].value != "request: ('settings', 1)"
    at.run()                                                # the stale request was forgotten, not kept
    assert at.info[0].value == "Press Run."
