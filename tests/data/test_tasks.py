"""Task types in the data model: regression and multiclass predictions validated, guessed from their columns, and
refused with one plain sentence when a column says another task."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from fairviz.data.tasks import spec_of
from fairviz.data import ColumnMapping, DataError, ScoreColumn, build_predictions, guess_mapping
from fairviz.data.view import View

CLASSES = np.array(["cat", "dog", "bird"])


@pytest.fixture(scope="module")
def regression_frame():
    rng = np.random.default_rng(0)
    n = 600
    group = rng.choice(["a", "b", "c"], n)
    target = rng.normal(50, 10, n)
    prediction = target + rng.normal(0, 5, n) + 3 * (group == "b")
    return pd.DataFrame({"target": target, "y_pred": prediction, "pred_v2": 0.9 * prediction + 5,
                         "age": rng.integers(18, 80, n), "group": group})


@pytest.fixture(scope="module")
def multiclass_frame():
    rng = np.random.default_rng(1)
    n = 600
    labels = rng.integers(0, 3, n)
    probabilities = rng.dirichlet([1, 1, 1], n)
    return pd.DataFrame({"label": CLASSES[labels], "p_cat": probabilities[:, 0], "p_dog": probabilities[:, 1],
                         "p_bird": probabilities[:, 2], "group": rng.choice(["x", "y"], n)})


def test_a_regression_is_guessed_and_keeps_its_numbers(regression_frame):
    mapping = guess_mapping(regression_frame)
    assert (mapping.task, mapping.label, mapping.score) == ("regression", "target", "y_pred")
    assert "pred_v2" in mapping.candidate_scores and "age" in mapping.features
    pred = build_predictions(regression_frame, mapping)
    assert pred.task == "regression" and not spec_of(pred).thresholded
    np.testing.assert_array_equal(pred.y, regression_frame["target"].to_numpy())
    np.testing.assert_array_equal(pred.score, regression_frame["y_pred"].to_numpy())
    assert pred.mapping.to_dict()["task"] == "regression"


def test_regression_models_share_the_rows(regression_frame):
    frame = regression_frame.copy()
    frame.loc[3, "pred_v2"] = np.nan
    mapping = ColumnMapping("target", "y_pred", ("group",), task="regression",
                            more_scores=(ScoreColumn("pred_v2", name="v2"),))
    pred = build_predictions(frame, mapping)
    assert pred.model_names == ["y_pred", "v2"] and pred.y.size == len(frame) - 1
    assert "1 of 600 rows dropped" in pred.notes[0]
    np.testing.assert_array_equal(pred.at(View(model="v2")).score, frame["pred_v2"].dropna().to_numpy())


def test_a_two_valued_target_is_a_binary_task_not_a_regression(regression_frame):
    frame = regression_frame.assign(target=(regression_frame.target > 50).astype(int))
    with pytest.raises(DataError, match=r"two values \(0, 1\): that is a binary task"):
        build_predictions(frame, ColumnMapping("target", "y_pred", ("group",), task="regression"))


def test_text_in_a_target_names_the_column_and_examples(regression_frame):
    frame = regression_frame.astype({"target": object})
    frame.loc[[1, 2], "target"] = "n/a?"
    with pytest.raises(DataError, match=r"target column 'target' has 2 non-numeric values \(e.g. 'n/a\?'\)"):
        build_predictions(frame, ColumnMapping("target", "y_pred", ("group",), task="regression"))


def test_class_probability_columns_give_classes_predictions_and_confidence(multiclass_frame):
    mapping = guess_mapping(multiclass_frame)
    assert mapping.task == "multiclass" and mapping.class_scores == ("p_cat", "p_dog", "p_bird")
    assert mapping.classes == ("cat", "dog", "bird") and mapping.score == ""
    pred = build_predictions(multiclass_frame, mapping)
    probabilities = multiclass_frame[["p_cat", "p_dog", "p_bird"]].to_numpy()
    np.testing.assert_array_equal(pred.class_scores, probabilities)
    np.testing.assert_array_equal(pred.predicted, probabilities.argmax(axis=1))
    np.testing.assert_array_equal(pred.score, probabilities.max(axis=1))
    np.testing.assert_array_equal(np.asarray(pred.classes)[pred.y], multiclass_frame["label"].to_numpy())
    assert not pred.notes                                      # the rows sum to 1


def test_probabilities_that_do_not_sum_to_one_are_noted_and_outside_zero_one_refused(multiclass_frame):
    mapping = ColumnMapping("label", "", ("group",), task="multiclass", class_scores=("p_cat", "p_dog", "p_bird"))
    halved = multiclass_frame.assign(p_cat=multiclass_frame.p_cat / 2)
    pred = build_predictions(halved, mapping)
    assert any("do not sum to 1" in note for note in pred.notes)
    with pytest.raises(DataError, match="'p_dog' has values outside \\[0, 1\\]"):
        build_predictions(multiclass_frame.assign(p_dog=multiclass_frame.p_dog * 3), mapping)


def test_a_label_value_without_a_probability_column_is_named(multiclass_frame):
    frame = multiclass_frame.copy()
    frame.loc[0, "label"] = "fish"
    mapping = ColumnMapping("label", "", ("group",), task="multiclass", class_scores=("p_cat", "p_dog", "p_bird"))
    with pytest.raises(DataError, match="values with no class probability column: 'fish'"):
        build_predictions(frame, mapping)


def test_two_classes_are_a_binary_task(multiclass_frame):
    frame = multiclass_frame[multiclass_frame.label != "bird"]
    mapping = ColumnMapping("label", "", ("group",), task="multiclass", class_scores=("p_cat", "p_dog"))
    with pytest.raises(DataError, match="2 classes .* binary task"):
        build_predictions(frame, mapping)


def test_a_predicted_class_with_its_confidence():
    rng = np.random.default_rng(2)
    n = 300
    frame = pd.DataFrame({"label": rng.integers(1, 4, n), "pred": rng.integers(0, 4, n),
                          "confidence": rng.random(n), "group": rng.choice(["x", "y"], n)})
    mapping = guess_mapping(frame)
    assert (mapping.task, mapping.predicted, mapping.score) == ("multiclass", "pred", "confidence")
    pred = build_predictions(frame, mapping)
    assert pred.classes == ("0", "1", "2", "3") and pred.class_scores is None       # label ∪ predicted, by value
    np.testing.assert_array_equal(pred.y, frame["label"].to_numpy())
    np.testing.assert_array_equal(pred.predicted, frame["pred"].to_numpy())
    assert any("No row has the label '0'" in note for note in pred.notes)
    with pytest.raises(DataError, match="confidence column 'confidence' has values outside"):
        build_predictions(frame.assign(confidence=frame.confidence * 10), mapping)


def test_weighted_entries_expand_to_rows_with_their_classes(multiclass_frame):
    mapping = ColumnMapping("label", "", ("group",), task="multiclass", class_scores=("p_cat", "p_dog", "p_bird"))
    weights = np.arange(1, len(multiclass_frame) + 1) % 3 + 1
    pred = build_predictions(multiclass_frame, mapping, weights=weights)
    rows = pred.rows()
    assert rows.y.size == weights.sum() and rows.class_scores.shape == (weights.sum(), 3)
    np.testing.assert_array_equal(rows.predicted, np.repeat(pred.predicted, weights))


def test_binary_mappings_keep_their_json():
    mapping = ColumnMapping("y", "p", ("g",))
    assert "task" not in mapping.to_dict()


def test_an_unknown_task_is_one_sentence(regression_frame):
    with pytest.raises(DataError, match="The task 'ranking' is not one of binary, regression, multiclass"):
        build_predictions(regression_frame, ColumnMapping("target", "y_pred", ("group",), task="ranking"))


def test_one_vs_rest_reads_a_class_as_a_binary_audit(multiclass_frame):
    mapping = ColumnMapping("label", "", ("group",), task="multiclass", class_scores=("p_cat", "p_dog", "p_bird"))
    pred = build_predictions(multiclass_frame, mapping)
    dog = pred.at(View(class_name="dog"))
    assert spec_of(dog).thresholded and dog.mapping.positive_label == "dog" and dog.mapping.score == "p_dog"
    np.testing.assert_array_equal(dog.y, (multiclass_frame.label == "dog").to_numpy().astype(np.int8))
    np.testing.assert_array_equal(dog.score, multiclass_frame.p_dog.to_numpy())
    assert dog.fingerprint != pred.fingerprint and dog is pred.at(View(class_name="dog"))
    with pytest.raises(DataError, match="There is no class 'fish'"):
        pred.at(View(class_name="fish"))
    hard = build_predictions(multiclass_frame.assign(pred=multiclass_frame.label.shift(1).fillna("cat")),
                             ColumnMapping("label", "", ("group",), task="multiclass", predicted="pred"))
    np.testing.assert_array_equal(hard.at(View(class_name="cat")).score,
                                  (hard.predicted == hard.classes.index("cat")).astype(float))


def test_a_regression_with_a_two_valued_group_is_still_guessed_a_regression():
    """A two-valued group column is not taken for the label when a prediction column (no probability) and a
    numeric target of many values are there."""
    rng = np.random.default_rng(4)
    price = rng.normal(100, 20, 500)
    frame = pd.DataFrame({"price": price, "y_pred": price + rng.normal(0, 5, 500),
                          "age": rng.integers(18, 80, 500), "sex": rng.choice(["F", "M"], 500)})
    mapping = guess_mapping(frame)
    assert (mapping.task, mapping.label, mapping.score, mapping.groups) == ("regression", "price", "y_pred", ("sex",))
    binary = pd.DataFrame({"label": rng.integers(0, 2, 500), "prediction": rng.random(500),
                           "sex": rng.choice(["F", "M"], 500)})
    assert guess_mapping(binary).task == "binary"                  # a probability named "prediction": binary


def test_a_thousand_classes_are_refused_in_one_sentence():
    rng = np.random.default_rng(6)
    n = 3000
    frame = pd.DataFrame({"label": (np.arange(n) % 1000).astype(str), "pred": rng.integers(0, 1000, n).astype(str),
                          "group": rng.choice(["x", "y"], n)})
    mapping = ColumnMapping("label", "", ("group",), task="multiclass", predicted="pred")
    with pytest.raises(DataError) as err:
        build_predictions(frame, mapping)
    assert len(err.value.problems) == 1
    assert "name 1,000 classes; a multiclass audit takes at most 100" in err.value.problems[0]


def test_probabilities_that_miss_one_are_normalised_when_asked_on_both_paths(multiclass_frame, tmp_path):
    """The note offers normalising; asked for, each row's probabilities are divided by their sum, by validation on
    the row path and in the engine's SQL (the same numbers)."""
    from fairviz.data.engine import reduce_path
    frame = multiclass_frame.assign(p_cat=multiclass_frame.p_cat * 0.5)        # rows now sum to 1 − p_cat / 2
    mapping = ColumnMapping("label", "", ("group",), task="multiclass", class_scores=("p_cat", "p_dog", "p_bird"))
    as_given = build_predictions(frame, mapping)
    assert any("Normalising divides each row's by their sum" in note for note in as_given.notes)
    asked = replace(mapping, normalise=True)
    rows = build_predictions(frame, asked)
    raw = frame[["p_cat", "p_dog", "p_bird"]].to_numpy()
    np.testing.assert_allclose(rows.class_scores, raw / raw.sum(axis=1, keepdims=True), rtol=1e-12)
    assert any("were normalised" in note for note in rows.notes)
    path = tmp_path / "animals.csv"
    frame.to_csv(path, index=False)
    engine = reduce_path(path, asked).predictions().rows()
    key = lambda p: np.lexsort(p.class_scores.T)                                # the engine's entries: any order
    np.testing.assert_allclose(engine.class_scores[key(engine)], rows.class_scores[key(rows)], rtol=1e-9)


def test_prediction_interval_columns_give_each_groups_coverage(regression_frame):
    """Quantile columns named by level (q0.05, q0.95) reach calibration in the mean: each group's coverage of the
    central 90% interval is the share of its rows inside it."""
    from fairviz.report.options import AuditParams
    from fairviz.calibration.mincer_zarnowitz_display import SECTION as REGRESSION_CALIBRATION
    frame = regression_frame.assign(q0_05=regression_frame.y_pred - 8, q0_95=regression_frame.y_pred + 8)
    frame = frame.rename(columns={"q0_05": "q0.05", "q0_95": "q0.95"})
    mapping = ColumnMapping("target", "y_pred", ("group",), task="regression", quantiles=("q0.05", "q0.95"))
    pred = build_predictions(frame, mapping)
    assert pred.quantile_levels == (0.05, 0.95) and pred.quantiles.shape == (len(frame), 2)
    result = REGRESSION_CALIBRATION.run(pred, AuditParams(attribute="group"))
    inside = (frame.target >= frame["q0.05"]) & (frame.target <= frame["q0.95"])
    b = frame.group == "b"
    coverage_b = next(r for r in result.coverage_rows() if r["group"] == "b")
    assert coverage_b["nominal"] == pytest.approx(0.9) and coverage_b["n"] == b.sum()
    assert coverage_b["coverage"] == pytest.approx(inside[b].mean(), abs=1e-12)
    with pytest.raises(DataError, match="The quantile column 'y_pred' does not name its level"):
        build_predictions(frame, ColumnMapping("target", "y_pred", ("group",), task="regression", quantiles=("y_pred",)))
