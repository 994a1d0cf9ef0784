"""AppTest of the Per-group thresholds page (issue 24, item 3): the explorer on the loaded data, its downloads hold
the real thresholds and decisions, "Add the decisions as a model" makes them the model every page audits (weighted
data becomes its rows first), and data it cannot adjust gets a plain message."""
import io
import json

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from fairviz.data import ColumnMapping
from fairviz.data.engine import Engine, resolve
from fairviz.data.samples import load_sample, sample_path, samples
from fairviz.data.validation import build_predictions
from fairviz.thresholds import adjusted_model, explore_model
from fairviz.data.view import View
from tests.conftest import ROOT

PAGE = str(ROOT / "app_pages" / "thresholds.py")


@pytest.fixture
def downloads(monkeypatch):
    """What each download button would hand the browser (bytes, or the deferred callable a click runs)."""
    clicks = {}
    real_button = st.download_button

    def recording_button(label, data, *args, **kwargs):
        clicks[label] = data
        return real_button(label, b"", *args, **kwargs)

    monkeypatch.setattr(st, "download_button", recording_button)
    return clicks


def _open(pred=None, attribute="race", tau=0.5) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=240)
    if pred is not None:
        at.session_state["predictions"] = pred
        at.session_state["sample_key"] = None
    at.session_state["attribute"] = attribute
    at.session_state["threshold"] = tau
    at.run()
    assert not at.exception, at.exception
    return at


def _text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    parts += [w.value for w in at.warning] + [e.value for e in at.error]
    return "\n".join(map(str, parts))


def test_the_explorer_on_compas_and_its_downloads(downloads):
    compas = load_sample("compas")
    at = _open(compas)
    expected = explore_model(compas, "race", "equal_tpr", tau=0.5)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Expected accuracy"] == f"{expected.audit.policy.accuracy:.3f}"
    assert metrics["Accuracy at τ = 0.50"] == f"{expected.audit.single_threshold.accuracy:.3f}"
    # the label-blind decisions' realised gap, as computed (not the rule's, which is 0 by construction)
    assert metrics["TPR gap (decisions)"] == f"{expected.adjusted.realised_gap():.4f}"
    assert "Hardt, Price and Srebro" in _text(at) and "Native American" in _text(at)
    table = at.dataframe[0].value
    assert list(table["group"]) == [r.group for r in expected.audit.policy.rules]
    thresholds = json.loads(downloads["Thresholds (JSON)"])
    assert thresholds["constraint"] == "equal_tpr" and thresholds["model"] == "score"
    for group, rule in zip(thresholds["groups"], expected.audit.policy.rules):
        assert group["group"] == rule.group and group["thresholds"] == list(rule.thresholds)
        assert group["mix"] == pytest.approx(list(rule.mix)) and group["tpr"] == pytest.approx(rule.tpr)
    assert at.session_state["page_json"]["thresholds"] == thresholds
    decisions = pd.read_csv(io.BytesIO(downloads["Decisions (CSV)"]()))
    scores, _, _ = adjusted_model(compas, "race", "equal_tpr")
    assert list(decisions.columns) == ["id", "race", "score", "decision"]
    assert decisions["id"].tolist() == compas.frame["id"].tolist()
    assert decisions["decision"].tolist() == scores.astype(int).tolist()
    assert decisions["score"].to_numpy() == pytest.approx(compas.score)

    at.selectbox(key="thr_constraint").set_value("equalized_odds").run()
    assert not at.exception, at.exception
    assert json.loads(downloads["Thresholds (JSON)"])["constraint"] == "equalized_odds"


def test_adding_the_decisions_makes_them_the_audited_model():
    at = _open(load_sample("compas"))
    at.button(key="thr_add").click().run()
    assert not at.exception, at.exception
    title = "score · equal TPR by race"
    pred = at.session_state["predictions"]
    assert pred.model_names == ["score", title] and at.session_state["model"] == title
    scores, _, note = adjusted_model(load_sample("compas"), "race", "equal_tpr")
    np.testing.assert_array_equal(pred.at(View(model=title)).score, scores)
    assert note in pred.notes
    assert f"Added **{title}** as a model" in _text(at).replace("\\", "")
    assert not at.button and not at.metric                      # no thresholds fitted on the decisions themselves
    at.session_state["model"] = "score"                         # the sidebar's picker back on the scores
    at.run()
    assert not at.exception, at.exception
    assert at.metric and "Added" not in _text(at)
    at.button(key="thr_add").click().run()                      # the same decisions again: the name is taken
    assert not at.exception, at.exception
    assert "already loaded" in at.error[0].value and len(at.session_state["predictions"].model_names) == 2


def test_weighted_data_becomes_its_rows_when_the_decisions_are_added():
    weighted = Engine().reduce(resolve(sample_path("compas")), samples()["compas"].mapping).predictions()
    at = _open(weighted)
    gap = float({m.label: m.value for m in at.metric}["TPR gap (decisions)"])
    assert 0 < gap < 0.2          # label-blind: Native American's 10 positives move by a row (0.1) at a time
    at.button(key="thr_add").click().run()
    assert not at.exception, at.exception
    pred = at.session_state["predictions"]
    assert not pred.weighted and pred.n == 7214 and pred.model_names == ["score", "score · equal TPR by race"]
    assert any("expanded to its 7,214 rows" in note for note in pred.notes)


def test_data_it_cannot_adjust_gets_a_plain_message():
    rng = np.random.default_rng(3)
    score = rng.uniform(0, 1, 400)
    y = (rng.uniform(0, 1, 400) < score).astype(int)
    group = np.repeat(["a", "b"], 200)
    y[group == "b"] = 0
    pred = build_predictions(pd.DataFrame({"y": y, "score": score, "group": group}),
                             ColumnMapping("y", "score", ("group",)), "one-outcome.csv")
    at = _open(pred, attribute="group")
    assert [e.value for e in at.error] and "has only one outcome" in at.error[0].value
    assert "Traceback" not in _text(at) and "incident" not in _text(at)
    assert not at.button                                       # nothing to add


def test_group_and_model_names_show_as_typed():
    rng = np.random.default_rng(4)
    score = rng.uniform(0, 1, 600)
    y = (rng.uniform(0, 1, 600) < score).astype(int)
    group = np.repeat(["**bold**", "<b>tag</b>", "[a](http://x)"], 200)
    pred = build_predictions(pd.DataFrame({"y": y, "score": score, "group": group}),
                             ColumnMapping("y", "score", ("group",)), "names.csv")
    at = _open(pred, attribute="group")
    assert not at.error and at.metric
    table = at.dataframe[0].value if at.dataframe else None
    shown = list(table["group"]) if table is not None else []
    assert sorted(shown) == sorted(["**bold**", "<b>tag</b>", "[a](http://x)"])


def test_adding_decisions_with_the_model_picker_on_screen_selects_the_new_model():
    """In the app (the sidebar's Model picker is drawn before the page's button runs) the added model is chosen
    when the frame is next drawn, instead of failing to set a drawn widget."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.query_params["sample"] = "adult"
    at.run()
    at.switch_page("app_pages/thresholds.py").run()
    assert not at.exception, at.exception
    at.button(key="thr_add").click().run()
    assert not at.exception, at.exception
    picker = next(s for s in at.selectbox if s.label == "Model")
    assert picker.value == "gradient boosting · equal TPR by sex" and len(picker.options) == 3
    assert at.session_state["predictions"].model_names[-1] == picker.value
