"""Per-group thresholds: constraints hold exactly in expectation, the optimum matches fairlearn's
ThresholdOptimizer (a grid search over the same hulls), and the realised decisions are label-blind and seeded."""
import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from fairviz.data.samples import load_sample
from fairviz.thresholds import ThresholdParams, decide, explore, fit, roc_vertices

fairlearn_postprocessing = pytest.importorskip("fairlearn.postprocessing")


class _Scores(ClassifierMixin, BaseEstimator):
    """A fitted 'estimator' whose prediction is the score column (fairlearn needs an estimator object)."""
    def fit(self, X, y):
        self.classes_ = np.array([0, 1])
        return self

    def predict(self, X):
        return np.asarray(X)[:, 0]


def _compas():
    pred = load_sample("compas")
    view = pred.groups("race")
    return pred.y, pred.score, view.codes, view.names


@pytest.mark.parametrize("constraint", ["equal_tpr", "equalized_odds", "equal_selection"])
def test_constraints_hold_exactly_in_expectation(constraint):
    y, score, codes, names = _compas()
    policy = fit(y, score, codes, names, ThresholdParams(constraint))
    assert policy.max_gap < 1e-9
    for rule in policy.rules:                                  # the rule's rates are what its decisions give
        member = codes == list(names).index(rule.group)
        p = rule.positive_probability(score[member])
        yy = y[member].astype(bool)
        assert p[yy].mean() == pytest.approx(rule.tpr, abs=1e-12)
        assert p[~yy].mean() == pytest.approx(rule.fpr, abs=1e-12)


FAIRLEARN = {"equal_tpr": "true_positive_rate_parity", "equalized_odds": "equalized_odds",
             "equal_selection": "demographic_parity"}


@pytest.mark.parametrize("constraint", list(FAIRLEARN))
def test_optimum_matches_fairlearn_threshold_optimizer(constraint):
    y, score, codes, names = _compas()
    groups = np.asarray(names, dtype=object)[codes]
    optimizer = fairlearn_postprocessing.ThresholdOptimizer(
        estimator=_Scores(), constraints=FAIRLEARN[constraint], objective="accuracy_score", prefit=True,
        predict_method="predict", grid_size=2000)
    X = score[:, None]
    optimizer.fit(X, y, sensitive_features=groups)
    pmf = optimizer._pmf_predict(X, sensitive_features=groups)[:, 1]
    theirs = np.mean(np.where(y == 1, pmf, 1 - pmf))
    ours = fit(y, score, codes, names, ThresholdParams(constraint)).accuracy
    # fairlearn searches a grid of 2,000 rates; the programme finds the exact optimum, so ours is never worse
    assert ours >= theirs - 1e-9
    # methods.md: to 3e-5; measured 1.4e-7 (TPR), 9.6e-8 (selection), 2.46e-5 (odds): fairlearn's 2,000-rate grid
    assert ours - theirs < 3e-5


def test_hull_vertices_and_weights():
    score = np.array([0.9, 0.9, 0.8, 0.3, 0.2, 0.1])
    y = np.array([1, 0, 1, 0, 1, 0])
    counts = np.array([2, 1, 1, 3, 1, 2])
    rows = np.repeat(np.arange(6), counts)
    weighted = roc_vertices(score, y, counts.astype(float))
    expanded = roc_vertices(score[rows], y[rows], np.ones(rows.size))
    for a, b in zip(weighted, expanded):
        np.testing.assert_allclose(a, b)
    thresholds, fpr, tpr = weighted
    assert thresholds[0] == np.inf and (fpr[0], tpr[0]) == (0, 0) and (fpr[-1], tpr[-1]) == (1, 1)
    assert np.all(np.diff(fpr) > 0) and np.all(np.diff(np.diff(tpr) / np.diff(fpr)) < 0)   # concave hull


def test_slack_bounds_the_gap_and_the_curve_trades_accuracy_for_it():
    y, score, codes, names = _compas()
    audit = explore(y, score, codes, names, ThresholdParams("equal_tpr", slack=0.1), tau=0.4)
    assert audit.policy.max_gap <= 0.1 + 1e-9
    gaps = [p.max_gap for p in audit.curve]
    accuracy = [p.accuracy for p in audit.curve]
    assert all(g <= s + 1e-9 for g, s in zip(gaps, (p.slack for p in audit.curve)))
    assert all(b >= a - 1e-12 for a, b in zip(accuracy, accuracy[1:]))          # more slack, never less accuracy
    assert audit.curve[-1].accuracy >= audit.single_threshold.accuracy - 1e-9


def test_decisions_are_seeded_label_blind_and_near_the_expected_rates():
    y, score, codes, names = _compas()
    policy = fit(y, score, codes, names, ThresholdParams("equal_tpr", seed=3))
    p1, d1 = decide(policy, score, codes, names)
    _, d2 = decide(policy, score, codes, names)
    np.testing.assert_array_equal(d1, d2)
    for rule in policy.rules:
        member = (codes == list(names).index(rule.group)) & (y == 1)
        if member.sum() > 500:
            sd = np.sqrt((p1[member] * (1 - p1[member])).sum()) / member.sum()
            assert abs(d1[member].mean() - rule.tpr) < 4 * sd + 1e-12


def test_a_group_with_one_outcome_is_named():
    with pytest.raises(ValueError, match="'b' has only one outcome"):
        fit(np.array([1, 0, 1, 1]), np.array([0.9, 0.2, 0.7, 0.6]), np.array([0, 0, 1, 1]), ["a", "b"])
