"""AppTests of the pages' share of the server's budget: the report is prepared inside the byte budget and can be
stopped, Synthetic data keeps no file in session state, Knee probing loads only the server's listed model folders,
and Home refuses a file whose column names cannot be told apart with a plain message."""
from __future__ import annotations

import sys

import pytest
from streamlit.testing.v1 import AppTest

from fairviz.data import DataError
from app_pages import _budget, _jobs
from tests.conftest import ROOT


def _home() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    assert not at.exception, at.exception
    return at


def test_the_full_report_is_prepared_inside_the_byte_budget(monkeypatch):
    """A report whose estimate exceeds the server's budget is refused with one message, not run outside it."""
    monkeypatch.setattr(_jobs, "BUDGET", _budget.ByteBudget(1 << 20))      # 1 MB: less than any report needs
    at = _home()
    at.button(key=next(b.key for b in at.button if b.label == "Prepare the full report")).click().run()
    assert not at.exception, at.exception
    assert any("more than this server gives one request" in e.value for e in at.error)
    assert "report_key" not in at.session_state


def test_the_report_can_be_stopped():
    at = _home()
    assert "Stop" in [b.label for b in at.button]
    at.button(key="report_stop").click().run()
    assert any("Stopped" in i.value for i in at.info) and "report_key" not in at.session_state


def test_synthetic_data_keeps_no_file_in_session_state():
    pytest.importorskip("torch")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("app_pages/synthetic_data.py").run()
    at.radio(key="synth_source").set_value("upload").run()
    raw = b"sex,approved,x\n" + b"".join(f"{'FM'[k % 2]},{k % 3 == 0:d},{k}\n".encode() for k in range(120))
    at.file_uploader(key="synth_file").set_value(("loans.csv", raw, "text/csv")).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="synth_label").options == ["sex", "approved", "x"]
    name, digest = at.session_state["synth_upload"]
    assert name == "loans.csv" and isinstance(digest, str) and len(digest) < 100
    at.switch_page("app_pages/home.py").run()                 # the visitor leaves and comes back: still there
    at.switch_page("app_pages/synthetic_data.py").run()
    at.radio(key="synth_source").set_value("upload").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="synth_label").options == ["sex", "approved", "x"]


def test_knee_probing_loads_only_the_servers_listed_model_folders(tmp_path, monkeypatch):
    monkeypatch.delenv("FAIRVIZ_MODEL_DIRS", raising=False)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("app_pages/knee_probing.py").run()
    at.radio(key="probing_mode").set_value("Compute now").run()
    at.selectbox(key="probing_model").set_value("local").run()
    assert not at.exception and not at.text_input                   # no typed server path
    assert any("FAIRVIZ_MODEL_DIRS" in i.value for i in at.info)
    model = tmp_path / "models" / "my-bert"
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    monkeypatch.setenv("FAIRVIZ_MODEL_DIRS", str(tmp_path / "models"))
    at.run()
    assert not at.exception and not at.text_input
    assert at.selectbox(key="probing_model_dir").options == ["my-bert"]


def test_a_path_outside_the_allow_list_is_refused_like_a_missing_one(tmp_path, monkeypatch):
    """A folder inside the virtualenv, /etc, a missing folder: one message, which tells nothing about the path."""
    import importlib
    model = tmp_path / "models" / "my-bert"
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    monkeypatch.setenv("FAIRVIZ_MODEL_DIRS", str(tmp_path / "models"))
    probing = importlib.import_module("app_pages.knee_probing")
    messages = set()
    for typed in (sys.prefix, "/etc", str(tmp_path / "no-such-folder"), "../" * 8 + "etc", str(model)):
        with pytest.raises(DataError) as err:
            probing.offered_model_path(typed)
        messages.add(str(err.value))
    assert messages == {probing.NOT_OFFERED}
    assert probing.offered_model_path("my-bert") == str(model.resolve())


@pytest.mark.parametrize("header", [b"label,score,g,g", b"label,score,g, g ", b"label,score,,g"])
def test_home_refuses_columns_it_cannot_tell_apart_with_one_message(header):
    at = _home()
    at.radio(key="home_source").set_value("Upload a file").run()
    at.file_uploader(key="upload").set_value(("names.csv", header + b"\n1,0.5,a,b\n0,0.2,b,a\n", "text/csv")).run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "could not be read" in errors[0] and "incident" not in errors[0]
    assert "name" in errors[0]


def test_a_shared_link_of_an_upload_says_what_the_attendee_sees():
    """?data=upload opened by someone else (a shared link): the page says the upload is not in the link, not that
    the attendee's own session lost something."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params["data"] = "upload"
    at.run()
    warning = next(w.value for w in at.warning if "uploaded file" in w.value)
    assert "never kept in a link" in warning and "restarted" not in warning.lower()
