"""DuckDB = Spark on every slice's counts: the one query's text runs unchanged on both engines."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from fairviz.data.engine import Engine
from fairviz.data.sources import locate
from fairviz.slices.sql import engine_slice_counts
from tests.slices.data import ATTRIBUTES, frame

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java (make test installs Debian's "
                                                                      "openjdk-17-jre-headless when run as root)")]
COUNTS = ["n", "tp", "fp", "fn", "tn", "score_sum", "label_sum"]


def test_spark_counts_every_slice_as_duckdb(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    data = frame(3_000, seed=7)
    data.loc[::97, "label"] = 2                   # rows the query leaves out, on both engines
    path = tmp_path / "d.parquet"
    data.to_parquet(path)
    tables = {}
    for kind in ("duckdb", "spark"):
        engine = Engine(kind)
        try:
            counts = engine_slice_counts(engine, locate(path, kind, engine.local), "label", "score",
                                         tuple(ATTRIBUTES), 3, 60)
        finally:
            engine.close()
        table = counts.table.fillna("·").set_index(list(ATTRIBUTES)).sort_index()
        tables[kind] = (table, counts.total, counts.notes)
    (duck, duck_total, duck_notes), (spark, spark_total, spark_notes) = tables["duckdb"], tables["spark"]
    assert list(duck.index) == list(spark.index) and len(duck) > 40
    np.testing.assert_allclose(duck[COUNTS].to_numpy(float), spark[COUNTS].to_numpy(float), rtol=1e-12)
    assert duck_total == pytest.approx(spark_total, rel=1e-12) and duck_notes == spark_notes and "31 rows" in duck_notes[0]


def test_spark_runs_the_pruned_search_as_duckdb(tmp_path, monkeypatch):
    """One query per level, the same text on both engines: the same slices evaluated, the same counts, the same
    combinations computed and pruned."""
    from tests.slices.data import WIDE
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    path = tmp_path / "wide.parquet"
    frame(40_000, seed=21, planted=True, attributes=WIDE).to_parquet(path)
    found = {}
    for kind in ("duckdb", "spark"):
        engine = Engine(kind)
        try:
            counts = engine_slice_counts(engine, locate(path, kind, engine.local), "label", "score", tuple(WIDE), 3,
                                         100, metric="fpr", top_k=3)
        finally:
            engine.close()
        found[kind] = (counts.table.fillna("·").set_index(list(WIDE)).sort_index(), counts.search)
    (duck, duck_search), (spark, spark_search) = found["duckdb"], found["spark"]
    assert duck_search == spark_search and duck_search.grouping_sets < duck_search.lattice_sets
    assert list(duck.index) == list(spark.index)
    np.testing.assert_allclose(duck[COUNTS].to_numpy(float), spark[COUNTS].to_numpy(float), rtol=1e-12)


def test_spark_counts_a_regressions_slices_as_duckdb(tmp_path, monkeypatch):
    from tests.slices.data import regression_frame
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    data = regression_frame(3_000, seed=39, planted=True)
    data.loc[::89, "prediction"] = np.nan                    # rows the query leaves out, on both engines
    path = tmp_path / "r.parquet"
    data.to_parquet(path)
    found = {}
    for kind in ("duckdb", "spark"):
        engine = Engine(kind)
        try:
            counts = engine_slice_counts(engine, locate(path, kind, engine.local), "target", "prediction",
                                         tuple(ATTRIBUTES), 3, 60, task="regression")
        finally:
            engine.close()
        found[kind] = (counts.table.fillna("·").set_index(list(ATTRIBUTES)).sort_index(), counts.total, counts.notes)
    (duck, duck_total, duck_notes), (spark, spark_total, spark_notes) = found["duckdb"], found["spark"]
    columns = ["n", "residual_sum", "residual_sq", "abs_residual_sum"]
    assert list(duck.index) == list(spark.index) and len(duck) > 40
    np.testing.assert_allclose(duck[columns].to_numpy(float), spark[columns].to_numpy(float), rtol=1e-12)
    assert duck_total == pytest.approx(spark_total, rel=1e-12) and duck_notes == spark_notes
    assert "34 rows without a finite target and prediction" in duck_notes[0]
