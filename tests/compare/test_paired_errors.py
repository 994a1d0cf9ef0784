"""Two regression models compared (issue 24 × issue 25): each group's MAE, bias and MSE difference is a paired t-test
on the rows (scipy's ``ttest_rel``), a gap's change Welch's test on the two groups' paired differences (scipy's
``ttest_ind(equal_var=False)``), engine counts weigh as the rows they stand for, and the regression sample's Group
parity page shows the comparison with these numbers."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from streamlit.testing.v1 import AppTest

from fairviz.compare import CompareParams
from fairviz.compare import compare_errors
from fairviz.core.wording import fmt_p
from fairviz.data import ColumnMapping, DataError, build_predictions
from fairviz.data.model import ScoreColumn
from fairviz.data.samples import load_sample
from fairviz.compare.display import errors_display, to_dict
from fairviz.report.render import to_terminal
from tests.conftest import ROOT


def _data(n=3000, seed=0, shift=4.0):
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1])
    y = rng.normal(100, 10, n)
    frame = pd.DataFrame({"y": y, "pa": y + rng.normal(0, 5, n) + (g == "b") * shift,
                          "pb": y + rng.normal(0, 5, n), "g": g})
    mapping = ColumnMapping("y", "pa", ("g",), task="regression", more_scores=(ScoreColumn("pb"),))
    return frame, build_predictions(frame, mapping)


def test_each_groups_difference_is_scipys_paired_t_test():
    frame, pred = _data()
    result = compare_errors(pred, "g")
    assert result.reference == "a"                                 # the largest group
    for group in ("a", "b", "c"):
        rows = frame[frame["g"] == group]
        ea, eb = rows["pa"] - rows["y"], rows["pb"] - rows["y"]
        for metric, (la, lb) in {"mae": (ea.abs(), eb.abs()), "bias": (ea, eb), "mse": (ea ** 2, eb ** 2)}.items():
            d = result.difference(metric, group)
            assert d.value_a == pytest.approx(la.mean(), rel=1e-12) and d.value_b == pytest.approx(lb.mean(), rel=1e-12)
            assert d.difference == pytest.approx((lb - la).mean(), rel=1e-10)
            assert d.p_value == pytest.approx(sps.ttest_rel(lb, la).pvalue, rel=1e-9)
            ci = sps.ttest_rel(lb, la).confidence_interval(0.95)
            assert (d.ci.low, d.ci.high) == pytest.approx((ci.low, ci.high), rel=1e-9)


def test_a_gaps_change_is_welchs_test_on_the_paired_differences():
    frame, pred = _data()
    result = compare_errors(pred, "g")
    d_rows = (frame["pb"] - frame["y"]).abs() - (frame["pa"] - frame["y"]).abs()
    welch = sps.ttest_ind(d_rows[frame["g"] == "b"], d_rows[frame["g"] == "a"], equal_var=False)
    gap = result.difference("mae_gap", "b")
    assert gap.reference == "a"
    assert gap.p_value == pytest.approx(welch.pvalue, rel=1e-9)
    ci = welch.confidence_interval(0.95)
    assert (gap.ci.low, gap.ci.high) == pytest.approx((ci.low, ci.high), rel=1e-9)
    mae = {m: {g: (frame.loc[frame["g"] == g, m] - frame.loc[frame["g"] == g, "y"]).abs().mean() for g in "ab"}
           for m in ("pa", "pb")}
    assert gap.value_a == pytest.approx(mae["pa"]["b"] - mae["pa"]["a"], rel=1e-12)
    assert gap.value_b == pytest.approx(mae["pb"]["b"] - mae["pb"]["a"], rel=1e-12)
    # the planted gap (model a over-predicts group b by 4) is found closed by model b, beyond noise after BH
    bias_gap = result.difference("bias_gap", "b")
    assert bias_gap.value_a == pytest.approx(4.0, abs=0.6) and abs(bias_gap.value_b) < 0.6
    assert bias_gap.p_adjusted < 1e-6
    sentences = to_terminal(errors_display(result))
    assert "pb closes the bias gap of b against a" in sentences


def test_bh_adjusts_the_whole_family_and_null_models_rarely_differ():
    from statsmodels.stats.multitest import multipletests
    _, pred = _data(shift=0.0, seed=3)
    result = compare_errors(pred, "g")
    p = [d.p_value for d in result.differences]
    assert [d.p_adjusted for d in result.differences] == pytest.approx(list(multipletests(p, method="fdr_bh")[1]))
    flagged = 0
    for seed in range(20):
        _, null = _data(shift=0.0, seed=100 + seed)
        flagged += any(d.p_adjusted < 0.05 for d in compare_errors(null, "g").differences)
    assert flagged <= 3                 # two exchangeable models: at most a few of 20 runs flag anything


def test_engine_counts_weigh_as_the_rows_they_stand_for():
    frame, pred = _data(n=600)
    doubled = build_predictions(pd.concat([frame, frame], ignore_index=True), pred.mapping)
    weighted = build_predictions(frame.assign(w=2), pred.mapping)
    from dataclasses import replace
    weighted = replace(weighted, weight=np.full(len(frame), 2, np.int64))
    by_rows, by_weight = compare_errors(doubled, "g"), compare_errors(weighted, "g")
    for d_rows, d_weight in zip(by_rows.differences, by_weight.differences):
        assert d_weight.difference == pytest.approx(d_rows.difference, rel=1e-10)
        assert d_weight.p_value == pytest.approx(d_rows.p_value, rel=1e-9)
        assert d_weight.n == d_rows.n


def test_one_model_or_a_binary_task_is_refused_plainly():
    frame, pred = _data()
    one = build_predictions(frame, ColumnMapping("y", "pa", ("g",), task="regression"))
    with pytest.raises(DataError, match="two different models"):
        compare_errors(one, "g")
    with pytest.raises(DataError, match="regression"):
        compare_errors(load_sample("compas"), "race")


def test_the_regression_samples_parity_page_compares_its_two_models():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params["sample"] = "adult_hours"
    at.run()
    at.switch_page("app_pages/parity.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="compare_a").value == "gradient boosting"
    assert at.selectbox(key="compare_b").value == "linear regression"
    differences = next(df.value for df in at.dataframe if "Δ (second − first)" in df.value.columns)
    expected = compare_errors(load_sample("adult_hours"), "sex", None, "gradient boosting", "linear regression",
                                  CompareParams())
    row = differences[(differences["Metric"] == "MAE") & (differences["Group"] == "Female")].iloc[0]
    want = expected.difference("mae", "Female")
    assert row["Δ (second − first)"] == pytest.approx(want.difference)
    assert row["p (BH)"] == fmt_p(want.p_adjusted)
    assert any("linear regression" in i.value for i in at.info)          # the readings
    data = to_dict(expected)
    assert data["differences"]["mae|Female"]["difference"] == pytest.approx(want.difference)


def test_the_command_line_writes_a_regressions_comparison(tmp_path):
    from fairviz.cli.main import main
    import json
    frame, _ = _data()
    path, out, html = tmp_path / "r.csv", tmp_path / "r.json", tmp_path / "r.html"
    frame.to_csv(path, index=False)
    code = main(["audit", str(path), "--task", "regression", "--label", "y", "--score", "pa", "--score", "pb",
                 "--group", "g", "--json", str(out), "--html", str(html)])
    assert code == 0
    data = json.loads(out.read_text())
    assert "errors" not in data
    comparison = data["comparison"]["pa_vs_pb"]
    d_rows = (frame["pb"] - frame["y"]).abs() - (frame["pa"] - frame["y"]).abs()
    assert comparison["differences"]["mae|b"]["difference"] == pytest.approx(d_rows[frame["g"] == "b"].mean())
    assert comparison["readings"][0].startswith("pb closes the bias gap of b against a")
    assert "Errors per model and group" in html.read_text()
