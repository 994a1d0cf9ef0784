"""Regression and multiclass calibration read from real ``Predictions`` (build_predictions with the task type): the
thin ``analyse_*`` give what the array functions give, weighted entries included, and the display renders."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairviz.calibration import (
    MulticlassParams,
    analyse_multiclass,
    analyse_regression,
    multiclass_calibration,
    regression_calibration,
)
from fairviz.calibration.display import CHECK
from fairviz.data import ColumnMapping, DataError, build_predictions
from fairviz.report.render import to_terminal

CLASSES = np.array(["cat", "dog", "bird"])


def display(pred, result):
    """The display list of the calibration check's method for the task of ``pred``."""
    return CHECK.section(pred.task).display(pred, result, None)


@pytest.fixture(scope="module")
def regression_frame():
    rng = np.random.default_rng(0)
    n = 900
    group = rng.choice(["a", "b", "c"], n)
    prediction = rng.normal(50, 10, n)
    target = prediction + rng.normal(0, 5, n) + 6 * (group == "b")
    return pd.DataFrame({"target": target, "y_pred": prediction, "group": group})


@pytest.fixture(scope="module")
def multiclass_frame():
    rng = np.random.default_rng(1)
    n = 1200
    probabilities = rng.dirichlet([1, 1, 1], n)
    labels = (rng.random(n)[:, None] > np.cumsum(probabilities, 1)).sum(1)
    group = rng.choice(["x", "y"], n)
    sharp = probabilities ** np.where(group == "y", 3.0, 1.0)[:, None]    # group y over-confident
    sharp /= sharp.sum(1, keepdims=True)
    return pd.DataFrame({"label": CLASSES[labels], "p_cat": sharp[:, 0], "p_dog": sharp[:, 1],
                         "p_bird": sharp[:, 2], "group": group})


def test_regression_from_predictions(regression_frame):
    pred = build_predictions(regression_frame, ColumnMapping("target", "y_pred", ("group",), task="regression"))
    result = analyse_regression(pred, "group")
    view = pred.groups("group")
    direct = regression_calibration(regression_frame["target"], regression_frame["y_pred"], view.codes, view.names)
    assert result.group_rows() == direct.group_rows() and result.attribute == "group"
    assert result.group("b").mz.joint.p < 0.01 and result.group("a").mz.joint.p > 0.01
    assert "Does calibration in the mean differ by group?" in to_terminal(display(pred, result))
    assert "target" in to_terminal(display(pred, result))      # the target's name reads in the sentences


def test_regression_from_weighted_predictions_is_the_rows_expanded(regression_frame):
    mapping = ColumnMapping("target", "y_pred", ("group",), task="regression")
    weights = np.arange(len(regression_frame)) % 4 + 1
    weighted = analyse_regression(build_predictions(regression_frame, mapping, weights=weights), "group")
    expanded = analyse_regression(build_predictions(regression_frame.loc[regression_frame.index.repeat(weights)],
                                                    mapping), "group")
    for a, b in zip(weighted.group_rows(), expanded.group_rows()):
        assert a["n"] == b["n"] and a["slope"] == pytest.approx(b["slope"], rel=1e-12)
        assert a["f_p"] == pytest.approx(b["f_p"], rel=1e-9)


def test_multiclass_from_predictions(multiclass_frame):
    mapping = ColumnMapping("label", "", ("group",), task="multiclass", class_scores=("p_cat", "p_dog", "p_bird"))
    pred = build_predictions(multiclass_frame, mapping)
    result = analyse_multiclass(pred, "group", MulticlassParams(resamples=100))
    assert result.classes == pred.classes and result.classwise
    view = pred.groups("group")
    direct = multiclass_calibration(pred.y, pred.class_scores, pred.classes, view.codes, view.names,
                                    params=MulticlassParams(resamples=100))
    assert result.group_rows() == direct.group_rows()
    assert result.group("y").top_p_bh < 0.01 and result.group("x").top_test.p > 0.01
    assert "Is any group miscalibrated?" in to_terminal(display(pred, result))


def test_multiclass_from_weighted_predictions_is_the_rows_expanded(multiclass_frame):
    mapping = ColumnMapping("label", "", ("group",), task="multiclass", class_scores=("p_cat", "p_dog", "p_bird"))
    weights = np.arange(len(multiclass_frame)) % 3 + 1
    params = MulticlassParams(resamples=100)
    weighted = analyse_multiclass(build_predictions(multiclass_frame, mapping, weights=weights), "group", params)
    expanded = analyse_multiclass(build_predictions(multiclass_frame.loc[multiclass_frame.index.repeat(weights)],
                                                    mapping), "group", params)
    for a, b in zip(weighted.group_rows(), expanded.group_rows()):
        assert a["n"] == b["n"]
        assert a["top_label_ece"] == pytest.approx(b["top_label_ece"], rel=1e-12)
        assert a["classwise_ece"] == pytest.approx(b["classwise_ece"], rel=1e-12)
        assert a["top_label_ece_ci"] == pytest.approx(b["top_label_ece_ci"], rel=1e-12)


def test_multiclass_from_a_predicted_class_and_its_confidence():
    rng = np.random.default_rng(2)
    n = 600
    frame = pd.DataFrame({"label": rng.integers(0, 3, n), "pred": rng.integers(0, 3, n),
                          "confidence": rng.uniform(0.34, 1, n), "group": rng.choice(["x", "y"], n)})
    mapping = ColumnMapping("label", "confidence", ("group",), task="multiclass", predicted="pred")
    pred = build_predictions(frame, mapping)
    result = analyse_multiclass(pred, "group", MulticlassParams(resamples=50))
    assert not result.classwise and result.class_rows() == []
    assert any("class-wise calibration" in n and "not available" in n for n in result.notes)
    hit = (frame["pred"] == frame["label"]).to_numpy()
    assert result.overall.accuracy == pytest.approx(hit.mean(), abs=1e-12)
    no_confidence = build_predictions(frame.drop(columns="confidence"),
                                      ColumnMapping("label", "", ("group",), task="multiclass", predicted="pred"))
    with pytest.raises(DataError, match="No confidence is mapped"):
        analyse_multiclass(no_confidence, "group")


def test_each_analysis_refuses_the_other_tasks(regression_frame, multiclass_frame):
    regression = build_predictions(regression_frame, ColumnMapping("target", "y_pred", ("group",), task="regression"))
    with pytest.raises(DataError, match="needs a label of several classes; these predictions are regression"):
        analyse_multiclass(regression, "group")
    mapping = ColumnMapping("label", "", ("group",), task="multiclass", class_scores=("p_cat", "p_dog", "p_bird"))
    with pytest.raises(DataError, match="needs a numeric target; these predictions are multiclass classification"):
        analyse_regression(build_predictions(multiclass_frame, mapping), "group")
