"""fairviz.calibration.recalibration: monotone maps fitted on a calibration split and judged on the rest ([2] §5)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.special import expit
from sklearn.isotonic import IsotonicRegression

from fairviz.calibration import recalibration as R
from fairviz.calibration.performance import brier, log_loss
from fairviz.calibration.reliability import logit
from fairviz.data import ColumnMapping, DataError, build_predictions

GRID = expit(np.linspace(-14, 8, 500))


def lecture_like(seed: int, n: int = 8000):
    """γ ~ N(−3, 1.5), y ~ Bernoulli(expit(0.927 + 1.586γ)), p̂ = expit(γ): the lecture's under-confident model."""
    rng = np.random.default_rng(seed)
    gamma = rng.normal(-3, 1.5, n)
    return expit(gamma), rng.binomial(1, expit(0.927 + 1.586 * gamma))


@pytest.mark.parametrize("seed", range(5))
def test_every_method_is_monotone_and_improves_held_out_rows(seed):
    score, y = lecture_like(seed)
    cal = np.arange(score.size) < score.size // 2
    for method in ("platt", "isotonic", "spline", "temperature"):
        mapper = R.fit(method, score[cal], y[cal])
        assert np.diff(mapper(GRID)).min() >= -1e-12, method
        after = mapper(score[~cal])
        if method == "isotonic":                       # a step function can put 0 on a positive: judge by Brier
            assert brier(y[~cal], after) < brier(y[~cal], score[~cal])
        elif method != "temperature":                  # no intercept: cannot fix the lecture's bias in the large
            assert log_loss(y[~cal], after) < log_loss(y[~cal], score[~cal]), method
    assert R.fit("spline", score[cal], y[cal]).params["success"]


def test_platt_matches_statsmodels_and_isotonic_matches_sklearn():
    score, y = lecture_like(11, 3000)
    platt = R.fit_platt(score, y)
    ref = sm.GLM(y, sm.add_constant(logit(score)), family=sm.families.Binomial()).fit()
    assert (platt.params["a"], platt.params["b"]) == pytest.approx(tuple(ref.params), rel=1e-7)
    iso = R.fit_isotonic(score, y)
    sk = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(score, y)
    np.testing.assert_allclose(iso(GRID), sk.predict(GRID), atol=1e-12)


def test_temperature_recovers_a_known_temperature():
    rng = np.random.default_rng(2)
    gamma = rng.normal(0, 2, 40_000)
    y = rng.binomial(1, expit(gamma / 2.0))            # the scores are twice as confident as they should be
    assert R.fit_temperature(expit(gamma), y).params["T"] == pytest.approx(2.0, rel=0.05)


def test_spline_is_monotone_beyond_the_calibration_range():
    score, y = lecture_like(4, 2000)
    mapper = R.fit_monotone_spline(score, y)
    outside = expit(np.linspace(-30, 30, 200))
    assert np.diff(mapper(outside)).min() >= -1e-12
    assert np.all((mapper(outside) >= 0) & (mapper(outside) <= 1))


def _pred(frame):
    return build_predictions(frame, ColumnMapping(label="y", score="score", groups=("group",)), source="test")


def test_one_class_calibration_split_gets_a_clear_message():
    frame = pd.DataFrame({"y": [0, 0, 0, 0, 1, 1], "score": [0.1, 0.2, 0.3, 0.4, 0.8, 0.9],
                          "group": ["a", "b"] * 3, "fold": ["cal"] * 4 + ["test"] * 2})
    pred = _pred(frame)
    with pytest.raises(DataError, match="only negative outcomes"):
        R.recalibrate(pred, "group", R.RecalParams(split_column="fold", split_value="cal"))
    with pytest.raises(DataError, match="no calibration rows"):
        R.recalibrate(pred, "group", R.RecalParams(split_column="group", split_value="nonexistent"))


def test_split_column_per_group_and_download():
    rng = np.random.default_rng(6)
    n = 4000
    score = rng.uniform(0.02, 0.98, n)
    group = np.where(np.arange(n) % 2 == 0, "a", "b")
    y = rng.binomial(1, np.where(group == "a", score, expit(logit(score) + 1.0)))     # b is under-predicted
    fold = np.where(rng.uniform(size=n) < 0.5, "cal", "test")
    pred = _pred(pd.DataFrame({"y": y, "score": score, "group": group, "fold": fold}))
    shared = R.recalibrate(pred, "group", R.RecalParams(methods=("platt",), split_column="fold", split_value="cal"))
    split = R.recalibrate(pred, "group", R.RecalParams(methods=("platt",), split_column="fold", split_value="cal",
                                                       per_group=True))
    np.testing.assert_array_equal(shared.calibration_rows, fold == "cal")
    # One map cannot fix a gap between groups; one map per group can.
    gap = lambda r: abs(r.methods[0].metrics["a"].ece - r.methods[0].metrics["b"].ece)  # noqa: E731
    assert split.methods[0].metrics["b"].ece < shared.methods[0].metrics["b"].ece
    assert gap(split) < gap(shared)
    assert split.methods[0].label.endswith("per group") and set(split.methods[0].descriptions) == {"a", "b"}
    frame = R.recalibrated_frame(pred, split)
    assert list(frame.columns) == ["row", "y", "group", "split", "score", "score_platt_per_group"]
    assert len(frame) == n and set(frame["split"]) == {"calibration", "evaluation"}


def test_per_group_keeps_a_group_that_cannot_be_fitted():
    rng = np.random.default_rng(1)
    score = rng.uniform(0.05, 0.95, 600)
    y = rng.binomial(1, score)
    group = np.repeat(["big", "tiny"], [590, 10])
    y[group == "tiny"] = 0
    pred = _pred(pd.DataFrame({"y": y, "score": score, "group": group}))
    result = R.recalibrate(pred, "group", R.RecalParams(methods=("platt",), per_group=True))
    method = result.methods[0]
    assert "tiny" in method.problems and "left as they were" in method.problems["tiny"]
    tiny = pred.groups("group").mask("tiny")
    np.testing.assert_array_equal(method.scores[tiny], pred.score[tiny])


def test_random_split_is_seeded():
    score, y = lecture_like(0, 1000)
    pred = _pred(pd.DataFrame({"y": y, "score": score, "group": np.repeat(["a", "b"], 500)}))
    a = R.recalibrate(pred, "group", R.RecalParams(methods=("platt",), fraction=0.3, seed=5))
    b = R.recalibrate(pred, "group", R.RecalParams(methods=("platt",), fraction=0.3, seed=5))
    np.testing.assert_array_equal(a.calibration_rows, b.calibration_rows)
    assert a.calibration_rows.sum() == 300
