"""`fairviz audit PATH --engine duckdb|spark`: CSV, Parquet, folders and globs of Parquet; both engines agree."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from fairviz.cli.main import main

from tests.data.test_engine import numbers_differ

FAST = ["--resamples", "100", "--knee-resamples", "10"]


def _frame(n: int, seed: int, distinct: int | None = 20) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 3, n)
    if distinct:
        p = np.round(p * distinct) / distinct
    group = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    return pd.DataFrame({"label": rng.binomial(1, p), "score": p, "group": group})


def _audit(capsys, *args) -> dict:
    assert main(["audit", *map(str, args), *FAST, "--json", "-"]) == 0
    return json.loads(capsys.readouterr().out)


def test_folder_glob_and_single_file_give_the_same_audit(tmp_path, capsys):
    frame = _frame(3000, 1)
    folder = tmp_path / "parts"
    folder.mkdir()
    for k in range(3):
        frame.iloc[k * 1000:(k + 1) * 1000].to_parquet(folder / f"part-{k}.parquet")
    frame.to_csv(tmp_path / "all.csv", index=False)
    whole = _audit(capsys, tmp_path / "all.csv")
    by_folder = _audit(capsys, folder)
    by_glob = _audit(capsys, folder / "part-*.parquet")
    assert whole["engine"] == {"engine": "duckdb", "mode": "exact", "resolution": 0.0, "cells": whole["engine"]["cells"],
                               "rows": 3000}
    for other in (by_folder, by_glob):
        assert numbers_differ({k: v for k, v in whole.items() if k != "source"},
                              {k: v for k, v in other.items() if k != "source"}, 1e-12) == []
    assert whole["n_rows"] == 3000 and whole["groups"]["a"]["n"] == int((frame.group == "a").sum())


def test_bad_paths_exit_2_in_one_line(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["audit", str(empty)]) == 2
    assert "holds no Parquet files" in capsys.readouterr().err
    assert main(["audit", str(tmp_path / "none-*.parquet")]) == 2
    assert "No file matches" in capsys.readouterr().err
    assert main(["audit", "assets/compas.csv", "--spark-master", "local[1]"]) == 2
    assert "--spark-master needs --engine spark" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java (make test installs Debian's "
                                                          "openjdk-17-jre-headless when run as root)")
def test_spark_gives_the_duckdb_json(tmp_path, capsys):
    """Every shared number to 1e-9, on an exact CSV (COMPAS) and a binned Parquet folder (continuous scores)."""
    folder = tmp_path / "cont"
    folder.mkdir()
    big = _frame(240_000, 2, distinct=None)          # above the exact limit: 1/300,000-wide cells
    for k in range(2):
        big.iloc[k * 120_000:(k + 1) * 120_000].to_parquet(folder / f"p{k}.parquet")
    cases = [["assets/compas.csv", "--group", "race", "--threshold", "0.4", "--benefit", "negative"],
             [folder, "--resamples", "0", "--knee-resamples", "0"]]
    for k, case in enumerate(cases):
        duck = _audit(capsys, *case, "--dstar", tmp_path / f"duck{k}.csv")
        spark = _audit(capsys, *case, "--engine", "spark", "--spark-master", "local[2]", "--dstar",
                       tmp_path / f"spark{k}.csv")
        assert duck.pop("engine") | {"engine": "spark"} == spark.pop("engine")
        duck["notes"], spark["notes"] = duck["notes"][:-1], spark["notes"][:-1]      # the D* file names differ
        assert numbers_differ(duck, spark, 1e-9) == []
        # D* with the file's columns: the same filtered query on both engines gives the same rows
        d_duck, d_spark = (pd.read_csv(tmp_path / f"{e}{k}.csv") for e in ("duck", "spark"))
        order = list(d_duck.columns)
        assert len(d_duck) > 0 and d_duck.sort_values(order, ignore_index=True).equals(
            d_spark[order].sort_values(order, ignore_index=True))
