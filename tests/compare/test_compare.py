"""compare_models: the paired differences per group are paired_differences on the group's entries, the pair metrics
are the parity and residual pages' own numbers for each model, BH runs over the whole family, and the readings name
the right direction and never headline a tiny group."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from fairviz.compare import CompareParams, compare_models, paired_differences, readings
from fairviz.compare.paired import family_statistic, metric_statistic
from fairviz.compare.readings import headlines
from fairviz.core import stats
from fairviz.data import ColumnMapping, DataError, ScoreColumn, build_predictions
from fairviz.data.samples import load_sample, samples
from fairviz.parity import ParityParams
from fairviz.parity import analyse as parity_analyse
from fairviz.compare import display as section
from fairviz.residuals import f_dist
from fairviz.data.view import View

FAST = CompareParams(resamples=150, permutations=150, seed=3)


@pytest.fixture(scope="module")
def adult():
    return load_sample("adult")


@pytest.fixture(scope="module")
def adult_sex(adult):
    return compare_models(adult, "sex", 0.5, "positive", None, params=FAST)


def test_per_group_differences_are_paired_differences_on_the_groups_entries(adult, adult_sex):
    """Every group's metrics come from the family's one resample restricted to the group's entries: the values and
    DeLong's test are paired_differences' on those entries exactly, and the intervals and permutation p-values agree
    with its own resampling within Monte Carlo error."""
    view = adult.groups("sex")
    a, b = adult.scores["gradient boosting"], adult.scores["logistic regression"]
    many = replace(FAST, resamples=1000, permutations=1000)
    result = compare_models(adult, "sex", 0.5, "positive", None, params=many)
    for k, name in enumerate(view.names):
        mask = view.codes == k
        expected = paired_differences(adult.y[mask], a[mask], b[mask], None, many.resamples, many.permutations,
                                      many.seed)
        for metric, e in expected.items():
            got = result.difference(metric, name)
            assert got.value_a == e.value_a and got.value_b == e.value_b
            assert got.difference == pytest.approx(-e.difference, abs=1e-15)          # b − a
            assert got.test == e.test and got.n == int(mask.sum())
            width, own = got.ci.high - got.ci.low, e.ci.high - e.ci.low
            assert 0.8 < width / own < 1.25, (name, metric, width, own)
            assert got.ci.low == pytest.approx(-e.ci.high, abs=0.25 * own)
            if metric == "auroc":
                assert got.p_value == e.p_value                                    # DeLong's, on the entries
            else:
                assert got.p_value == pytest.approx(e.p_value, abs=0.05) or min(got.p_value, e.p_value) > 0.2
    overall = paired_differences(adult.y, a, b, None, FAST.resamples, FAST.permutations, FAST.seed)
    assert adult_sex.difference("auroc").difference == pytest.approx(-overall["auroc"].difference, abs=1e-15)
    assert adult_sex.difference("auroc").value_a == pytest.approx(0.926, abs=5e-4)


def test_a_family_member_on_a_subset_reads_the_subsets_own_counts():
    """One draw feeds the family: a member restricted to a subset computes exactly what the statistic computes on
    the subset's entries with the subset's columns of the draw."""
    rng = np.random.default_rng(5)
    y = rng.binomial(1, 0.4, 500).astype(float)
    score, model = rng.random(500), np.zeros(500, np.int8)
    subset = rng.random(500) < 0.3
    family = family_statistic([("all|", None, metric_statistic(y)), ("part|", subset, metric_statistic(y))])
    counts = stats.bootstrap_counts(np.ones(500, np.int64), 40, rng)
    got = family(np.arange(500), score, model)(counts)
    alone = metric_statistic(y)(np.flatnonzero(subset), score[subset], model[subset])(counts[:, subset])
    whole = metric_statistic(y)(np.arange(500), score, model)(counts)
    for metric in alone:
        np.testing.assert_array_equal(got[f"part|{metric}"], alone[metric])
        np.testing.assert_array_equal(got[f"all|{metric}"], whole[metric])


def test_pair_metrics_are_the_parity_and_residual_pages_numbers(adult, adult_sex):
    assert adult_sex.reference == "Male"                                  # the largest group by default
    for side, model in ((0, "gradient boosting"), (1, "logistic regression")):
        one = adult.at(View(model=model))
        parity = parity_analyse(one, "sex", ParityParams(threshold=0.5, benefit="positive"))
        expected = {"ofi": parity.matrices["ofi"].value("Female", "Male"),
                    "di": parity.matrices["di"].value("Female", "Male"),
                    "fpr_gap": parity.matrices["fpr_gap"].value("Female", "Male")}
        view = one.groups("sex")
        d = one.score - one.y
        expected["f_dist"] = f_dist(d[view.codes == view.names.index("Female")],
                                    d[view.codes == view.names.index("Male")])
        for metric, value in expected.items():
            got = adult_sex.difference(metric, "Female", pair=True)
            assert (got.value_a, got.value_b)[side] == pytest.approx(value, abs=1e-12), (model, metric)
        row = adult_sex.table[(adult_sex.table.model == model) & (adult_sex.table.group == "Female")].iloc[0]
        female = next(g for g in parity.groups if g.name == "Female")
        assert row.selection_rate == pytest.approx(female.benefit_rate)
        assert row.fpr == pytest.approx(female.counts.fpr()) and row.n == 5421


def test_benjamini_hochberg_runs_over_the_whole_family(adult_sex):
    p = [d.p_value for d in adult_sex.differences]
    assert len(p) == 4 + 2 * 4 + 4 + 3              # every row, each group, the one pair, knee concentration
    assert [d.p_adjusted for d in adult_sex.differences] == pytest.approx(list(stats.benjamini_hochberg(p)))
    assert any(d.p_adjusted > d.p_value for d in adult_sex.differences)


def test_the_pair_resample_is_paired():
    """One resample feeds both models: for two nearly identical models the interval of the OFI difference is far
    narrower than either model's own OFI spread."""
    pred = _two_models(seed=1, bias_a=0.10, bias_b=0.10, noise=0.01)
    result = compare_models(pred, "group", 0.5, params=FAST)
    d = result.difference("ofi", "B", pair=True)
    assert d.ci.high - d.ci.low < 0.02


def _two_models(seed: int, bias_a: float, bias_b: float, noise: float = 0.05, tiny: int = 0,
                tiny_bias: float = 0.0) -> object:
    """Two groups of 3,000 (and optionally a tiny group C): model a raises the scores of group B's negatives by
    ``bias_a`` (more false positives for B), model b by ``bias_b``."""
    rng = np.random.default_rng(seed)
    groups = np.array(["A"] * 3000 + ["B"] * 3000 + ["C"] * tiny)
    y = rng.binomial(1, 0.4, groups.size)
    base = np.clip(0.25 + 0.45 * y + rng.normal(0, 0.15, groups.size), 0.01, 0.99)
    negatives_b = (groups == "B") & (y == 0)
    a = np.clip(base + bias_a * negatives_b + tiny_bias * (groups == "C") * (y == 0), 0, 1)
    b = np.clip(base + bias_b * negatives_b + rng.normal(0, noise, groups.size), 0, 1)
    frame = pd.DataFrame({"y": y, "a": a, "b": b, "group": groups})
    mapping = ColumnMapping("y", "a", ("group",), score_scale="probability", score_direction="as-is",
                            model_name="old", more_scores=(ScoreColumn("b", "probability", "as-is", "new"),))
    return build_predictions(frame, mapping, source="test")


def test_the_reading_names_the_direction():
    fairer = compare_models(_two_models(2, bias_a=0.25, bias_b=0.0), "group", 0.5, params=FAST)
    words = {"unit": "applicants", "label_negative": "who repaid", "predicted_positive": "predicted to default"}
    top = headlines(fairer)[0]
    assert (top.group, top.reference) == ("B", "A")                 # a fairness gap headlines first
    assert readings.readings(fairer, words)[0].plain().startswith(("new closes the", "new halves the"))
    gap = fairer.difference("fpr_gap", "B", pair=True)
    assert gap.value_a > 0.1 and abs(gap.value_b) < 0.1 * gap.value_a and gap.ci.high < 0 and gap.p_adjusted < 0.05
    sentence = readings.reading(fairer, gap, words).plain()
    assert sentence.startswith(f"new closes the FPR gap for B applicants against A: {gap.value_a:.3f} → ")
    assert "The FPR counts applicants who repaid yet predicted to default." in sentence
    worse = compare_models(_two_models(2, bias_a=0.05, bias_b=0.25), "group", 0.5, params=FAST)
    gap = worse.difference("fpr_gap", "B", pair=True)
    assert readings.reading(worse, gap, words).plain().startswith("new doubles the FPR gap for B applicants")
    assert readings.readings(worse, words)[0].plain().startswith(("new doubles the", "new widens the"))


def test_a_tiny_group_never_headlines():
    result = compare_models(_two_models(4, bias_a=0.0, bias_b=0.0, tiny=60, tiny_bias=0.6), "group", 0.5,
                            reference="A", params=FAST)
    tiny = result.difference("fpr_gap", "C", pair=True)
    assert tiny.p_adjusted < 0.05 and abs(tiny.difference) > 0.3          # real, large, and tiny
    assert all("C" not in (d.group, d.reference) for d in headlines(result))
    assert "Groups under 100 rows are in the tables but never headline a reading: C." in \
        [t.plain() for t in readings.readings(result)]


def test_one_model_or_the_same_model_twice_is_one_plain_message(adult):
    with pytest.raises(DataError, match="two different models"):
        compare_models(adult, "sex", 0.5, model_a="gradient boosting", model_b="gradient boosting", params=FAST)
    with pytest.raises(DataError, match="no model named 'v3'"):
        compare_models(adult, "sex", 0.5, model_a="gradient boosting", model_b="v3", params=FAST)
    with pytest.raises(DataError, match="two different models"):
        compare_models(load_sample("compas"), "race", 0.5, params=FAST)


def test_the_display_list_shows_each_topic_its_part(adult_sex):
    words = samples()["adult"].words
    every = section.display(adult_sex, None, words)
    parity = section.display(adult_sex, "parity", words)
    calibration = section.display(adult_sex, "calibration", words)
    metrics = {name: set(section_table(items, "compare_differences").frame.metric)
               for name, items in (("every", every), ("parity", parity), ("calibration", calibration))}
    assert metrics["parity"] == {"OFI", "DI", "FPR gap"}
    assert metrics["calibration"] == {"ECE", "log-loss", "Brier score", "AUROC"}
    assert metrics["every"] == metrics["parity"] | metrics["calibration"] | {"F_dist", "knee concentration"}
    figures = [i.key[0] for i in every if hasattr(i, "build")]
    assert figures == ["compare.reliability", "compare.residuals"]
    assert [i.key[0] for i in parity if hasattr(i, "build")] == []
    for item in every:
        if hasattr(item, "build"):
            fig = item.figure()
            assert all(len(trace.x) <= 2000 for trace in fig.data)
            assert {t.name for t in fig.data} >= {"gradient boosting", "logistic regression"} or \
                any("logistic regression" in t.name for t in fig.data)


def section_table(items, key):
    from fairviz.core.display import tables
    return tables(items)[key]


def test_knee_concentration_is_the_residual_pages_ratio_for_each_model(adult, adult_sex):
    from fairviz.residuals import RDFParams
    from fairviz.residuals import analyse as residual_analyse
    for side, model in ((0, "gradient boosting"), (1, "logistic regression")):
        own = residual_analyse(adult.at(View(model=model)), "sex", RDFParams(resamples=0, knee_resamples=0))
        got = adult_sex.difference("knee_ratio")
        assert (got.value_a, got.value_b)[side] == pytest.approx(own.concentration.ratio, rel=1e-12), model
    d = adult_sex.difference("knee_ratio")
    assert d.ci.low <= d.difference <= d.ci.high and d.test.startswith("paired permutation")
    assert adult_sex.difference("knee_ratio", "Female").n == 5421


def test_many_entries_resample_merged_cells_around_the_exact_values(adult):
    """Above max_entries the intervals and permutation tests resample the entries merged to 1/50 cells per model,
    re-centred on values computed on every entry: the values are the unmerged comparison's exactly, and each
    interval's width is the unmerged one's within Monte Carlo error."""
    params = replace(FAST, resamples=400, permutations=400)
    plain = compare_models(adult, "sex", 0.5, "positive", None, params=params)
    merged = compare_models(adult, "sex", 0.5, "positive", None, params=replace(params, max_entries=1000))
    assert "merged to cells of 1/50 per model, split at τ" in merged.notes[0] and not plain.notes
    for p, m in zip(plain.differences, merged.differences):
        assert (p.metric, p.group, p.reference) == (m.metric, m.group, m.reference)
        assert m.value_a == p.value_a and m.value_b == p.value_b and m.difference == p.difference
        if p.metric == "auroc":
            assert m.p_value == p.p_value                          # DeLong's test on every entry
        if p.metric == "knee_ratio":                               # not resampled on merged cells: said so
            assert np.isnan(m.p_value) and m.test.startswith("not resampled")
            continue
        width_p, width_m = p.ci.high - p.ci.low, m.ci.high - m.ci.low
        if np.isfinite(width_p) and width_p > 1e-9:
            assert 0.6 < width_m / width_p < 1.6, (p.metric, p.group, width_p, width_m)
            assert m.ci.low <= m.difference <= m.ci.high or abs(m.difference - (m.ci.low + m.ci.high) / 2) < width_m


def test_resampled_f_dist_on_the_grid_is_within_its_stated_error_of_the_exact_distance():
    """Many entries: the resamples' F_dist reads residuals on a grid (the observed value stays exact); on scores
    like a model's the grid moves each resample's distance by less than 2e-5 (the docstring's figure)."""
    from fairviz.compare.analysis import ResidualDistances
    rng = np.random.default_rng(8)
    n = 9000
    group = rng.choice(3, n, p=[0.5, 0.3, 0.2])
    y = rng.binomial(1, 0.4, n).astype(float)
    d = np.clip(0.25 + 0.45 * y + rng.normal(0, 0.15, n) + 0.05 * (group == 1), 0, 1) - y
    weight = rng.integers(1, 50, n)
    distances = ResidualDistances(d, group, 3, reference=0)
    assert distances.step > 0
    draws = stats.bootstrap_counts(weight, 60, rng)
    on_grid = distances(draws, [1, 2])
    observed = distances(weight[None, :], [1, 2])
    distances.step = 0.0                                        # the exact path on the same draws
    exact = distances(draws, [1, 2])
    for k in (1, 2):
        assert np.max(np.abs(on_grid[k] - exact[k])) < 2e-5
        assert observed[k][0] == distances(weight[None, :], [k])[k][0]       # observed values: exact


def test_merged_cells_keep_every_count_at_the_threshold_and_every_sum_of_scores(adult):
    from fairviz.data.model import merged_cells
    for tau in (0.47, 0.5, 0.333):
        merged = merged_cells(adult, 50, tau)
        assert merged.y.size < adult.y.size / 4                # every attribute kept: sex, race, …
        for title in adult.model_names:
            w = merged.weight
            codes, merged_codes = adult.groups("sex").codes, merged.groups("sex").codes
            for g in range(2):
                for label in (0, 1):
                    rows = (codes == g) & (adult.y == label)
                    cells = (merged_codes == g) & (merged.y == label)
                    assert w[cells].sum() == rows.sum()
                    assert (w[cells] * (merged.scores[title][cells] >= tau)).sum() == \
                        (adult.scores[title][rows] >= tau).sum()
                    assert (w[cells] * merged.scores[title][cells]).sum() == \
                        pytest.approx(adult.scores[title][rows].sum(), rel=1e-12)
