"""Stop keeps what finished, on the pages: a run stopped part-way shows the units that completed, marked partial,
and a new Run computes afresh (a partial result is never served as the finished one)."""
from __future__ import annotations

import pytest
from streamlit.runtime.scriptrunner import StopException

from app_pages import _jobs
from fairviz.core.progress import Stopped
from tests.pages.test_conditions_pages import TINY, _open, _text


def _stop_when(monkeypatch, message: str) -> list[str]:
    """The page's progress raises a Stop (as a click on Stop does) at the first report of ``message``."""
    seen: list[str] = []
    real = _jobs._progress

    def progress(bar, label):
        update = real(bar, label)

        def stopping(fraction, text=""):
            if text == message:
                seen.append(text)
                raise Stopped(StopException())
            update(fraction, text)
        return stopping

    monkeypatch.setattr(_jobs, "_progress", progress)
    return seen


def _stop_at_second_condition(monkeypatch) -> list[str]:
    """The page's progress raises a Stop (as a click on Stop does) at the first report on the second condition."""
    seen: list[str] = []
    real = _jobs._progress

    def progress(bar, label):
        update = real(bar, label)

        def stopping(fraction, message=""):
            condition = message.split(" · ")[0]
            if condition not in seen and message != "done":
                seen.append(condition)
            if len(seen) == 2:
                raise Stopped(StopException())
            update(fraction, message)
        return stopping

    monkeypatch.setattr(_jobs, "_progress", progress)
    return seen


@pytest.mark.slow
def test_a_stopped_simulator_run_shows_the_finished_conditions(monkeypatch):
    at = _open("app_pages/simulator.py")
    at.multiselect(key="sim_alphas").set_value(TINY["alphas"])
    at.multiselect(key="sim_methods").set_value(TINY["methods"])
    at.slider(key="sim_seeds").set_value(TINY["seeds"])
    # m differs from the other simulator tests: the server keeps finished results per settings, process-wide
    next(n for n in at.number_input if n.label.startswith("m:")).set_value(TINY["m"] - 100)
    at.slider(key="sim_epochs").set_value(TINY["epochs"])
    at.select_slider(key="sim_hidden").set_value(TINY["hidden"])
    at.run()
    seen = _stop_at_second_condition(monkeypatch)
    at.button(key="_job_run_conditions_sim").click().run()
    assert not at.exception, at.exception
    assert len(seen) == 2
    at.button(key="_job_stop_conditions_sim").click().run()
    assert not at.exception, at.exception
    assert "Partial: 1 of 2 conditions finished before Stop" in _text(at)
    page = at.session_state["page_json"]["conditions"]
    assert page["partial"] == {"complete": False, "done": 1, "total": 2, "unit": "conditions"}
    assert {r["alpha"] for r in page["runs"]} == {TINY["alphas"][0]}
    assert len(at.dataframe[-1].value) == len(TINY["methods"])           # one row per method at the first α
    # another click keeps showing it; a new Run computes every condition and is not marked partial
    at.radio(key="sim_rule").set_value("constraint").run()
    assert "Partial: 1 of 2 conditions" in _text(at)
    monkeypatch.undo()
    at.button(key="_job_run_conditions_sim").click().run()
    assert not at.exception, at.exception
    page = at.session_state["page_json"]["conditions"]
    assert "partial" not in page and {r["alpha"] for r in page["runs"]} == set(TINY["alphas"])
    assert "Partial:" not in _text(at)


@pytest.mark.slow
def test_a_stopped_synthetic_data_run_shows_the_finished_trials(monkeypatch, tmp_path):
    pytest.importorskip("torch")
    from tests.pages.test_synth_page import _open as open_synth
    from tests.pages.test_synth_page import small_table
    path = tmp_path / "loans.csv"
    small_table().to_csv(path, index=False)
    at = open_synth()
    at.radio(key="synth_source").set_value("upload")
    at.session_state["synth_upload"] = ("loans.csv", path.read_bytes())
    at.run()
    at.selectbox(key="synth_label").set_value("approved")
    at.multiselect(key="synth_groups_upload").set_value(["sex"])
    at.selectbox(key="synth_positive").set_value("1")
    at.run()
    at.number_input(key="synth_rows").set_value(200)
    at.number_input(key="synth_epochs").set_value(2)
    at.number_input(key="synth_trials").set_value(3)
    at.run()
    seen = _stop_when(monkeypatch, "generating and judging trial 3")
    next(b for b in at.button if b.label == "Run").click().run()
    assert not at.exception, at.exception
    assert seen
    next(b for b in at.button if b.label == "Stop").click().run()
    assert not at.exception, at.exception
    assert "Partial: 2 of 3 trials finished before Stop" in _text(at)
    page = at.session_state["page_json"]["synth"]
    assert page["partial"] == {"complete": False, "done": 2, "total": 3, "unit": "trials"}
    assert page["settings"]["trials"] == 3
