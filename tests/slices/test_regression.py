"""Regression and multiclass slices: per-slice mean residual (prediction − target), MAE and RMSE equal a row-level
computation, Welch's test equals scipy's on the rows, DuckDB = pandas, a planted slice is found, null data rarely
flag; multiclass error rates per slice."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from fairviz.data.engine import Engine
from fairviz.data.model import ColumnMapping, DataError
from fairviz.data.sources import locate
from fairviz.data.validation import build_predictions
from fairviz.slices import SliceParams, find_slices, slice_counts
from fairviz.slices.sql import engine_slice_counts
from tests.slices.data import ATTRIBUTES, regression_frame, regression_predictions

NAMES = tuple(ATTRIBUTES)


def masks(data: pd.DataFrame, name: str) -> np.ndarray:
    pieces = [p.split("=", 1) for p in name.split(" ∧ ")]
    return np.logical_and.reduce([data[a].to_numpy() == v for a, v in pieces])


@pytest.mark.parametrize("metric", ["mean_residual", "mae"])
def test_regression_slice_metrics_and_welch_test_equal_the_rows(metric):
    data = regression_frame(3_000, seed=31, planted=True)
    result = find_slices(slice_counts(regression_predictions(data), min_support=30), SliceParams(metric=metric))
    table = result.table.set_index("slice")
    residual = (data["prediction"] - data["target"]).to_numpy()
    assert len(table) == 2 + 3 + 4 + 6 + 8 + 12 + 24 and result.counts.task == "regression"
    for name, row in table.iterrows():
        inside = masks(data, name)
        r, rest = residual[inside], residual[~inside]
        assert row["n"] == inside.sum()
        assert abs(row["mean_residual"] - r.mean()) < 1e-12 and abs(row["mae"] - np.abs(r).mean()) < 1e-12
        assert abs(row["rmse"] - np.sqrt((r ** 2).mean())) < 1e-12
        values, others = (r, rest) if metric == "mean_residual" else (np.abs(r), np.abs(rest))
        assert abs(row["metric"] - values.mean()) < 1e-12 and abs(row["rest"] - others.mean()) < 1e-12
        welch = sps.ttest_ind(values, others, equal_var=False)
        assert row["p"] == pytest.approx(welch.pvalue, rel=1e-8, abs=1e-300)
        ci = welch.confidence_interval(0.95)
        assert row["ci_low"] == pytest.approx(ci.low, rel=1e-8) and row["ci_high"] == pytest.approx(ci.high, rel=1e-8)


def test_duckdb_regression_counts_equal_the_pandas_path(tmp_path):
    data = regression_frame(5_000, seed=32, planted=True)
    data.loc[::101, "target"] = np.nan                # rows the query and the validation leave out
    path = tmp_path / "r.parquet"
    data.to_parquet(path)
    sql = engine_slice_counts(Engine("duckdb"), locate(path, "duckdb"), "target", "prediction", NAMES, 3, 50,
                              task="regression")
    ours = slice_counts(regression_predictions(data.dropna()), min_support=50)
    assert any("50 rows without a finite target and prediction were left out" in n for n in sql.notes)
    a = find_slices(sql, SliceParams(metric="mae")).table.set_index("slice").sort_index()
    b = find_slices(ours, SliceParams(metric="mae")).table.set_index("slice").sort_index()
    assert list(a.index) == list(b.index) and len(a) > 40
    for column in ("n", "mean_residual", "mae", "rmse", "metric", "rest", "p", "p_adjusted", "ci_low"):
        np.testing.assert_allclose(a[column].to_numpy(float), b[column].to_numpy(float), rtol=1e-9, atol=1e-12)
    pruned_sql = engine_slice_counts(Engine("duckdb"), locate(path, "duckdb"), "target", "prediction", NAMES, 3, 50,
                                     task="regression", metric="mae", top_k=3)
    pruned = slice_counts(regression_predictions(data.dropna()), min_support=50, metric="mae", top_k=3)
    assert pruned_sql.search == pruned.search


def test_a_planted_regression_slice_is_found_while_each_attribute_alone_is_weaker():
    data = regression_frame(20_000, seed=33, planted=True)
    table = find_slices(slice_counts(regression_predictions(data)),
                        SliceParams(metric="mean_residual")).table.set_index("slice")
    planted = table.loc["sex=F ∧ age=18-25"]
    assert planted["significant"] and planted["p_adjusted"] < 0.05
    assert planted["difference"] == pytest.approx(0.6, abs=0.15)
    assert planted["ci_low"] <= 0.6 <= planted["ci_high"]
    assert table.index[0].startswith("sex=F ∧ age=18-25")


def test_null_regression_data_rarely_flag_a_slice():
    runs_with_any = sum(bool(find_slices(slice_counts(regression_predictions(regression_frame(4_000, seed=400 + s)),
                                                      min_support=50), SliceParams(metric="mean_residual"))
                             .table["significant"].any()) for s in range(20))
    assert runs_with_any <= 1


def test_multiclass_slices_count_errors_per_slice():
    rng = np.random.default_rng(34)
    n = 6_000
    group = rng.choice(["a", "b", "c"], n)
    region = rng.choice(["N", "S"], n)
    label = rng.choice(["cat", "dog", "bird"], n)
    wrong = rng.random(n) < np.where((group == "a") & (region == "N"), 0.45, 0.25)
    other = {"cat": "dog", "dog": "bird", "bird": "cat"}
    predicted = np.where(wrong, [other[v] for v in label], label)
    data = pd.DataFrame({"group": group, "region": region, "label": label, "predicted": predicted})
    pred = build_predictions(data, ColumnMapping("label", "", ("group", "region"), task="multiclass",
                                                 predicted="predicted"))
    result = find_slices(slice_counts(pred, min_support=50), SliceParams(metric="error_rate"))
    table = result.table.set_index("slice")
    errors = data["label"] != data["predicted"]
    for name, row in table.iterrows():
        inside = masks(data, name)
        assert row["n"] == inside.sum() and abs(row["error_rate"] - errors[inside].mean()) < 1e-12
        assert abs(row["rest"] - errors[~inside].mean()) < 1e-12
    assert table.loc["group=a ∧ region=N", "significant"] and result.counts.task == "multiclass"
    with pytest.raises(DataError, match="does not apply"):
        find_slices(result.counts, SliceParams(metric="fpr"))
