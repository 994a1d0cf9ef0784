"""A regression or multiclass audit of a table, a query or a folder of files goes through the engine's task
reduction (the rows never reach Python); on data up to the exact-reduction size its numbers equal the one-file row
path's, and the JSON says which engine reduced it."""
from __future__ import annotations

import json

import duckdb
import numpy as np
import pandas as pd
import pytest

from fairviz.cli.main import main

FAST = ["--resamples", "60", "--knee-resamples", "0"]


def _regression(n=3000, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    target = rng.normal(40, 8, n).round(1)
    return pd.DataFrame({"target": target, "prediction": (target + rng.normal(0, 3, n) + (g == "b") * 2).round(2),
                         "g": g, "h": rng.choice(["x", "y"], n)})


def _multiclass(n=3000, seed=1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b"], n)
    label = rng.choice(["cat", "dog", "bird"], n)
    predicted = np.where(rng.random(n) < np.where(g == "b", 0.6, 0.8), label, rng.choice(["cat", "dog", "bird"], n))
    return pd.DataFrame({"label": label, "predicted": predicted, "g": g})


def _group(records: dict, name: str) -> dict:
    return records[name]


def _audit(capsys, *args) -> dict:
    assert main(["audit", *map(str, args), *FAST, "--json", "-"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_regression_folder_is_reduced_by_the_engine_as_the_file_reads_row_by_row(tmp_path, capsys):
    frame = _regression()
    one, folder = tmp_path / "one.csv", tmp_path / "parts"
    frame.to_csv(one, index=False)
    folder.mkdir()
    frame.iloc[:1500].to_parquet(folder / "a.parquet")
    frame.iloc[1500:].to_parquet(folder / "b.parquet")
    args = ["--task", "regression", "--label", "target", "--score", "prediction", "--group", "g", "--group", "h"]
    rows, reduced = _audit(capsys, one, *args), _audit(capsys, folder, *args)
    assert "engine" not in rows and reduced["engine"]["engine"] == "duckdb"
    for name in ("a", "b", "c"):
        want = _group(rows["parity"]["groups"], name)
        got = _group(reduced["parity"]["groups"], name)
        assert got["n"] == want["n"]
        for key in ("bias", "mae", "rmse"):
            assert got[key] == pytest.approx(want[key], rel=1e-9), (name, key)
    assert _group(reduced["attributes"]["h"]["parity"]["groups"], "x")["mae"] == pytest.approx(
        _group(rows["attributes"]["h"]["parity"]["groups"], "x")["mae"], rel=1e-9)


def test_a_multiclass_table_of_a_database_is_audited_through_the_engine(tmp_path, capsys):
    frame = _multiclass()
    one, database = tmp_path / "one.csv", tmp_path / "m.duckdb"
    frame.to_csv(one, index=False)
    with duckdb.connect(str(database)) as connection:
        connection.register("frame", frame)
        connection.execute("CREATE TABLE predictions AS SELECT * FROM frame")
    args = ["--task", "multiclass", "--label", "label", "--predicted", "predicted", "--group", "g"]
    rows = _audit(capsys, one, *args)
    table = _audit(capsys, "--database", database, "--table", "predictions", *args)
    assert table["source"] == "predictions" and table["engine"]["engine"] == "duckdb"
    for name in ("a", "b"):
        assert _group(table["parity"]["groups"], name)["accuracy"] == pytest.approx(
            _group(rows["parity"]["groups"], name)["accuracy"], rel=1e-12)


def test_quantile_columns_of_a_table_are_refused_plainly(tmp_path, capsys):
    frame = _regression().assign(q05=lambda f: f["prediction"] - 5, q95=lambda f: f["prediction"] + 5)
    database = tmp_path / "r.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.register("frame", frame)
        connection.execute("CREATE TABLE predictions AS SELECT * FROM frame")
    code = main(["audit", "--database", str(database), "--table", "predictions", "--task", "regression", "--label",
                 "target", "--score", "prediction", "--group", "g", "--quantiles", "q05,q95"])
    assert code == 2
    assert "--quantiles" in capsys.readouterr().err
