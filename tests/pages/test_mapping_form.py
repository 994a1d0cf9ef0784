"""The Home page's mapping form (issue 28): it asks what the score is the probability of and which outcome is good for
the person, recognises percentages and logits, never defaults the score to the label, stops a score that runs the
other way with a plain warning and a one-click fix, and stays responsive on a file of 50,000 columns."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score
from streamlit.testing.v1 import AppTest

from fairviz.data import DataError, read_preview
from fairviz.data.view import View
from tests.data.meaning_files import write

ENV = "FAIRVIZ_TEST_UPLOAD"


def _form():
    import os
    from pathlib import Path

    import streamlit as st

    from app_pages import _mapping, _upload
    from fairviz.data import read_preview

    path = Path(os.environ["FAIRVIZ_TEST_UPLOAD"])
    raw = path.read_bytes()
    frame, digest, info = read_preview(raw, path.name)
    _mapping.mapping_form(_upload.Uploaded(frame, digest, path.name, f"{info.rows:,}", f"test-{digest}", raw))
    if "flash" in st.session_state:
        st.success(st.session_state["flash"])


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write(tmp_path_factory.mktemp("form"))


def _open(path, monkeypatch) -> AppTest:
    monkeypatch.setenv(ENV, str(path))
    return AppTest.from_function(_form, default_timeout=180).run()


def _answer(at: AppTest, label: str):
    """The form's answer widgets are keyed per file (their keys carry its digest): found by their label."""
    return next(s for s in at.selectbox if s.label == label)


def _submit(at: AppTest) -> AppTest:
    next(b for b in at.button if b.label == "Use these columns").click().run()
    return at


def test_a_reversed_score_gets_a_warning_and_the_one_click_fix_works(files, monkeypatch):
    at = _open(files["inverted"], monkeypatch)
    assert _answer(at, "The score is the probability of").value == "approved = yes"       # the guess, shown
    assert _answer(at, "The good outcome for the person is").value == "approved = yes"
    _submit(at)
    assert not at.exception and "predictions" not in at.session_state      # nothing loaded, nothing lost
    warning = " ".join(w.value for w in at.warning)
    assert "'p\\_default' runs the other way" in warning or "'p_default' runs the other way" in warning
    assert "approved = no" in warning and "approved = yes" in warning
    at.button(key="direction_reversed").click().run()
    assert not at.exception
    pred = at.session_state["predictions"]
    assert pred.mapping.score_direction == "reversed" and pred.mapping.score == "p_default"
    assert roc_auc_score(pred.y, pred.score, sample_weight=pred.weight) > 0.5
    assert at.session_state["data_benefit"] == "positive"                   # approved = yes is the good outcome
    assert "Loaded 3,000 rows" in at.session_state["flash"]
    assert not any("runs the other way" in w.value for w in at.warning)


def test_the_good_outcome_sets_the_benefit(files, monkeypatch):
    at = _open(files["prob"], monkeypatch)
    _answer(at, "The good outcome for the person is").set_value("approved = no")
    _submit(at)
    assert not at.exception and at.session_state["data_benefit"] == "negative"
    assert at.session_state["predictions"].mapping.positive_label == "yes"


@pytest.mark.parametrize("name, scale, words", [("pct", "percent", "recognised as a percentage in"),
                                                 ("logit", "logit", "recognised as a logit")])
def test_percent_and_logit_scores_are_recognised_and_converted(files, monkeypatch, name, scale, words):
    at = _open(files[name], monkeypatch)
    assert _answer(at, "Score scale").value == scale
    assert any(words in c.value for c in at.caption)
    score = next(s for s in at.selectbox if s.label.startswith("Score column"))
    assert score.value == "score" and "approved" not in score.options      # the label is never offered as a score
    _submit(at)
    pred = at.session_state["predictions"]
    assert pred.mapping.score_scale == scale and 0 <= pred.score.min() and pred.score.max() <= 1
    reference = pd.read_csv(files[f"prob_of_{name}"])["score"].to_numpy()
    np.testing.assert_allclose(np.sort(pred.rows().score), np.sort(reference), rtol=0, atol=1e-12)


def test_the_score_never_defaults_to_the_label(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"outcome": rng.integers(0, 2, 200), "points": rng.uniform(0, 100, 200).round(1),
                          "region": rng.choice(["north", "south"], 200), "customer_id": np.arange(200)})
    path = tmp_path / "points.csv"
    frame.to_csv(path, index=False)
    at = _open(path, monkeypatch)
    label = next(s for s in at.selectbox if s.label.startswith("Label column"))
    score = next(s for s in at.selectbox if s.label.startswith("Score column"))
    assert label.value == "outcome" and score.value == "points" and "region" not in score.options
    assert _answer(at, "Score scale").value == "percent"
    assert at.multiselect[0].value == ["region"]                         # the id is no group


def test_the_widest_file_read_gets_a_capped_form_and_a_wider_one_a_plain_refusal(tmp_path, monkeypatch):
    """A 50,000-column file froze the form (issue 22): files past the reading limit (10,000 columns) are refused
    with one message before any form is drawn; up to it, each role offers at most MAX_OFFERED columns."""
    from app_pages._mapping import MAX_OFFERED
    from fairviz.data.reading import MAX_COLUMNS
    rng = np.random.default_rng(0)
    wide = pd.DataFrame(rng.uniform(size=(20, MAX_COLUMNS - 3)).round(3),
                        columns=[f"f{i}" for i in range(MAX_COLUMNS - 3)])
    wide.insert(0, "sex", rng.choice(["a", "b"], 20))
    wide.insert(0, "score", rng.uniform(size=20).round(3))
    wide.insert(0, "y", [0, 1] * 10)
    path = tmp_path / "wide.csv"
    wide.to_csv(path, index=False)
    at = _open(path, monkeypatch)
    assert not at.exception
    score = next(s for s in at.selectbox if s.label.startswith("Score column"))
    assert score.value == "score" and len(score.options) <= MAX_OFFERED
    assert all(len(m.options) <= MAX_OFFERED for m in at.multiselect)
    assert any(f"This file has {MAX_COLUMNS:,} columns" in c.value and "are not offered" in c.value
               for c in at.caption)
    wider = tmp_path / "wider.csv"
    wider.write_text(",".join(f"c{i}" for i in range(50_000)) + "\n" + ",".join(["1"] * 50_000) + "\n")
    with pytest.raises(DataError, match="has 50,000 columns; the limit is"):
        read_preview(wider.read_bytes(), wider.name)


def test_a_score_with_a_typo_is_offered_so_that_validation_names_it(tmp_path, monkeypatch):
    path = tmp_path / "typo.csv"
    path.write_text("label,score,group\n1,high,A\n0,0.2,B\n1,0.9,A\n")
    at = _open(path, monkeypatch)
    score = next(s for s in at.selectbox if s.label.startswith("Score column"))
    assert score.value == "score" and score.options == ["score"]            # the label is not offered
    _submit(at)
    assert not at.exception and "predictions" not in at.session_state
    assert any("non-numeric values" in e.value for e in at.error)


def test_a_second_model_column_is_offered_as_a_model_not_a_feature_and_both_are_loaded(tmp_path, monkeypatch):
    """Issue 24: 'p_default_v2' beside 'p_default' is guessed as another model (not a feature, which would also send
    the upload down the row-by-row path); both are loaded by the engine and a bad third model is left out plainly."""
    rng = np.random.default_rng(5)
    n = 3000
    y = rng.integers(0, 2, n)
    first = np.clip(0.35 * y + rng.uniform(0, 0.65, n), 0, 1).round(3)
    frame = pd.DataFrame({"defaulted": y, "p_default": first,
                          "p_default_v2": np.clip(first + rng.normal(0, 0.05, n), 0, 1).round(3),
                          "score_flat": 0.5, "region": rng.choice(["north", "south"], n),
                          "income": rng.integers(1000, 9000, n)})
    path = tmp_path / "two_models.csv"
    frame.to_csv(path, index=False)
    at = _open(path, monkeypatch)
    others = next(m for m in at.multiselect if m.label.startswith("Other models"))
    features = next(m for m in at.multiselect if m.label.startswith("Feature columns"))
    assert others.value == ["p_default_v2"] and "p_default_v2" not in features.value
    assert "score_flat" in others.options                 # offered (numeric), not guessed (constant)
    others.set_value(["p_default_v2", "score_flat"])
    features.set_value([])
    _submit(at)
    pred = at.session_state["predictions"]
    assert pred.weighted and pred.model_names == ["p_default", "p_default_v2"]
    np.testing.assert_allclose(np.sort(pred.at(View(model="p_default_v2")).rows().score),
                               np.sort(frame["p_default_v2"]))
    flash = at.session_state["flash"]
    assert "2 models: p_default, p_default_v2" in flash
    assert "Model 'score_flat' left out: The score column 'score_flat' is constant" in flash


@pytest.fixture(scope="module")
def task_files(tmp_path_factory):
    """A regression file (target, prediction, a second model, a group) and a multiclass one (p_<class> columns)."""
    folder = tmp_path_factory.mktemp("tasks")
    rng = np.random.default_rng(3)
    n = 800
    group = rng.choice(["north", "south"], n)
    price = rng.normal(200, 40, n)
    predicted = price + rng.normal(0, 10, n) + 15 * (group == "south")
    pd.DataFrame({"price": price, "price_pred": predicted, "pred_v2": predicted - 10 * (group == "south"),
                  "region": group}).to_csv(folder / "houses.csv", index=False)
    classes = np.array(["cat", "dog", "bird"])
    label = rng.integers(0, 3, n)
    probabilities = rng.dirichlet([2, 2, 2], n)
    pd.DataFrame({"animal": classes[label], "p_cat": probabilities[:, 0], "p_dog": probabilities[:, 1],
                  "p_bird": probabilities[:, 2], "region": group}).to_csv(folder / "animals.csv", index=False)
    pd.DataFrame({"y": rng.integers(0, 2, n), "score": rng.random(n), "region": group}).to_csv(
        folder / "binary.csv", index=False)
    return {"regression": folder / "houses.csv", "multiclass": folder / "animals.csv", "binary": folder / "binary.csv"}


def test_a_regression_upload_is_guessed_shown_and_loaded(task_files, monkeypatch):
    at = _open(task_files["regression"], monkeypatch)
    task = next(r for r in at.radio if r.label == "Task")
    assert task.value == "regression"                                   # guessed from the numeric target
    assert next(s for s in at.selectbox if s.label == "Target column (numbers)").value == "price"
    assert next(s for s in at.selectbox if s.label == "Prediction column (numbers)").value == "price_pred"
    _submit(at)
    assert not at.exception
    pred = at.session_state["predictions"]
    frame = pd.read_csv(task_files["regression"])
    assert pred.task == "regression" and pred.model_names == ["price_pred", "pred_v2"]
    rows = pred.rows()                                  # the engine's entries, one per row again
    np.testing.assert_allclose(np.sort(rows.y), np.sort(frame["price"].to_numpy()), rtol=1e-12)
    assert pred.n == len(frame)
    assert "regression, reduced to" in at.session_state["flash"]


def test_a_multiclass_upload_maps_its_class_columns(task_files, monkeypatch):
    at = _open(task_files["multiclass"], monkeypatch)
    assert next(r for r in at.radio if r.label == "Task").value == "multiclass"
    columns = next(m for m in at.multiselect if m.label == "Class probability columns (one per class)")
    assert columns.value == ["p_cat", "p_dog", "p_bird"]
    _submit(at)
    assert not at.exception
    pred = at.session_state["predictions"]
    assert pred.task == "multiclass" and pred.classes == ("cat", "dog", "bird")
    labels = pd.read_csv(task_files["multiclass"])["animal"]
    counts = np.bincount(pred.y, weights=pred.weight, minlength=3)
    assert dict(zip(pred.classes, counts)) == labels.value_counts().to_dict()


def test_choosing_regression_for_a_binary_label_is_refused_in_one_sentence(task_files, monkeypatch):
    at = _open(task_files["binary"], monkeypatch)
    assert next(r for r in at.radio if r.label == "Task").value == "binary"
    next(r for r in at.radio if r.label == "Task").set_value("regression").run()
    assert next(s for s in at.selectbox if s.label == "Target column (numbers)").value == "y"
    _submit(at)
    assert not at.exception and "predictions" not in at.session_state
    shown = " ".join(e.value for e in at.error)
    assert "The target column 'y' has two values (0, 1): that is a binary task" in shown.replace("\\", "")
