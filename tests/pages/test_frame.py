"""The app's frame (app.py): the data badge, group attribute, τ and the beneficial outcome are drawn once, before the
page runs, and keep their values across page switches and reruns with no copy-back; pages read them through
``_ui.context()``; ``_ui`` starts nothing at import."""
from __future__ import annotations

import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest

from fairviz.data.overview import display, overview
from fairviz.data.samples import load_sample, samples
from fairviz.core.display import Metrics, Table, Text, tables
from tests.conftest import ROOT

HOME, RESIDUALS, PARITY, SIGNIFICANCE = ("app_pages/home.py", "app_pages/residuals.py", "app_pages/parity.py",
                                         "app_pages/significance.py")
LORENZ, SYNTH = "app_pages/lorenz.py", "app_pages/synthetic_data.py"
FRAME_KEYS = ("attribute", "threshold", "benefit")


def _app() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    assert not at.exception, at.exception
    return at


def _go(at: AppTest, page: str) -> AppTest:
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _frame(at: AppTest) -> tuple:
    return at.session_state["attribute"], at.session_state["threshold"], at.session_state["benefit"]


def test_the_frame_starts_on_the_samples_own_choices():
    at = _app()
    assert at.sidebar.selectbox(key="attribute").value == "race"
    assert at.sidebar.slider(key="threshold").value == pytest.approx(0.4)       # COMPAS's own threshold
    assert at.sidebar.radio(key="benefit").value == "negative"                 # COMPAS: low risk is the benefit
    assert "COMPAS recidivism (ProPublica)" in at.sidebar.markdown[0].value     # the data badge


def test_choices_survive_page_switches_and_reruns_without_copy_back():
    at = _app()
    at.sidebar.selectbox(key="attribute").set_value("sex").run()
    at.sidebar.slider(key="threshold").set_value(0.63).run()
    at.sidebar.radio(key="benefit").set_value("positive").run()
    # through pages that draw all of the frame, part of it (Residuals: no benefit) and none of it (Lorenz, Synthetic)
    for page in (PARITY, RESIDUALS, LORENZ, SIGNIFICANCE, SYNTH, HOME, PARITY):
        _go(at, page)
        assert _frame(at) == ("sex", pytest.approx(0.63), "positive"), page
        at.run()                                                                 # a plain rerun changes nothing
        assert _frame(at) == ("sex", pytest.approx(0.63), "positive"), page
    assert at.sidebar.selectbox(key="attribute").value == "sex"
    assert at.sidebar.slider(key="threshold").value == pytest.approx(0.63)
    assert at.sidebar.radio(key="benefit").value == "positive"


def test_the_frame_shows_where_its_choices_matter():
    at = _app()
    assert [r.label for r in at.sidebar.radio] == ["Beneficial outcome"]       # Home: the audit report uses it
    _go(at, RESIDUALS)
    assert at.sidebar.selectbox(key="attribute") and at.sidebar.slider(key="threshold")
    assert "Beneficial outcome" not in [r.label for r in at.sidebar.radio]     # residuals do not read it
    _go(at, PARITY)
    assert "Beneficial outcome" in [r.label for r in at.sidebar.radio]
    _go(at, LORENZ)                                                              # its own system, not the data
    assert "threshold" not in [s.key for s in at.sidebar.slider]
    assert not any(s.key == "attribute" for s in at.sidebar.selectbox)


def test_the_pages_compute_with_the_frames_choices():
    """Group parity reads the frame's benefit and τ: its JSON says which it used."""
    at = _app()
    at.sidebar.slider(key="threshold").set_value(0.55).run()
    at.sidebar.radio(key="benefit").set_value("positive").run()
    _go(at, PARITY)
    settings = at.session_state["page_json"]["parity"]["parity"]["settings"]
    assert settings["benefit"] == "positive" and settings["threshold"] == pytest.approx(0.55)
    assert any("score ≥ 0.55" in c.value for c in at.caption)                    # the benefit caption: τ and benefit
    at.sidebar.radio(key="benefit").set_value("negative").run()
    assert any("score < 0.55" in c.value.replace("\\", "") for c in at.caption)   # "<" is escaped for Markdown


def test_new_data_resets_the_frame_to_its_defaults():
    at = _app()
    at.sidebar.selectbox(key="attribute").set_value("sex").run()
    at.sidebar.radio(key="benefit").set_value("positive").run()
    at.selectbox(key="sample_choice").set_value("default").run()                # another sample: its own choices
    assert not at.exception
    assert at.sidebar.selectbox(key="attribute").value == "student"
    assert at.sidebar.slider(key="threshold").value == pytest.approx(samples()["default"].threshold)
    assert at.sidebar.radio(key="benefit").value == "positive"
    at.selectbox(key="sample_choice").set_value("compas").run()
    assert _frame(at) == ("race", pytest.approx(0.4), "negative")


def test_lorenz_keeps_its_own_widgets_across_pages():
    at = _go(_app(), LORENZ)
    at.sidebar.slider(key="lz_rho").set_value(30.5).run()
    _go(at, RESIDUALS)
    _go(at, LORENZ)
    assert at.sidebar.slider(key="lz_rho").value == pytest.approx(30.5)


def test_a_page_run_alone_reads_the_frames_defaults():
    """Without app.py (a page script run by itself) the page still gets the data's default choices."""
    at = AppTest.from_file(str(ROOT / PARITY), default_timeout=240)
    at.session_state["predictions"] = load_sample("compas")
    at.session_state["sample_key"] = "compas"
    at.run()
    assert not at.exception, at.exception
    assert _frame(at) == ("race", 0.5, "negative")


def test_ui_starts_no_thread_at_import():
    code = ("import threading; before = {t.name for t in threading.enumerate()}; import app_pages._ui; "
            "after = {t.name for t in threading.enumerate()}; print(sorted(after - before))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_warm_up_is_a_cached_call_that_runs_once(monkeypatch):
    from app_pages import _ui
    imported = []
    monkeypatch.setattr(_ui, "importlib", type("Imports", (), {"import_module": staticmethod(imported.append)}))
    _ui.warm_up.clear()
    try:
        _ui.warm_up()
        _ui.warm_up()
    finally:
        _ui.warm_up.clear()
    assert imported == list(_ui._WARM_MODULES)          # once, not per call
    assert "_ui.warm_up()" in (ROOT / "app.py").read_text()


def test_home_tables_are_the_overviews_display_list():
    pred = load_sample("compas")
    items = display(overview(pred))
    assert isinstance(items[0], Text) and items[0].plain() == "Now analysing: COMPAS recidivism (ProPublica)"
    metrics = next(i for i in items if isinstance(i, Metrics))
    assert [(m.label.plain(), m.value) for m in metrics.items][0] == ("Rows", "7,214")
    race = tables(items)["groups:race"].frame.set_index("group")
    assert race.loc["African-American", "n"] == 3696
    assert race["share"].sum() == pytest.approx(1.0)
    at = _app()
    page = at.dataframe[0].value.set_index("group")
    assert list(page.index) == list(race.index)
    assert page.loc["African-American", "base rate"] == pytest.approx(race.loc["African-American", "base rate"])


def test_a_hostile_source_name_stays_inert_in_the_frame_and_home():
    from fairviz.data import ColumnMapping, build_predictions
    import pandas as pd
    hostile = "**x** [a](http://e.x/) ![i](http://e.x/p.png) <b>b</b>"
    frame = pd.DataFrame({"y": [0, 1] * 20, "score": [0.2, 0.8] * 20, hostile: ["p", "q"] * 20})
    pred = build_predictions(frame, ColumnMapping("y", "score", (hostile,)), source=hostile, file_fingerprint="h")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["predictions"] = pred
    at.session_state["sample_key"] = None
    at.run()
    assert not at.exception, at.exception
    badge = at.sidebar.markdown[0].value
    assert "\\*\\*x\\*\\* \\[a\\]" in badge and "\\<b\\>" in badge     # every mark escaped: shown as typed
    assert at.subheader[0].value.startswith("Summary: \\*\\*x\\*\\*")
    assert at.subheader[1].value.startswith("Now analysing: \\*\\*x\\*\\*")
    assert all(isinstance(t, Table) for t in tables(display(overview(pred))).values())
