"""Calibrate, then re-run (Fairness Beyond Metrics §8.2, Tables 2 and 7): the knee error concentration of a model
and of its recalibration, and "calibrate first" when ECE ≥ 0.15."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from fairviz.calibration import recalibrated_model
from fairviz.core.ece import ece
from fairviz.data import ColumnMapping, build_predictions
from fairviz.data.engine import reduce_path
from fairviz.data.samples import load_sample, sample_path, samples
from fairviz.residuals import RDFParams, analyse, calibration_shape, concentration_of, needs_calibration, readings
from fairviz.data.view import View

PARAMS = RDFParams(resamples=200, knee_resamples=0, seed=3)


def overconfident(n: int = 4000, seed: int = 3) -> pd.DataFrame:
    """Scores four times too confident on the logit scale: ECE ≈ 0.18, the poor regime."""
    rng = np.random.default_rng(seed)
    g = rng.normal(0, 1.2, n)
    return pd.DataFrame({"y": rng.binomial(1, expit(g)), "score": expit(4 * g),
                         "group": np.where(rng.uniform(size=n) < 0.5, "a", "b")})


@pytest.mark.parametrize("weighted", [False, True])
def test_concentration_alone_is_the_audits_concentration(weighted):
    pred = (reduce_path(sample_path("compas"), samples()["compas"].mapping).predictions() if weighted
            else load_sample("compas"))
    assert concentration_of(pred, "race", PARAMS) == analyse(pred, "race", PARAMS).concentration


def test_overconfident_scores_say_calibrate_first_and_temperature_scaling_makes_knees_diagnostic():
    pred = build_predictions(overconfident(), ColumnMapping("y", "score", ("group",)))
    scores, title, note = recalibrated_model(pred, "temperature", "group")
    joint = pred.with_added_model(title, scores, note)
    shape = calibration_shape(joint.at(View(model="score")), joint.at(View(model=title)), "group", PARAMS, note, False)
    assert shape.before.ece == pytest.approx(ece(pred.score, pred.y), abs=1e-15) and shape.before.ece >= 0.15
    assert shape.after.ece == pytest.approx(ece(scores, pred.y), abs=1e-15) and shape.after.ece < 0.05
    assert needs_calibration(shape.before) and not needs_calibration(shape.after)
    assert (shape.before.regime, shape.before.verdict) == ("poor", "not supported")
    assert (shape.after.regime, shape.after.verdict) == ("good", "supported")
    # the knees were found again on the recalibrated scores: the after line is that model's own audit
    assert shape.after == concentration_of(joint.at(View(model=title)), "group", PARAMS)
    words = readings.calibrate_first(shape.before).plain()
    assert words.startswith("Calibrate first.") and "diagnostic only for calibrated models" in words
    assert f"ECE {shape.before.ece:.3f}" in words
    reading = readings.calibration_shape_reading(shape).plain()
    assert f"ECE {shape.before.ece:.3f} (poor) → {shape.after.ece:.3f} (good)" in reading
    assert f"{shape.before.ratio:.2f} → {shape.after.ratio:.2f}" in reading
    table = readings.calibration_shape_table(shape).frame
    assert list(table["model"]) == ["score", "score · temperature"]
    assert list(table["ece"]) == [shape.before.ece, shape.after.ece]
    note_words = readings.calibration_shape_note(shape).plain()
    assert "temperature scaling" in note_words and "not added" in note_words


def test_calibrated_model_does_not_say_calibrate_first():
    c = concentration_of(load_sample("compas"), "race", PARAMS)
    assert c.ece < 0.15 and not needs_calibration(c)
