"""Several models over the same rows (issue 24): the data model, validation's bad-input messages, and the engine's
one-scan reduction of every model."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import log_loss, roc_auc_score

from fairviz.data import ColumnMapping, DataError, ScoreColumn
from fairviz.data.engine import Engine, reduce_path
from fairviz.data.tasks.binary import JOINT_CELLS
from fairviz.data.validation import build_predictions
from fairviz.data.view import View


def _two_models(n: int, seed: int = 0, decimals: int | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    first = np.clip(0.3 * y + rng.uniform(0, 0.7, n), 0, 1)
    second = np.clip(0.8 * first + 0.2 * rng.uniform(0, 1, n), 0, 1)
    frame = pd.DataFrame({"y": y, "g": rng.choice(["a", "b", "c"], n), "v1": first, "v2": second * 100})
    return frame.round({"v1": decimals, "v2": decimals}) if decimals is not None else frame


MAPPING = ColumnMapping("y", "v1", ("g",), model_name="first",
                        more_scores=(ScoreColumn("v2", scale="percent", name="second"),))


def test_every_model_is_validated_on_the_same_rows_and_viewed_alone():
    frame = _two_models(3000)
    frame.loc[5, "v2"] = np.nan                         # a missing score of the second model drops the row for both
    pred = build_predictions(frame, MAPPING)
    assert pred.model_names == ["first", "second"] and pred.n == 2999
    assert any("of any model" in note for note in pred.notes)
    second = pred.at(View(model="second"))
    expected = frame.drop(index=5)["v2"].to_numpy() / 100
    np.testing.assert_array_equal(second.score, expected)
    assert second.active_model == "second" and second.model_names == ["first", "second"]
    assert second.fingerprint != pred.at(View(model="first")).fingerprint
    assert second.joint() is pred and pred.at(View(model="second")) is second          # built once
    assert pred.mapping.to_dict()["models"][1] == {"column": "v2", "name": "second", "score_scale": "percent",
                                                   "score_direction": "as-is", "direction_confirmed": False}
    with pytest.raises(DataError, match="no model named .third."):
        pred.at(View(model="third"))


@pytest.mark.parametrize("column, words", [
    ("v1", "is already the model 'v1' (one column, two names)"),
    ("out", "values outside [0, 1]"),
    ("flat", "is constant (every row 0.5)"),
    ("text", "non-numeric values"),
    ("reversed", "runs the other way"),
])
def test_a_bad_second_model_is_left_out_with_one_message_and_the_first_is_audited(column, words):
    frame = _two_models(3000).assign(out=lambda f: f["v1"] * 3, flat=0.5, text="high",
                                     reversed=lambda f: 1 - f["v1"])
    pred = build_predictions(frame, ColumnMapping("y", "v1", ("g",), more_scores=(ScoreColumn(column, name="bad"),)))
    left_out = [note for note in pred.notes if note.startswith("Model 'bad' left out")]
    assert len(left_out) == 1 and words in left_out[0]
    assert pred.model_names == ["v1"] and not pred.several_models
    assert roc_auc_score(pred.y, pred.score) > 0.7


def test_two_names_for_one_model_and_a_label_mapped_as_a_model():
    frame = _two_models(500)
    pred = build_predictions(frame, ColumnMapping("y", "v1", ("g",), more_scores=(
        ScoreColumn("v2", scale="percent", name="x"), ScoreColumn("v2", scale="percent", name="y2"))))
    assert pred.model_names == ["v1", "x"]
    assert any("'y2' left out: its column 'v2' is already the model 'x'" in note for note in pred.notes)
    with pytest.raises(DataError, match="label column 'y' is also mapped as a model's score"):
        build_predictions(frame, ColumnMapping("y", "v1", ("g",), more_scores=(ScoreColumn("y"),)))


def test_an_added_model_is_checked_and_joins_the_joint_predictions():
    pred = build_predictions(_two_models(800), MAPPING)
    view = pred.at(View(model="second"))
    added = view.with_added_model("third", 1 - pred.scores["first"] * 0 - 0.5, "a constant half")
    assert added.model_names == ["first", "second", "third"] and added.notes[-1] == "a constant half"
    assert added.fingerprint != pred.fingerprint
    with pytest.raises(DataError, match="already loaded"):
        added.with_added_model("first", pred.score, "")
    with pytest.raises(DataError, match="outside"):
        pred.with_added_model("big", pred.score * 2, "")


def test_exact_engine_reduction_of_two_models_equals_the_row_path(tmp_path):
    frame = _two_models(20_000, decimals=3)
    path = tmp_path / "two.csv"
    frame.to_csv(path, index=False)
    stats = reduce_path(path, MAPPING)
    assert stats.exact and stats.rows == 20_000
    engine, rows = stats.predictions(), build_predictions(frame, MAPPING)
    for model in ("first", "second"):
        e, r = engine.at(View(model=model)), rows.at(View(model=model))
        assert e.n == r.n and e.y.size < r.y.size                      # merged per (group, label, score)
        assert roc_auc_score(e.y, e.score, sample_weight=e.weight) == pytest.approx(roc_auc_score(r.y, r.score),
                                                                                     abs=1e-12)
        assert log_loss(e.y, e.score, sample_weight=e.weight) == pytest.approx(log_loss(r.y, r.score), abs=1e-12)
        np.testing.assert_allclose(np.sort(e.rows().score), np.sort(r.score), rtol=0, atol=1e-15)
    joint = engine.joint()                                          # the pairs are kept: paired tests read them
    order_e = np.lexsort((joint.rows().scores["second"], joint.rows().scores["first"]))
    order_r = np.lexsort((rows.scores["second"], rows.scores["first"]))
    np.testing.assert_allclose(joint.rows().scores["second"][order_e], rows.scores["second"][order_r], atol=1e-15)


def test_binned_reduction_of_two_models_is_each_models_own_reduction_at_the_joint_cells(tmp_path):
    """Above EXACT_ROWS the scan groups by both models' cells; a model's view merges to its own cells, which is
    exactly what a one-model reduction at JOINT_CELLS gives; AUROC and log-loss move by less than 1e-4 (the note)."""
    frame = _two_models(300_000)
    path = tmp_path / "two.csv"
    frame.to_csv(path, index=False)
    stats = reduce_path(path, MAPPING)
    assert stats.resolution == pytest.approx(1 / JOINT_CELLS)
    pred, rows = stats.predictions(), build_predictions(frame, MAPPING)
    assert "less than 1e-4" in pred.notes[-1]
    one = reduce_path(path, MAPPING.for_model(MAPPING.models()[1]), engine=Engine(cells=JOINT_CELLS)).predictions()
    second = pred.at(View(model="second"))
    assert second.y.size == one.y.size
    np.testing.assert_allclose(np.sort(second.score), np.sort(one.score), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(np.sort(second.weight), np.sort(one.weight))
    for model in ("first", "second"):
        e, r = pred.at(View(model=model)), rows.at(View(model=model))
        assert abs(roc_auc_score(e.y, e.score, sample_weight=e.weight) - roc_auc_score(r.y, r.score)) < 1e-4
        assert abs(log_loss(e.y, e.score, sample_weight=e.weight) - log_loss(r.y, r.score)) < 1e-4
        assert np.average(e.score, weights=e.weight) == pytest.approx(r.score.mean(), abs=1e-12)

