"""Closed-form checks of the explanation metrics and the disparity statistics (spec §7 T1, T2, T6).

No model and no torch: the AOPC rules run against a stub probability function.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from fairviz.explain import METRICS
from fairviz.explain import cohens_d, cohens_d_interval, compare, heatmap_values, mann_whitney_p, paired_wilcoxon_p
from fairviz.explain.metrics import aopc, aopc_many, aopc_rationales, gini, gini_lorenz, normalise, soft_keep_probabilities, sparsity, sensitivity
from fairviz.explain.results import ExplainResult


# ----------------------------------------------------------------------------------------------- T1 complexity

def test_gini_closed_forms():
    assert gini(np.array([0, 0, 0, 1.0])) == pytest.approx(0.75)              # 1 − 1/n
    assert gini(np.full(7, 0.3)) == pytest.approx(0.0, abs=1e-15)
    s = np.array([0.1, -0.5, 0.2, 0.05, 0.15])
    assert gini(3.7 * s) == pytest.approx(gini(s))
    assert gini(-s) == pytest.approx(gini(s))
    assert np.isnan(gini(np.zeros(5)))


def test_gini_forms_agree_on_random_vectors():
    rng = np.random.default_rng(1)
    for n in (1, 2, 3, 10, 57):
        for _ in range(20):
            s = rng.normal(size=n)
            assert gini(s) == pytest.approx(gini_lorenz(s), abs=1e-12)


def test_sparsity_on_l1_normalised_uniform_and_threshold_inclusive():
    assert sparsity(normalise(np.r_[0, np.ones(20), 0])) == 0.0                # 1/20 < 0.1
    assert sparsity(normalise(np.r_[0, np.ones(5), 0])) == 1.0                 # 1/5 ≥ 0.1
    assert sparsity(np.array([0.1, 0.9])) == 1.0                              # inclusive threshold
    assert sparsity(np.array([0.0999, 0.9001])) == 0.5


def test_normalise_drops_specials_and_keeps_sign():
    s = normalise(np.array([5.0, 0.4, -0.2, 0.2, 9.0]))
    assert s.tolist() == pytest.approx([0.5, -0.25, 0.25])
    assert np.abs(s).sum() == pytest.approx(1.0)
    assert not normalise(np.zeros(4)).any()


# ----------------------------------------------------------------------------------------------- T2 AOPC

def test_aopc_rationales_worked_example():
    rationales = aopc_rationales(np.array([0.4, 0.3, -0.2, 0.1]))
    assert [r.tolist() for r in rationales] == [[0], [0, 1], [0, 1, 3]]


def test_int_q_n_equals_integer_arithmetic():
    qs = np.arange(0.1, 1.1, 0.1)
    for n in range(1, 400):
        assert [int(q * n) for q in qs] == [(i * n) // 10 for i in range(1, 11)]


class StubModel:
    """p(gold) is read off a table keyed by the id row, so every AOPC drop is known in advance."""

    def __init__(self, table: dict[tuple, float]):
        self.table, self.seen = table, []

    def __call__(self, rows):
        self.seen.extend(tuple(r) for r in rows)
        p = np.array([self.table[tuple(r)] for r in rows])
        return np.column_stack([1 - p, p])


def test_aopc_is_the_mean_of_the_stubbed_drops_and_deletes_or_keeps_in_order():
    ids = [101, 11, 12, 13, 14, 102]                  # [CLS] t1..t4 [SEP]
    s = np.array([0.4, 0.3, -0.2, 0.1])
    table = {tuple(ids): 0.9,
             (101, 12, 13, 14, 102): 0.7, (101, 13, 14, 102): 0.4, (101, 13, 102): 0.2,     # R deleted
             (101, 11, 102): 0.5, (101, 11, 12, 102): 0.6, (101, 11, 12, 14, 102): 0.85}   # only R, in order
    model = StubModel(table)
    comp, suff = aopc(model, ids, s, 1)
    assert comp == pytest.approx(np.mean([0.9 - 0.7, 0.9 - 0.4, 0.9 - 0.2]))
    assert suff == pytest.approx(np.mean([0.9 - 0.5, 0.9 - 0.6, 0.9 - 0.85]))
    assert set(model.seen) == set(table)


def test_aopc_without_positive_scores():
    ids = [101, 11, 12, 102]
    model = StubModel({tuple(ids): 0.8})
    assert aopc(model, ids, np.array([-0.5, -0.5]), 1) == (0.0, 1.0)


def test_aopc_many_batches_sentences_in_one_call():
    calls = []

    def proba(rows):
        calls.append(len(rows))
        return np.tile([0.3, 0.7], (len(rows), 1))

    out = aopc_many(proba, [([1, 5, 6, 2], np.array([0.5, 0.5]), 1), ([1, 7, 2], np.array([1.0]), 0)])
    assert len(calls) == 1 and out == [(0.0, 0.0), (0.0, 0.0)]


def test_soft_keep_probabilities():
    assert soft_keep_probabilities(np.array([-0.5, 0.0, 0.5])).tolist() == [0.0, 0.5, 1.0]
    assert soft_keep_probabilities(np.array([0.2, 0.2])).tolist() == [0.5, 0.5]


def test_sensitivity_relative_change():
    assert sensitivity(np.array([0.5, 0.5]), np.array([0.5, 0.5])) == 0.0
    assert sensitivity(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == pytest.approx(np.sqrt(2))
    assert np.isnan(sensitivity(np.zeros(3), np.ones(3)))


# ----------------------------------------------------------------------------------------------- T6 statistics

def test_shifted_groups_are_significant_with_a_medium_positive_d():
    rng = np.random.default_rng(0)
    male, female = rng.normal(0.50, 0.1, 300), rng.normal(0.45, 0.1, 300)
    p, d = mann_whitney_p(male, female), cohens_d(male, female)
    assert p <= 0.05 and 0.3 <= d <= 0.7
    assert cohens_d(female, male) == pytest.approx(-d)
    ci = cohens_d_interval(male, female, 1000, 0)
    assert ci.low < d < ci.high and ci.low > 0


def test_degenerate_samples():
    x = np.array([0.3, 0.4, 0.5])
    assert mann_whitney_p(x, x) == 1.0 and cohens_d(x, x) == 0.0
    c = np.full(10, 0.2)
    assert mann_whitney_p(c, c) == 1.0 and cohens_d(c, c) == 0.0
    assert np.isnan(cohens_d(np.full(5, 0.1), np.full(5, 0.9)))       # perfectly separated constants: undefined
    rng = np.random.default_rng(3)
    assert 0 <= mann_whitney_p(rng.normal(size=235), rng.normal(size=999)) <= 1
    assert np.isnan(mann_whitney_p(np.array([np.nan]), x))
    assert mann_whitney_p(np.array([1.0, np.nan, 2.0]), np.array([1.0, 2.0])) == 1.0


def test_cohens_d_uses_the_unweighted_variance_average():
    assert cohens_d(np.array([1, 2, 3.0]), np.array([2, 3, 4, 5, 6.0])) == pytest.approx(-2 / np.sqrt((1 + 2.5) / 2))


def test_mann_whitney_matches_scipy_and_null_false_positive_rate():
    rng = np.random.default_rng(11)
    a, b = rng.normal(size=40), rng.normal(0.3, size=50)
    assert mann_whitney_p(a, b) == pytest.approx(sps.mannwhitneyu(a, b, alternative="two-sided").pvalue)
    hits = sum(mann_whitney_p(rng.normal(size=100), rng.normal(size=120)) <= 0.05 for _ in range(1000))
    assert 0.03 <= hits / 1000 <= 0.08


def test_paired_wilcoxon():
    assert paired_wilcoxon_p(np.zeros(10)) == 1.0
    rng = np.random.default_rng(2)
    assert paired_wilcoxon_p(rng.normal(1.0, 0.5, 40)) < 0.001


# ----------------------------------------------------------------------------------------------- the grid

def _fake_result(values_i, values_j, method="igxi", metric="gini", runs=1) -> ExplainResult:
    rows = []
    for run in range(runs):
        for k, v in enumerate(values_i):
            rows.append({"run": run, "instance_id": 2 * k, "pair_id": k, "group": "male", "label": 1,
                         "method": method, metric: v})
        for k, v in enumerate(values_j):
            rows.append({"run": run, "instance_id": 2 * k + 1, "pair_id": k, "group": "female", "label": 1,
                         "method": method, metric: v})
    scores = pd.DataFrame(rows)
    for m in METRICS:
        if m not in scores:
            scores[m] = np.nan
    meta = {"dataset": {"groups": ["male", "female"], "paired": True}, "runs": {}}
    return ExplainResult(scores, pd.DataFrame(columns=["run", "group", "p_gold_masked"]), pd.DataFrame(), meta)


def test_compare_grid_bh_and_json():
    rng = np.random.default_rng(5)
    result = _fake_result(rng.normal(0.6, 0.1, 60), rng.normal(0.5, 0.1, 60), runs=2)
    report = compare(result, metrics=["gini"], correction="bh")
    cell = report.cell("igxi", "gini")
    assert cell.n_i == cell.n_j == 120 and cell.runs == 2 and cell.runs_significant == 2
    assert cell.significant and cell.considerable and cell.cohens_d > 0.2
    assert cell.higher == "male" and cell.better == "male"                   # Gini: higher is better
    assert cell.p_adjusted == pytest.approx(cell.p_value)                    # one test: BH changes nothing
    payload = json.loads(json.dumps(report.to_dict()))
    c = payload["cells"][0]
    assert set(c) >= {"n", "median", "p_value", "p_adjusted", "cohens_d", "ci"}
    assert c["ci"][0] < c["cohens_d"] < c["ci"][1]
    names, metrics, d, counts = heatmap_values(report)
    assert names == ["IGxI"] and metrics == ["Gini"] and counts[0, 0] == 2 and d[0, 0] == pytest.approx(cell.cohens_d)


def test_lower_is_better_metrics_name_the_other_group():
    rng = np.random.default_rng(6)
    result = _fake_result(rng.normal(0.6, 0.1, 80), rng.normal(0.3, 0.1, 80), metric="sensitivity")
    cell = compare(result, metrics=["sensitivity"]).cell("igxi", "sensitivity")
    assert cell.higher == "male" and cell.better == "female"


def test_undefined_values_are_counted_not_tested():
    result = _fake_result([0.1, 0.2, np.nan, 0.3], [0.4, np.nan, np.nan, 0.5])
    cell = compare(result, metrics=["gini"]).cell("igxi", "gini")
    assert (cell.n_i, cell.undefined_i, cell.n_j, cell.undefined_j) == (3, 1, 2, 2)


# ----------------------------------------------------------------------------------------------- figures

def test_boxplots_send_raw_points_only_for_small_results():
    from fairviz.explain.figures import MAX_POINTS, disparity_heatmap, metric_boxplots
    rng = np.random.default_rng(8)
    small = _fake_result(rng.normal(0.6, 0.1, 30), rng.normal(0.5, 0.1, 30))
    fig = metric_boxplots(small, compare(small, metrics=["gini"]), metrics=["gini"])
    assert [len(t.y) for t in fig.data] == [30, 30] and fig.data[0].boxpoints == "all"
    assert any(a.text == "★" for a in fig.layout.annotations)                  # significant, |d| ≥ 0.2
    big = _fake_result(rng.normal(0.6, 0.1, MAX_POINTS), rng.normal(0.6, 0.1, MAX_POINTS))
    fig = metric_boxplots(big, metrics=["gini"])
    assert all(t.y is None and len(t.q1) == 1 for t in fig.data)              # box statistics only
    assert fig.data[0].median[0] == pytest.approx(np.median(big.scores.query("group == 'male'").gini))
    heat = disparity_heatmap(compare(small, metrics=["gini"]))
    assert heat.data[0].z[0][0] == pytest.approx(compare(small, metrics=["gini"]).cell("igxi", "gini").cohens_d)


def test_model_warnings_name_the_removal_that_creates_a_fallback_class():
    from fairviz.explain import model_warnings
    result = _fake_result([0.1, 0.2], [0.3, 0.4], runs=2)
    inst = pd.DataFrame({"run": [0, 0, 1, 1], "group": ["male", "female"] * 2,
                         "p_gold_empty": [0.99, 0.01, 0.02, 0.98],          # deletion: male, then female
                         "p_gold_masked": [0.5, 0.5, 0.5, 0.5]})             # masking: no fallback
    behaviour = {"label_depends_on_group": False, "apd": 0.001, "twin_prediction_differs_same_label": 0.0,
                 "counterfactual": "twins"}
    meta = {**result.meta, "runs": {"0": {"behaviour": behaviour}, "1": {"behaviour": behaviour}}}
    warnings = model_warnings(ExplainResult(result.scores, inst, result.attributions, meta))
    kinds = [k for k, _ in warnings]
    assert kinds == ["good", "warn"]
    text = warnings[1][1]
    assert "every word deleted" in text and "male in 1, female in 1 of 2" in text and "[MASK]" not in text
    skewed = dict(behaviour, apd=0.2, twin_prediction_differs_same_label=0.1)
    meta["runs"] = {"0": {"behaviour": skewed}}
    warnings = model_warnings(ExplainResult(result.scores, inst.assign(p_gold_empty=0.5), result.attributions, meta))
    assert warnings == [("bad", warnings[0][1])] and "The model itself uses gender" in warnings[0][1]
