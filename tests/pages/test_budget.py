"""The server's byte budget (app_pages/_budget.py) and the stores bounded in bytes: admission in order with a queue
message, refusal of what alone exceeds the budget, bytes given back on Stop, per-visitor kept uploads, and queries
on a kept upload computed once."""
from __future__ import annotations

import threading
import time
import uuid

import pytest

from fairviz.data import DataError
from app_pages import _budget, _jobs, _upload


def _in_threads(n: int, target) -> list:
    results = [None] * n

    def call(k):
        try:
            results[k] = target(k)
        except Exception as err:  # noqa: BLE001 - the test reads what each thread got
            results[k] = err

    threads = [threading.Thread(target=call, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
        time.sleep(0.05)                       # arrive in order
    for t in threads:
        t.join(timeout=60)
    return results


def test_a_request_larger_than_the_whole_budget_is_refused_at_once():
    budget = _budget.ByteBudget(1000)
    with pytest.raises(DataError, match="more than this server gives one request"):
        budget.acquire(1001)
    assert budget.used == 0 and budget.holders == 0


def test_requests_wait_in_order_and_say_how_many_are_ahead():
    budget = _budget.ByteBudget(1000)
    first = budget.acquire(800)
    seen: list[int] = []
    order: list[str] = []

    def large(k):
        held = budget.acquire(600, waiting=lambda ahead, s: seen.append(ahead))
        order.append("large")
        time.sleep(0.2)
        budget.release(held)

    def small(k):
        held = budget.acquire(100)            # fits now, but arrived after the large one: waits its turn
        order.append("small")
        budget.release(held)

    threads = [threading.Thread(target=large, args=(0,)), threading.Thread(target=small, args=(1,))]
    threads[0].start()
    time.sleep(0.3)
    threads[1].start()
    time.sleep(0.3)
    assert order == [] and seen and seen[0] == 1          # one request (the first, running) ahead of the large one
    budget.release(first)
    for t in threads:
        t.join(timeout=10)
    assert order == ["large", "small"]
    assert budget.used == 0 and budget.peak <= 1000 and budget.queued == 2


def test_concurrent_jobs_never_hold_more_than_the_budget(monkeypatch):
    budget = _budget.ByteBudget(1000)
    monkeypatch.setattr(_jobs, "BUDGET", budget)
    held, peak, guard = [0], [0], threading.Lock()

    def compute(progress):
        with guard:
            held[0] += 400
            peak[0] = max(peak[0], held[0])
        time.sleep(0.5)
        with guard:
            held[0] -= 400
        return 1

    tag = uuid.uuid4().hex
    _in_threads(5, lambda k: _jobs.run("test_budget", (tag, k), "Reading", compute, pool="analysis", nbytes=400))
    assert peak[0] == 800 and budget.peak == 800 and budget.used == 0 and budget.queued >= 3


def test_the_queue_message_names_the_requests_ahead():
    texts = []

    class Bar:
        def progress(self, value, text=""):
            texts.append(text)

    _jobs._memory_wait(Bar(), "Reading the file")(2, 3.2)
    assert texts == ["Reading the file: waiting for memory: 2 requests ahead of yours (3 s)…"]


class Stopped(Exception):
    """What Streamlit raises at an element call of a stopped script or a closed tab."""


def test_a_stopped_wait_leaves_the_queue_and_a_stopped_run_gives_its_bytes_back(monkeypatch):
    budget = _budget.ByteBudget(1000)
    monkeypatch.setattr(_jobs, "BUDGET", budget)
    release = threading.Event()

    def slow(progress):
        release.wait(10)
        return "done"

    tag = uuid.uuid4().hex
    runner = threading.Thread(target=_jobs.run, args=("test_stop", (tag, "a"), "Reading", slow),
                              kwargs={"pool": "analysis", "nbytes": 700})
    runner.start()
    time.sleep(0.3)
    assert budget.used == 700

    def stop_while_waiting(bar, label):
        def update(ahead, waited):
            raise Stopped()
        return update

    monkeypatch.setattr(_jobs, "_memory_wait", stop_while_waiting)
    with pytest.raises(Stopped):                       # Stop clicked while waiting for memory
        _jobs.run("test_stop", (tag, "b"), "Reading", lambda progress: "never", pool="analysis", nbytes=700)
    assert budget.used == 700 and not budget._queue    # it left the queue and took nothing
    release.set()
    runner.join(10)
    assert budget.used == 0

    def stopped_mid_run(progress):
        progress(0.5, "half way")
        raise Stopped()                                # Stop clicked (or the tab closed) during the run

    with pytest.raises(Stopped):
        _jobs.run("test_stop", (tag, "c"), "Reading", stopped_mid_run, pool="analysis", nbytes=900)
    assert budget.used == 0 and budget.holders == 0
    assert _jobs.run("test_stop", (tag, "d"), "Reading", lambda progress: "next", pool="analysis",
                     nbytes=1000) == "next"


def test_default_budget_is_half_the_machine_up_to_four_gigabytes():
    assert _budget.default_budget_mb(16 << 30) == 4096
    assert _budget.default_budget_mb(2 << 30) == 1024
    assert 64 <= _budget.BUDGET_MB and _budget.BUDGET.total == _budget.BUDGET_MB * _budget.MB


def test_a_bad_budget_setting_is_replaced_by_the_default(monkeypatch, caplog):
    for bad in ("nan", "abc", "-5", "10"):
        monkeypatch.setenv("FAIRVIZ_MEMORY_BUDGET_MB", bad)
        assert _budget.budget_setting() == _budget.default_budget_mb()
    assert "FAIRVIZ_MEMORY_BUDGET_MB" in caplog.text
    monkeypatch.setenv("FAIRVIZ_MEMORY_BUDGET_MB", "512")
    assert _budget.budget_setting() == 512


def test_job_results_built_from_files_are_bounded_in_bytes():
    tag = uuid.uuid4().hex
    for k in range(4):
        _jobs.run("test_bytes", (tag, k), "x", lambda progress: b"x" * 400, pool="analysis", keep=8, keep_bytes=1000)
    store = _jobs._server().store("test_bytes")
    assert [key[1] for key in store if key[0] == tag] == [2, 3] and store.bytes_held == 800


# ----------------------------------------------------------------------------------------------- kept uploads

def test_one_visitor_never_evicts_another_visitors_kept_upload():
    kept = _upload._KeptBytes(entries=16, total_bytes=10_000, per_owner_bytes=3_000, per_owner_entries=2)
    kept.keep("alice-file", b"a" * 1000, owner="alice")
    for k in range(6):                                   # bob uploads again and again
        kept.keep(f"bob-{k}", b"b" * 1000, owner="bob")
    assert kept.get("alice-file") == b"a" * 1000
    assert kept.get("bob-5") and kept.get("bob-4") and kept.get("bob-3") is None     # bob's own oldest went


def test_the_server_cap_evicts_the_upload_kept_longest_ago():
    kept = _upload._KeptBytes(entries=16, total_bytes=2_500, per_owner_bytes=2_000, per_owner_entries=2)
    kept.keep("alice-file", b"a" * 1000, owner="alice")
    kept.keep("bob-file", b"b" * 1000, owner="bob")
    kept.keep("carol-file", b"c" * 1000, owner="carol")   # over the server's cap: the oldest (alice's) goes
    assert kept.get("alice-file") is None and kept.get("bob-file") and kept.get("carol-file")


def test_a_visitor_whose_upload_is_gone_is_told_on_the_dstar_tab():
    from streamlit.testing.v1 import AppTest

    from fairviz.data import ColumnMapping
    from tests.conftest import ROOT
    mapping = ColumnMapping("two_year_recid", "score", ("race",))
    raw = (ROOT / "assets" / "compas.csv").read_bytes()
    digest = "compas-upload-gone-" + uuid.uuid4().hex
    pred = _upload.reduce_upload(digest, "compas_upload.csv", repr(mapping), raw, mapping).predictions()
    at = AppTest.from_file(str(ROOT / "app_pages" / "residuals.py"), default_timeout=120)
    at.session_state["predictions"] = pred
    at.session_state[_upload.ENGINE_UPLOAD] = {"fingerprint": pred.fingerprint, "digest": digest,
                                               "name": "compas_upload.csv", "mapping": mapping}
    at.session_state["rdf_tab"] = "Diagnostic set D*"
    at.run()                                             # the bytes were never kept, or evicted since
    assert not at.exception, at.exception
    assert any("The file is no longer kept on the server; upload it again to download D* with every column"
               in i.value for i in at.info)
    assert "Download D* with every column of the file" not in [b.label for b in at.get("download_button")]


# ----------------------------------------------------------------------------------------------- queries on a kept file

def test_dstar_with_every_column_queries_the_file_once_for_two_clicks(monkeypatch):
    """The download's deferred callable (what a click runs) reads the file once; a second click is served from
    the bounded store."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    import fairviz.residuals as residuals
    from fairviz.data import ColumnMapping
    from tests.conftest import ROOT
    mapping = ColumnMapping("two_year_recid", "score", ("race",))
    raw = (ROOT / "assets" / "compas.csv").read_bytes()
    digest = "compas-upload-once-" + uuid.uuid4().hex
    pred = _upload.reduce_upload(digest, "compas_upload.csv", repr(mapping), raw, mapping).predictions()
    _upload.KEPT.keep(digest, raw)
    queries, clicks = [], {}
    real_query = residuals.file_dstar_rows

    def counted(*args):
        queries.append(1)
        return real_query(*args)

    real_button = st.download_button

    def recording_button(label, data, *args, **kwargs):
        clicks[label] = data
        return real_button(label, b"", *args, **kwargs)

    monkeypatch.setattr(residuals, "file_dstar_rows", counted)
    monkeypatch.setattr(st, "download_button", recording_button)
    at = AppTest.from_file(str(ROOT / "app_pages" / "residuals.py"), default_timeout=120)
    at.session_state["predictions"] = pred
    at.session_state[_upload.ENGINE_UPLOAD] = {"fingerprint": pred.fingerprint, "digest": digest,
                                               "name": "compas_upload.csv", "mapping": mapping}
    at.session_state["rdf_tab"] = "Diagnostic set D*"
    at.run()
    assert not at.exception, at.exception
    click = clicks["Download D* with every column of the file"]
    first = click()
    at.run()                                             # a rerun draws the button again
    second = clicks["Download D* with every column of the file"]()
    assert queries == [1] and first == second and first.count(b"\n") > 10


def test_a_query_on_a_kept_file_runs_once_for_many_visitors_at_once():
    calls = []

    def build():
        calls.append(1)
        time.sleep(0.2)
        return b"rows"

    key = uuid.uuid4().hex
    results = _in_threads(4, lambda k: _upload.file_query(key, "mapping", ("params",), b"x" * 100, "f.csv", build))
    assert results == [b"rows"] * 4 and calls == [1]


def test_a_query_waiting_behind_another_gives_up_with_a_message_before_the_browser_does(monkeypatch):
    """The browser drops a deferred download after 180 s without a word; a query stuck behind a long one must answer
    first, with the reason."""
    monkeypatch.setattr(_upload, "FILE_QUERY_WAIT_S", 0.3)
    assert _upload.FILE_QUERY_WAIT_S < 180
    started, release = threading.Event(), threading.Event()

    def slow():
        started.set()
        release.wait(5)
        return b"slow"

    first = threading.Thread(target=lambda: _upload.file_query(uuid.uuid4().hex, "m", (), b"x", "f.csv", slow))
    first.start()
    try:
        started.wait(5)
        with pytest.raises(TimeoutError, match="busy"):
            _upload.file_query(uuid.uuid4().hex, "m", (), b"x", "f.csv", lambda: b"never")
    finally:
        release.set()
        first.join()
