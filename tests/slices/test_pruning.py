"""The pruned lattice search (SliceLine's score and bound, one query per level): the same top slices as the full
lattice with fewer attribute combinations computed, DuckDB = pandas, and the correction's family counts what the
pruning left out."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairviz.data.engine import Engine
from fairviz.data.model import DataError
from fairviz.data.sources import locate
from fairviz.slices import SliceParams, find_slices, slice_counts
from fairviz.slices.analysis import adjust
from fairviz.slices.counts import slice_names
from fairviz.slices.metrics import bound, parts, score
from fairviz.slices.sql import engine_slice_counts
from tests.slices.data import WIDE, frame, predictions

NAMES = tuple(WIDE)


def scores_by_name(counts) -> pd.Series:
    return pd.Series(score(counts.table, counts.total, counts.task, "fpr"), index=slice_names(counts.table, NAMES))


@pytest.fixture(scope="module")
def planted():
    data = frame(40_000, seed=21, planted=True, attributes=WIDE)
    return data, predictions(data, NAMES)


def test_pruned_search_finds_the_full_lattices_top_slices_computing_fewer_combinations(planted):
    _, pred = planted
    full = slice_counts(pred, max_depth=3, min_support=100)
    pruned = slice_counts(pred, max_depth=3, min_support=100, metric="fpr", top_k=3)
    full_scores, pruned_scores = scores_by_name(full), scores_by_name(pruned)
    expected = full_scores[full_scores > 0].sort_values(ascending=False)[:3]
    found = pruned_scores[pruned_scores > 0].sort_values(ascending=False)[:3]
    assert list(found.index) == list(expected.index) and len(expected) == 3
    np.testing.assert_allclose(found.to_numpy(), expected.to_numpy(), rtol=1e-12)
    assert "sex=F ∧ age=18-25" in list(expected.index)
    # every combination of the full lattice (6 + 15 + 20) against those the pruned search computed
    assert full.search.grouping_sets == 41 and full.search.queries == 1
    assert pruned.search.grouping_sets < 41 and pruned.search.queries >= 2
    assert pruned.search.evaluated == len(pruned.table) < len(full.table)
    # a computed combination's unevaluated slices are counted exactly; a skipped one's by a bound
    assert pruned.search.evaluated + pruned.search.pruned >= len(full.table)
    assert set(slice_names(pruned.table, NAMES)) <= set(full_scores.index)
    assert find_slices(pruned).table.set_index("slice").loc["sex=F ∧ age=18-25", "significant"]


def test_every_pruned_slices_score_is_under_the_bound_of_its_parents(planted):
    """The bound holds slice by slice: each depth-2 and depth-3 slice of the full lattice scores at most the bound
    computed from its parents' rows and errors."""
    _, pred = planted
    full = slice_counts(pred, max_depth=3, min_support=100)
    t = full.table.assign(slice=slice_names(full.table, NAMES)).set_index("slice")
    b = parts(t, "binary", "fpr").set_axis(t.index)
    s = pd.Series(score(t, full.total, "binary", "fpr"), index=t.index)
    checked = 0
    for name in t.index[t["depth"] > 1]:
        pieces = name.split(" ∧ ")
        parents = [" ∧ ".join(p for p in pieces if p != drop) for drop in pieces]
        mins = b.loc[parents].min().to_frame().T
        assert s[name] <= bound(mins, full.total, "binary", "fpr", 100)[0] + 1e-12
        checked += 1
    assert checked > 500


@pytest.mark.parametrize("metric", ["mean_residual", "mae"])
def test_a_regression_slices_score_is_under_the_bound_of_its_parents(metric):
    """The regression bound (errors Σ|residual| of any size, rows at least the floor) holds slice by slice."""
    from tests.slices.data import regression_frame, regression_predictions
    data = regression_frame(20_000, seed=42, planted=True, attributes=WIDE)
    counts = slice_counts(regression_predictions(data, NAMES), max_depth=3, min_support=100)
    t = counts.table.assign(slice=slice_names(counts.table, NAMES)).set_index("slice")
    b = parts(t, "regression", metric).set_axis(t.index)
    s = pd.Series(score(t, counts.total, "regression", metric), index=t.index)
    deeper = t.index[t["depth"] > 1]
    for name in deeper:
        pieces = name.split(" ∧ ")
        mins = b.loc[[" ∧ ".join(p for p in pieces if p != drop) for drop in pieces]].min().to_frame().T
        assert s[name] <= bound(mins, counts.total, "regression", metric, 100)[0] + 1e-12
    assert len(deeper) > 300


def test_duckdb_pruned_search_equals_the_pandas_path(planted, tmp_path):
    data, pred = planted
    path = tmp_path / "d.parquet"
    data.to_parquet(path)
    sql = engine_slice_counts(Engine("duckdb"), locate(path, "duckdb"), "label", "score", NAMES, 3, 100, 0.5,
                              metric="fpr", top_k=5)
    ours = slice_counts(pred, max_depth=3, min_support=100, metric="fpr", top_k=5)
    assert sql.search == ours.search and sql.search.top_k == 5
    a = find_slices(sql).table.set_index("slice").sort_index()
    b = find_slices(ours).table.set_index("slice").sort_index()
    assert list(a.index) == list(b.index)
    for column in ("n", "fpr", "fnr", "error_rate", "p", "p_adjusted", "score"):
        np.testing.assert_allclose(a[column].to_numpy(float), b[column].to_numpy(float), rtol=1e-12, atol=1e-12)


def test_the_correction_counts_the_pruned_slices_as_never_rejected(planted):
    _, pred = planted
    counts = slice_counts(pred, max_depth=3, min_support=100, metric="fpr", top_k=5)
    result = find_slices(counts, SliceParams(metric="fpr"))
    assert counts.search.pruned > 0 and result.family == result.tested + counts.search.pruned
    tested = result.table[result.table["p"].notna()]
    np.testing.assert_allclose(tested["p_adjusted"], adjust(tested["p"].to_numpy(), "by", result.family))
    assert (tested["p_adjusted"] >= adjust(tested["p"].to_numpy(), "by") - 1e-15).all()
    payload = result.to_dict()
    assert payload["family"] == result.family and payload["search"]["top_k"] == 5
    assert payload["search"]["grouping_sets"] == counts.search.grouping_sets < payload["search"]["lattice_grouping_sets"]


def test_null_data_with_pruning_gives_no_discovery_in_twenty_seeds():
    runs_with_any = 0
    for s in range(20):
        pred = predictions(frame(4_000, seed=300 + s, attributes=WIDE), NAMES)
        counts = slice_counts(pred, min_support=50, metric="fpr", top_k=10)
        runs_with_any += bool(find_slices(counts).table["significant"].any())
    assert runs_with_any <= 1


def test_a_bad_top_k_is_named():
    with pytest.raises(DataError, match="top-k"):
        slice_counts(predictions(frame(500, seed=1)), top_k=-3)
    with pytest.raises(DataError, match="does not apply"):
        slice_counts(predictions(frame(500, seed=1)), metric="mae", top_k=3)


def test_engine_located_columns_names_columns_by_position_and_no_data_enters_the_sql(tmp_path):
    """The public Engine step the slice queries use: the relation and positional aliases; a column or value of the
    data never appears in a query's text, at any level of the pruned search."""
    rng = np.random.default_rng(41)
    odd = "we'ird \"col\"; --"
    data = pd.DataFrame({odd: rng.choice(["x'); DROP TABLE t; --", "plain"], 3_000),
                         "g": rng.choice(["p", "q", "r"], 3_000), "label": rng.integers(0, 2, 3_000),
                         "score": rng.random(3_000)})
    path = tmp_path / "odd.parquet"
    data.to_parquet(path)
    engine = Engine("duckdb")
    relation, at = engine.located_columns(locate(path, "duckdb"), ["label", odd])
    assert at == {"label": "c2", odd: "c0"} and relation
    assert engine.sql(f"SELECT COUNT(*) AS n FROM {relation} WHERE {at['label']} = 1")["n"][0] == data["label"].sum()
    with pytest.raises(DataError, match="'nope' is not a column"):
        engine.located_columns(locate(path, "duckdb"), ["nope"])
    texts = []
    original = engine.sql
    engine.sql = lambda text, params=None: texts.append(text) or original(text, params)
    counts = engine_slice_counts(engine, locate(path, "duckdb"), "label", "score", [odd, "g"], 2, 10, metric="fpr",
                                 top_k=2)
    assert len(texts) == counts.search.queries >= 1
    assert not any(piece in text for text in texts for piece in (odd, "DROP", "plain", "'p'"))
    assert set(counts.table[odd].dropna()) == {"x'); DROP TABLE t; --", "plain"}
