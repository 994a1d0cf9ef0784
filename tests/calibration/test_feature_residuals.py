"""fairviz.calibration.feature_residuals: Pearson residuals over features, graphical and model-based ([2] §3)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from fairviz.calibration.feature_residuals import residual_model, residuals_by_feature
from fairviz.calibration.reliability import pearson_residuals
from fairviz.data import ColumnMapping, DataError, build_predictions


def planted(seed: int = 0, n: int = 6000, bias: float = 1.0):
    """The model ignores x's effect for x > 1 (true logit +bias there): residuals should rise with x."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, n)
    noise = rng.normal(0, 1, n)
    base = -1 + 0.8 * noise
    y = rng.binomial(1, expit(base + bias * (x > 1)))
    frame = pd.DataFrame({"y": y, "score": expit(base), "group": rng.choice(["a", "b"], n), "x": x,
                          "colour": rng.choice(["red", "blue", "green"], n)})
    return build_predictions(frame, ColumnMapping(label="y", score="score", groups=("group",), features=("x",)),
                             source="test")


def test_binned_means_match_pandas():
    pred = planted()
    result = residuals_by_feature(pred, "group", "x", n_bins=5)
    r = pearson_residuals(pred.y, pred.score)
    bins = pd.qcut(pred.frame["x"].reset_index(drop=True), 5, labels=False)
    expected = pd.Series(r).groupby(bins).agg(["mean", "count", "std"])
    overall = result.groups["overall"]
    np.testing.assert_allclose(overall.mean, expected["mean"], rtol=1e-10)
    np.testing.assert_array_equal(overall.n, expected["count"])
    half = overall.high - overall.mean
    np.testing.assert_allclose(half, 1.96 * expected["std"] / np.sqrt(expected["count"]), rtol=0.01)
    assert overall.low[-1] > 0                                   # the planted bias is visible in the top bin
    assert result.kind == "numeric" and set(result.groups) == {"a", "b", "overall"}


def test_categorical_feature_has_one_bin_per_level():
    result = residuals_by_feature(planted(), "group", "colour")
    assert result.kind == "categorical" and sorted(result.groups["overall"].label) == ["blue", "green", "red"]


def test_model_based_test_finds_a_planted_bias_and_not_a_random_one():
    found = residual_model(planted(bias=1.5), ["x", "colour"])
    terms = {t.term: t for t in found.terms}
    assert terms["x"].p < 1e-6 and terms["colour"].p > 0.001
    assert found.cv_r2_linear > 0.02 and found.cv_r2_boosting > 0.02 and found.overall.p < 1e-6
    null = residual_model(planted(seed=3, bias=0.0), ["x", "colour"])
    assert null.overall.p > 0.001 and null.cv_r2_linear < 0.005 and null.cv_r2_boosting < 0.005


def test_bad_feature_input_gets_a_message():
    pred = planted(n=500)
    with pytest.raises(DataError, match="not in the file"):
        residuals_by_feature(pred, "group", "nope")
    with pytest.raises(DataError, match="at least one feature"):
        residual_model(pred, [])
