"""A multiclass data set's slices on the engine: the query counts each slice's rows, errors (predicted class ≠
label, compared as the file writes them) and confidence sums as the in-memory path does, on DuckDB and Spark, full
or pruned; ``fairviz slices --task multiclass --predicted COL`` finds a planted slice whose error rate is doubled."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from fairviz.cli.main import main
from fairviz.data import ColumnMapping, build_predictions
from fairviz.data.engine import Engine
from fairviz.data.sources import locate
from fairviz.slices import SliceParams, find_slices, slice_counts
from fairviz.slices.sql import engine_slice_counts

GROUPS = ["sex", "age", "region"]
COUNTS = ["n", "errors", "score_sum", "correct_sum"]


def _frame(n=6000, seed=0, planted=False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "age": rng.choice(["young", "old", "mid"], n),
                          "region": rng.choice(list("NSEW"), n)})
    classes = np.array(["bird", "cat", "dog"])                  # sorted: a label's index is its searchsorted place
    frame["label"] = rng.choice(classes, n)
    wrong = np.full(n, 0.2)
    if planted:
        wrong[((frame["sex"] == "F") & (frame["age"] == "young")).to_numpy()] = 0.4
    others = (np.searchsorted(classes, frame["label"]) + rng.integers(1, 3, n)) % 3
    frame["pred"] = np.where(rng.random(n) < wrong, classes[others], frame["label"])          # another class
    frame["conf"] = rng.uniform(0.34, 1, n)
    frame.loc[::250, "pred"] = None                   # rows without a predicted class: left out on every path
    return frame


def _in_memory(frame: pd.DataFrame, **kw):
    pred = build_predictions(frame.dropna(subset=["pred"]),
                             ColumnMapping("label", "conf", tuple(GROUPS), task="multiclass", predicted="pred"))
    return slice_counts(pred, GROUPS, 3, 50, **kw)


def _engine(path, kind: str, **kw):
    engine = Engine(kind)
    try:
        return engine_slice_counts(engine, locate(path, kind, engine.local), "label", "conf", GROUPS, 3, 50,
                                   task="multiclass", predicted="pred", **kw)
    finally:
        engine.close()


def _indexed(counts):
    return counts.table.fillna("·").set_index(GROUPS).sort_index()


@pytest.mark.parametrize("top_k", [None, 5])
def test_duckdb_counts_every_multiclass_slice_as_the_rows_do(tmp_path, top_k):
    frame = _frame(planted=True)
    path = tmp_path / "m.csv"
    frame.to_csv(path, index=False)
    ours, rows = _engine(path, "duckdb", top_k=top_k, metric="error_rate"), _in_memory(frame, top_k=top_k,
                                                                                      metric="error_rate")
    a, b = _indexed(ours), _indexed(rows)
    assert list(a.index) == list(b.index) and len(a) > 10
    np.testing.assert_allclose(a[COUNTS].to_numpy(float), b[COUNTS].to_numpy(float), rtol=1e-12, atol=1e-9)
    assert ours.total["n"] == 6000 - 24 and "24 rows without a label and a predicted class" in " ".join(ours.notes)
    planted = find_slices(ours, SliceParams(metric="error_rate")).table.set_index("slice").loc["sex=F ∧ age=young"]
    assert planted["significant"] and planted["metric"] > 0.3


def test_the_command_line_finds_a_planted_multiclass_slice(tmp_path, capsys):
    frame = _frame(planted=True)
    path, out = tmp_path / "m.csv", tmp_path / "m.json"
    frame.to_csv(path, index=False)
    code = main(["slices", str(path), "--task", "multiclass", "--label", "label", "--predicted", "pred",
                 "--score", "conf", *sum((["--group", g] for g in GROUPS), []), "--json", str(out)])
    assert code == 0
    data = json.loads(out.read_text())
    assert data["metric"] == "error_rate" and data["slices"][0]["slice"].startswith("sex=F ∧ age=young")
    planted = next(s for s in data["slices"] if s["slice"] == "sex=F ∧ age=young")
    inside = frame.dropna(subset=["pred"])
    inside = inside[(inside["sex"] == "F") & (inside["age"] == "young")]
    assert planted["significant"]
    assert planted["metric"] == pytest.approx(np.mean(inside["pred"] != inside["label"]), rel=1e-12)
    capsys.readouterr()
    assert main(["slices", str(path), "--task", "multiclass", "--label", "label", "--group", "sex"]) == 2
    assert "--predicted" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")
def test_spark_counts_multiclass_slices_as_duckdb(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    frame = _frame(n=3000, seed=4)
    path = tmp_path / "m.parquet"
    frame.to_parquet(path)
    duck, spark = _indexed(_engine(path, "duckdb")), _indexed(_engine(path, "spark"))
    assert list(duck.index) == list(spark.index)
    np.testing.assert_allclose(duck[COUNTS].to_numpy(float), spark[COUNTS].to_numpy(float), rtol=1e-12)
