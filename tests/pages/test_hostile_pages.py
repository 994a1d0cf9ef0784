"""Hostile input in the app: names that are markup, a failing computation, too many groups, a refresh after an
upload, a visitor asking for a server path. Nothing renders, leaks or crashes."""
from __future__ import annotations

import json
import uuid

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairviz.data import ColumnMapping, DataError, build_predictions
from tests.conftest import ROOT

EVIL = ["`tick` ![x](http://evil.example/p.png)", "<b>bold</b> [a](http://evil.example)", "=HYPERLINK(\"x\")"]


def _hostile_predictions(fingerprint: str = "h"):
    rng = np.random.default_rng(0)
    n = 600
    score = rng.uniform(0.05, 0.95, n)
    frame = pd.DataFrame({"y`": rng.binomial(1, score), "score![](http://e/x.png)": score,
                          "grp<b>": np.repeat(EVIL, n // 3)})
    mapping = ColumnMapping(label="y`", score="score![](http://e/x.png)", groups=("grp<b>",))
    return build_predictions(frame, mapping, source="evil`![](http://evil.example/f.png).csv",
                             file_fingerprint=fingerprint)


def _app_with(pred, page: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["predictions"] = pred
    at.session_state["sample_key"] = None
    at.run()
    if page:
        at.switch_page(page).run()
    return at


def _markdown_texts(at: AppTest) -> list[str]:
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    texts += [e.value for kind in (at.info, at.warning, at.error, at.success) for e in kind]
    texts += [m.value for m in at.sidebar.markdown]
    return texts


def test_names_are_escaped_in_markdown_and_figures():
    at = _app_with(_hostile_predictions(), "app_pages/parity.py")
    assert not at.exception, at.exception
    texts = _markdown_texts(at)
    joined = "\n".join(texts)
    # the sidebar's data badge (a zero-width space after "http:" keeps a bare URL from becoming a link)
    assert "evil\\`!\\[\\](http:\u200b//evil.example/f.png).csv" in joined
    for raw in ("![](http", "![x](http", "<b>bold</b>", "`tick`"):
        assert raw not in joined, raw
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert specs
    strings = json.dumps([s["data"] for s in specs])
    assert "<b>bold</b>" not in strings and "&lt;b&gt;bold&lt;/b&gt;" in strings


def test_a_failure_shows_no_traceback_and_no_server_path(monkeypatch):
    import fairviz.parity.analysis as parity

    def boom(*args, **kwargs):
        raise RuntimeError("cannot open /home/server/.ssh/id_rsa")

    monkeypatch.setattr(parity, "from_counts", boom)
    pred = _hostile_predictions(fingerprint=f"boom-{uuid.uuid4()}")       # nothing cached for it yet
    at = _app_with(pred, "app_pages/parity.py")
    assert not at.exception
    shown = "\n".join(_markdown_texts(at)) + "\n".join(c.value for c in at.code)
    assert "Something went wrong" in shown and "incident" in shown
    assert ".ssh" not in shown and "Traceback" not in shown and "RuntimeError" not in shown
    assert not at.main.code and not any(e.label == "Technical details" for e in at.expander)   # (the sidebar's code
    # block is the link to this view)


def test_too_many_groups_in_an_intersection_is_a_message_not_a_crash():
    rng = np.random.default_rng(1)
    n = 4000
    score = rng.uniform(0.05, 0.95, n)
    frame = pd.DataFrame({"y": rng.binomial(1, score), "score": score,
                          "a": np.repeat([f"a{k}" for k in range(100)], n // 100),
                          "b": np.tile([f"b{k}" for k in range(20)], n // 20)})
    pred = build_predictions(frame, ColumnMapping(label="y", score="score", groups=("a", "b")))
    at = _app_with(pred, "app_pages/parity.py")
    at.sidebar.selectbox(key="attribute").set_value("a × b").run()
    assert not at.exception
    assert any("'a × b' has 2,000 groups; the limit is 200" in e.value for e in at.error)


def test_a_refresh_after_an_upload_says_the_sample_replaced_it():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params["data"] = "upload"                   # the address bar of a tab that had an upload
    at.run()
    assert not at.exception
    assert any("This view was of an uploaded file" in w.value and "Upload the file again" in w.value
               for w in at.warning)
    plain = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    assert not any("uploaded file" in w.value for w in plain.warning)


def test_an_upload_marks_the_address_bar_so_a_refresh_can_tell():
    at = _app_with(_hostile_predictions())
    assert at.query_params.get("data") in ("upload", ["upload"])


def test_explanation_page_offers_only_the_servers_model_folders(tmp_path, monkeypatch):
    monkeypatch.delenv("FAIRVIZ_MODEL_DIRS", raising=False)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page("app_pages/explanations.py").run()
    at.radio(key="explain_mode").set_value("Compute now").run()
    at.selectbox(key="explain_model").set_value("local").run()
    assert not at.exception and not at.text_input            # no free-typed path any more
    assert any("FAIRVIZ_MODEL_DIRS" in i.value for i in at.info)

    model = tmp_path / "models" / "my-bert"
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    monkeypatch.setenv("FAIRVIZ_MODEL_DIRS", str(tmp_path / "models"))
    at.run()
    assert not at.exception and not at.text_input
    assert at.selectbox(key="explain_model_dir").options == ["my-bert"]


def test_data_errors_with_hostile_names_are_escaped():
    from app_pages import _ui  # noqa: F401  (imports cleanly outside a running app)
    with pytest.raises(DataError) as err:
        build_predictions(pd.DataFrame({"y": [0, 1], "score": [0.1, 0.2], "g![](http://e/x)": ["a", "a"]}),
                          ColumnMapping(label="y", score="score", groups=("g![](http://e/x)",)))
    from fairviz.core.markup import md
    assert "![](" not in md(err.value.problems[0])


def test_every_upload_form_draws_through_the_shared_component():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.radio(key="home_source").set_value("Upload a file").run()
    assert not at.exception and any("No file uploaded yet" in i.value for i in at.info)
    at.switch_page("app_pages/forecast_fairness.py").run()
    at.radio(key="ff_source").set_value("Upload a file").run()
    assert not at.exception and any("No file uploaded yet" in i.value for i in at.info)
