"""Slices (issue 26): counts equal a brute-force groupby, DuckDB's one query equals the pandas path, a planted
intersection is found, null data gives no discoveries, bad input is named and bounded."""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from fairviz.data.engine import Engine, reduce_path
from fairviz.data.model import ColumnMapping
from fairviz.data.model import DataError
from fairviz.data.sources import locate
from fairviz.slices import SliceParams, find_slices, slice_counts
from fairviz.slices.analysis import adjust
from fairviz.slices.methods import CONFUSION_METRICS
from fairviz.slices.sql import engine_slice_counts
from fairviz.cli.main import main
from tests.slices.data import ATTRIBUTES, frame, predictions

NAMES = tuple(ATTRIBUTES)


def brute_force(data: pd.DataFrame, attributes, depth: int, threshold: float = 0.5) -> dict:
    """Slice → (n, tp, fp, fn, tn, score_sum, label_sum), one boolean mask per slice over the rows."""
    decision = data["score"] >= threshold
    y = data["label"] == 1
    out = {}
    for d in range(1, depth + 1):
        for combo in combinations(attributes, d):
            for values in data[list(combo)].drop_duplicates().itertuples(index=False):
                mask = np.logical_and.reduce([data[a].to_numpy() == v for a, v in zip(combo, values)])
                key = " ∧ ".join(f"{a}={v}" for a, v in zip(combo, values))
                out[key] = (mask.sum(), (mask & y & decision).sum(), (mask & ~y & decision).sum(),
                            (mask & y & ~decision).sum(), (mask & ~y & ~decision).sum(),
                            data["score"][mask].sum(), data["label"][mask].sum())
    return out


def keyed(result) -> pd.DataFrame:
    return result.table.set_index("slice")


def test_every_slice_count_and_metric_equals_a_brute_force_groupby():
    data = frame(3_000, seed=1)
    result = find_slices(slice_counts(predictions(data), max_depth=3, min_support=1), SliceParams(metric="fnr"))
    table = keyed(result)
    truth = brute_force(data, NAMES, 3)
    assert set(table.index) == set(truth) and len(truth) == 2 + 3 + 4 + 6 + 8 + 12 + 24
    for key, (n, tp, fp, fn, tn, s, lab) in truth.items():
        row = table.loc[key]
        assert row["n"] == n
        assert abs(row["fpr"] - fp / (fp + tn)) < 1e-12 and abs(row["fnr"] - fn / (fn + tp)) < 1e-12
        assert abs(row["error_rate"] - (fp + fn) / n) < 1e-12
        assert abs(row["selection_rate"] - (tp + fp) / n) < 1e-12
        assert abs(row["mean_residual"] - (lab - s) / n) < 1e-12
        rest_fn = (data["label"] == 1) & (data["score"] < 0.5)
        rest_pos = (data["label"] == 1).sum() - (fn + tp)
        assert abs(row["rest"] - (rest_fn.sum() - fn) / rest_pos) < 1e-12


def test_duckdb_one_query_equals_the_pandas_path(tmp_path):
    data = frame(5_000, seed=2)
    path = tmp_path / "d.parquet"
    data.to_parquet(path)
    engine = Engine("duckdb")
    sql = engine_slice_counts(engine, locate(path, "duckdb"), "label", "score", NAMES, 3, 50, 0.5)
    pandas = slice_counts(predictions(data), max_depth=3, min_support=50)
    a = find_slices(sql).table.set_index("slice").sort_index()
    b = find_slices(pandas).table.set_index("slice").sort_index()
    assert list(a.index) == list(b.index) and len(a) > 30
    for column in ("n", "metric", "rest", "p", "p_adjusted", "fpr", "fnr", "mean_residual"):
        np.testing.assert_allclose(a[column].to_numpy(float), b[column].to_numpy(float), rtol=1e-12, atol=1e-12)
    assert sql.total == pytest.approx(pandas.total, rel=1e-12)
    # the support floor prunes depth ≥ 2 in the query itself
    assert (a[a["depth"] > 1]["n"] >= 50).all()
    pruned = engine_slice_counts(engine, locate(path, "duckdb"), "label", "score", NAMES, 3, 700, 0.5)
    assert not (pruned.table["depth"] == 3).any() and set(pruned.table.loc[pruned.table["depth"] == 2, "sex"]) == {"F", "M"}
    assert (pruned.table["depth"] == 2).sum() == 6 and pruned.table.loc[pruned.table["depth"] == 2, "region"].isna().all()


def test_planted_intersection_is_found_while_each_attribute_alone_looks_fair():
    data = frame(20_000, seed=3, planted=True)
    table = keyed(find_slices(slice_counts(predictions(data)), SliceParams(metric="fpr")))
    planted = table.loc["sex=F ∧ age=18-25"]
    assert planted["p_adjusted"] < 0.05 and planted["significant"]
    assert planted["metric"] > 1.7 * planted["rest"]
    for alone in ("sex=F", "sex=M", "age=18-25", "age=26-40", "age=41-65"):
        assert not table.loc[alone]["significant"]


def test_null_data_gives_no_discovery_in_twenty_seeds():
    """Under the complete null every discovery is false, so FDR control (Benjamini–Yekutieli) bounds the share of runs
    with any discovery: at most 1 of 20 (5%)."""
    runs_with_any = sum(bool(find_slices(slice_counts(predictions(frame(4_000, seed=100 + s)), min_support=50))
                             .table["significant"].any()) for s in range(20))
    assert runs_with_any <= 1


def test_benjamini_yekutieli_is_bh_times_the_harmonic_sum():
    p = np.array([0.001, 0.01, 0.02, 0.5])
    bh = adjust(p, "bh")
    np.testing.assert_allclose(bh, [0.004, 0.02, 0.02 * 4 / 3, 0.5])
    np.testing.assert_allclose(adjust(p, "by"), np.minimum(1, bh * (1 + 1 / 2 + 1 / 3 + 1 / 4)))


def test_small_slices_are_too_small_to_tell_and_smoothed_towards_the_rest():
    data = frame(2_000, seed=4)
    table = find_slices(slice_counts(predictions(data), min_support=700)).table
    small = table[table["too_small"]]
    assert len(small) and small["p"].isna().all() and not small["significant"].any()
    assert (small["depth"] == 1).all()          # deeper slices under the floor are pruned, not shown
    moved = (small["cps"] - small["rest"]).abs() <= (small["metric"] - small["rest"]).abs() + 1e-12
    assert moved.all()


def test_one_row_fifty_attributes_and_an_id_like_attribute_are_bounded(tmp_path):
    rng = np.random.default_rng(5)
    one = pd.DataFrame({"a": ["x"], "b": ["y"], "label": [1], "score": [0.9]})
    one.to_parquet(tmp_path / "one.parquet")
    alone = engine_slice_counts(Engine("duckdb"), locate(tmp_path / "one.parquet", "duckdb"), "label", "score",
                                ["a", "b"], 2, 100)
    result = find_slices(alone)
    assert result.tested == 0 and result.table["too_small"].all() and result.table["n"].tolist() == [1, 1]
    rare = frame(500, seed=6).assign(sex=lambda d: np.where(np.arange(500) == 0, "X", d["sex"]))
    rare.to_parquet(tmp_path / "rare.parquet")
    table = keyed(find_slices(engine_slice_counts(Engine("duckdb"), locate(tmp_path / "rare.parquet", "duckdb"),
                                                  "label", "score", NAMES, 3, 100)))
    assert table.loc["sex=X", "n"] == 1 and table.loc["sex=X", "too_small"] and np.isnan(table.loc["sex=X", "p"])
    wide = pd.DataFrame({f"g{i}": rng.choice(["p", "q"], 400) for i in range(50)})
    wide["label"], wide["score"] = rng.integers(0, 2, 400), rng.random(400)
    path = tmp_path / "wide.parquet"
    wide.to_parquet(path)
    counts = engine_slice_counts(Engine("duckdb"), locate(path, "duckdb"), "label", "score",
                                 [f"g{i}" for i in range(50)], 3, 100)
    assert counts.max_depth == 2 and "searched to depth 2" in counts.notes[0]
    ids = pd.DataFrame({"id": np.arange(10_000).astype(str), "sex": rng.choice(["F", "M"], 10_000),
                        "label": rng.integers(0, 2, 10_000), "score": rng.random(10_000)})
    ids.to_parquet(tmp_path / "ids.parquet")
    counts = engine_slice_counts(Engine("duckdb"), locate(tmp_path / "ids.parquet", "duckdb"), "label", "score",
                                 ["id", "sex"], 2, 100)
    assert any("'id' has 10,000 values" in note for note in counts.notes)
    assert counts.table["id"].isna().all() and len(counts.table) == 2
    with pytest.raises(DataError, match="at most 50"):
        slice_counts(predictions(wide.assign(g50=wide["g0"]), [f"g{i}" for i in range(51)]))
    with pytest.raises(DataError, match="slice metric"):
        SliceParams(metric="auc")
    assert set(CONFUSION_METRICS) == {"error_rate", "fpr", "fnr", "selection_rate"}


def test_weighted_entries_from_the_engine_reduction_give_the_query_counts(tmp_path):
    """The app's data after an engine reduction are weighted entries: summing their weights per cell gives the same
    counts as the slice query over the rows."""
    data = frame(4_000, seed=12).assign(score=lambda d: d["score"].round(2))     # rows share entries
    path = tmp_path / "d.parquet"
    data.to_parquet(path)
    weighted = reduce_path(path, ColumnMapping(label="label", score="score", groups=NAMES)).predictions()
    assert weighted.weighted and len(weighted.y) < 4_000
    ours = find_slices(slice_counts(weighted, min_support=30)).table.set_index("slice").sort_index()
    engine = find_slices(engine_slice_counts(Engine("duckdb"), locate(path, "duckdb"), "label", "score", NAMES, 3,
                                             30)).table.set_index("slice").sort_index()
    assert list(ours.index) == list(engine.index)
    for column in ("n", "fpr", "fnr", "error_rate", "selection_rate", "mean_residual", "p_adjusted"):
        np.testing.assert_allclose(ours[column].to_numpy(float), engine[column].to_numpy(float), rtol=1e-12,
                                   atol=1e-12)


def test_each_slices_binned_ece_equals_the_rows_on_duckdb_and_in_pandas(tmp_path):
    """ECE over ten equal-width score bins, Σ_b |Σ (label − score)| / n per slice, from sums the one query carries."""
    data = frame(4_000, seed=13)
    data["score"] = np.clip(data["score"] * 0.8 + 0.1 * data["label"], 0, 1)      # miscalibrated, in every bin
    path = tmp_path / "d.parquet"
    data.to_parquet(path)
    ours = find_slices(slice_counts(predictions(data), min_support=1)).table.set_index("slice")
    sql = find_slices(engine_slice_counts(Engine("duckdb"), locate(path, "duckdb"), "label", "score", NAMES, 3,
                                          1)).table.set_index("slice")
    score_bin = np.minimum(np.floor(data["score"].to_numpy() * 10), 9)
    gap = data["label"].to_numpy() - data["score"].to_numpy()
    for name in ours.index:
        pieces = [p.split("=", 1) for p in name.split(" ∧ ")]
        inside = np.logical_and.reduce([data[a].to_numpy() == v for a, v in pieces])
        ece = sum(abs(gap[inside & (score_bin == b)].sum()) for b in range(10)) / inside.sum()
        assert abs(ours.loc[name, "ece"] - ece) < 1e-12 and abs(sql.loc[name, "ece"] - ece) < 1e-12
        assert ours.loc[name, "ece"] >= ours.loc[name, "calibration_gap"] - 1e-12


def test_match_on_a_single_attribute_slice_is_the_sample_size_pages_match_against_the_rest(tmp_path, capsys):
    """``SliceParams(test="match")``: a depth-1 slice's p-value is MATCH of that group against the complement, as
    the Sample-size significance page computes it; it differs from Fisher's (it takes the rest as known) and the
    command line offers it (binary only)."""
    from fairviz.core.counts import ConfusionCounts
    from fairviz.sample_size.match import match_groups
    from fairviz.sample_size.results import MatchParams

    data = frame(6_000, seed=21, planted=True)
    counts = slice_counts(predictions(data), max_depth=1, min_support=50)
    table = find_slices(counts, SliceParams(metric="fpr", test="match")).table.set_index("slice")
    fisher = find_slices(counts, SliceParams(metric="fpr")).table.set_index("slice")
    decided = (data["score"] >= 0.5).to_numpy()
    y = data["label"].to_numpy() == 1
    values = ("F", "M")
    cells = [ConfusionCounts(*(int(np.sum(m & (data["sex"] == v).to_numpy())) for m in
                               (y & decided, y & ~decided, ~y & decided, ~y & ~decided))) for v in values]
    expected = match_groups("sex", values, cells, MatchParams(metrics=("fpr",), reference="complement"))
    for v in values:
        assert table.loc[f"sex={v}", "p"] == pytest.approx(expected.get(v, "fpr").p_value, rel=1e-12)
        assert table.loc[f"sex={v}", "p"] != pytest.approx(fisher.loc[f"sex={v}", "p"], rel=1e-3)
    path = tmp_path / "d.csv"
    data.to_csv(path, index=False)
    assert main(["slices", str(path), "--label", "label", "--score", "score", "--group", "sex", "--test", "match",
                 "--max-depth", "1", "--min-support", "50"]) == 0
    assert "MATCH (The Art of Fairness" in capsys.readouterr().out
