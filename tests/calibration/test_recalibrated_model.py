"""Recalibration added as a model (issue 24, "Recalibrate, then re-run"): the new model's scores are the standalone
recalibration's, so auditing it on the evaluation rows reproduces the standalone's numbers exactly, on rows and on
the engine's weighted table (exact and binned)."""
from __future__ import annotations

import numpy as np
import pytest

from fairviz.calibration import RecalParams, recalibrate, recalibrated_model, recalibration_base
from fairviz.calibration.performance import brier, log_loss
from fairviz.calibration.recalibration import fit
from fairviz.core.ece import ece
from fairviz.data import DataError
from fairviz.data import engine as engine_module
from fairviz.data.engine import reduce_path
from fairviz.data.samples import load_sample, sample_path, samples
from fairviz.data.view import View

ATTRIBUTE = "sex"


def judged(score, y, codes, names, evaluation) -> dict:
    """ECE, log-loss and Brier per group and overall on the evaluation rows (what the standalone reports)."""
    out = {}
    for g, name in [*enumerate(names), (None, "overall")]:
        rows = evaluation if g is None else evaluation & (codes == g)
        out[name] = (ece(score[rows], y[rows]), log_loss(y[rows], score[rows]), brier(y[rows], score[rows]))
    return out


def standalone(result, method) -> dict:
    fitted = result.method(method)
    return {name: (m.ece, m.log_loss, m.brier) for name, m in fitted.metrics.items()}


def assert_same(got: dict, expected: dict) -> None:
    assert got.keys() == expected.keys()
    for name in expected:
        np.testing.assert_allclose(got[name], expected[name], rtol=0, atol=1e-12, err_msg=name)


@pytest.fixture(scope="module")
def adult():
    return load_sample("adult")


@pytest.mark.parametrize("model", ["gradient boosting", "logistic regression"])
@pytest.mark.parametrize("per_group", [False, True])
def test_added_model_reproduces_the_standalone_recalibration_on_rows(adult, model, per_group):
    params = RecalParams(per_group=per_group)
    view = adult.at(View(model=model))
    result = recalibrate(view.rows(), ATTRIBUTE, params)          # the Calibration page's call, every method at once
    evaluation = ~result.calibration_rows
    for method in params.methods:
        scores, title, note = recalibrated_model(view, method, ATTRIBUTE, params)
        added = adult.with_added_model(title, scores, note).at(View(model=title))
        assert added.active_model == title and title in added.model_names
        groups = added.groups(ATTRIBUTE)
        assert_same(judged(added.score, added.y, groups.codes, groups.names, evaluation), standalone(result, method))
        # a real change of the scores, not the original model again
        assert not np.allclose(added.score, view.score)


def test_per_group_recalibration_applies_each_groups_own_map(adult):
    view = adult.at(View(model="gradient boosting"))
    scores, _, _ = recalibrated_model(view, "platt", ATTRIBUTE, RecalParams(per_group=True))
    groups = view.groups(ATTRIBUTE)
    result = recalibrate(view, ATTRIBUTE, RecalParams(methods=("platt",), per_group=True))
    descriptions = result.method("platt").descriptions
    assert set(descriptions) == set(groups.names)
    for g, name in enumerate(groups.names):
        # each group's scores fitted on that group's calibration rows alone
        rows = groups.codes == g
        cal = result.calibration_rows & rows
        np.testing.assert_allclose(scores[rows], fit("platt", view.score[cal], view.y[cal])(view.score[rows]),
                                   rtol=0, atol=1e-15)
    overall, _, _ = recalibrated_model(view, "platt", ATTRIBUTE)
    assert not np.allclose(scores, overall)


def test_title_and_note_say_what_was_fitted_where(adult):
    scores, title, note = recalibrated_model(adult, "isotonic", ATTRIBUTE)
    assert title == "gradient boosting · isotonic"              # the joint predictions: the first model
    assert "a random 50% of rows (seed 0) calibrate" in note and "8,141 evaluation rows" in note
    assert "ECE 0.012 →" in note
    _, title, note = recalibrated_model(adult.at(View(model="logistic regression")), "temperature", ATTRIBUTE,
                                        RecalParams(per_group=True, fraction=0.3, seed=4))
    assert title == "logistic regression · temperature per sex"
    assert "one map per sex group" in note and "a random 30% of rows (seed 4)" in note
    assert "Male: p̃ = expit(logit p̂ /" in note and "Female: p̃ = expit(logit p̂ /" in note
    models = [*adult.model_names, title]
    assert recalibration_base(title, models) == "logistic regression"
    assert recalibration_base("gradient boosting · isotonic", models) == "gradient boosting"
    assert recalibration_base("logistic regression", models) is None


def test_a_taken_name_is_refused_plainly(adult):
    scores, title, note = recalibrated_model(adult, "platt", ATTRIBUTE)
    once = adult.with_added_model(title, scores, note)
    with pytest.raises(DataError, match="already loaded"):
        once.with_added_model(title, scores, note)


def _engine_joint(monkeypatch, binned: bool):
    if binned:                       # the Adult sample is small: reduce it as a large file is (joint score cells)
        monkeypatch.setattr(engine_module, "EXACT_ROWS", 0)
    return reduce_path(sample_path("adult"), samples()["adult"].mapping).predictions()


@pytest.mark.parametrize("binned", [False, True])
@pytest.mark.parametrize("per_group", [False, True])
def test_added_model_reproduces_the_standalone_recalibration_on_weighted_data(monkeypatch, binned, per_group):
    joint = _engine_joint(monkeypatch, binned)
    assert joint.weighted and joint.several_models and bool(joint.resolution) == binned
    params = RecalParams(per_group=per_group)
    for model in joint.model_names:
        view = joint.at(View(model=model))
        rows = view.rows()                          # what the Calibration page recalibrates on weighted data
        result = recalibrate(rows, ATTRIBUTE, params)
        evaluation = ~result.calibration_rows
        for method in ("platt", "isotonic"):
            scores, title, note = recalibrated_model(view, method, ATTRIBUTE, params)
            added = joint.with_added_model(title, scores, note)
            # the added model's rows, put in the order of the standalone's rows: sorted by groups, label and the
            # recalibrated model's score (binned: its cell), as the one-model view is
            expanded = added.rows()
            original = expanded.scores[model]
            key = np.floor(original * round(1 / joint.resolution)) if joint.resolution else original
            codes = [v.codes for v in expanded.attributes.values()]
            order = np.lexsort((key, expanded.y, *reversed(codes)))
            assert np.array_equal(expanded.y[order], rows.y)
            for name in rows.attributes:
                assert np.array_equal(expanded.attributes[name].codes[order], rows.attributes[name].codes)
            groups = rows.groups(ATTRIBUTE)
            got = judged(expanded.scores[title][order], rows.y, groups.codes, groups.names, evaluation)
            assert_same(got, standalone(result, method))
