"""`fairviz audit PATH --dstar FILE`: the diagnostic set D* (rows near their group's knees) with every column of the
input, read by one filtered query on the engine. It must hold the rows the row-level audit puts in D*."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairviz.cli.main import main
from fairviz.data import ColumnMapping, build_predictions
from fairviz.residuals import RDFParams, analyse

QUICK = ["--resamples", "0", "--knee-resamples", "0"]


def _row_level_dstar(frame: pd.DataFrame, mapping: ColumnMapping) -> pd.DataFrame:
    pred = build_predictions(frame, mapping, source="rows", file_fingerprint="rows")
    return frame[analyse(pred, None, RDFParams(resamples=0)).in_knee_region]


def test_compas_dstar_has_the_row_level_rows_and_every_column(tmp_path):
    out = tmp_path / "dstar.csv"
    assert main(["audit", "assets/compas.csv", "--group", "race", *QUICK, "--dstar", str(out),
                 "--json", str(tmp_path / "a.json")]) == 0
    got = pd.read_csv(out)
    frame = pd.read_csv("assets/compas.csv")
    expected = _row_level_dstar(frame, ColumnMapping("two_year_recid", "score", ("race",)))
    assert list(got.columns) == ["residual D", "nearest knee", "race (analysed)", *frame.columns]
    assert len(got) == len(expected) > 0
    keys = ["race", "two_year_recid", "score"]               # tied rows of a score are interchangeable
    assert got.groupby(keys).size().sort_index().equals(expected.groupby(keys).size().sort_index())
    assert np.allclose(got["residual D"], got["score"] - got["two_year_recid"])
    assert set(got["nearest knee"]) <= {"left", "right"} and (got["race (analysed)"] == got["race"]).all()
    assert got["id"].is_unique and got["id"].isin(frame["id"]).all()       # real input rows, each once


@pytest.mark.parametrize("rows", [60_000, 250_000])      # exact per distinct score, then 1/300,000-wide cells
def test_continuous_scores_give_the_row_level_dstar(tmp_path, rows):
    rng = np.random.default_rng(rows)
    score = rng.beta(2, 3, rows)
    frame = pd.DataFrame({"id": np.arange(rows), "label": rng.binomial(1, score), "score": score,
                          "group": rng.choice(["a", "b", "c"], rows, p=[0.5, 0.3, 0.2])})
    path = tmp_path / "cont.parquet"
    frame.to_parquet(path)
    out = tmp_path / "dstar.csv"
    assert main(["audit", str(path), "--label", "label", "--score", "score", "--group", "group", *QUICK,
                 "--dstar", str(out), "--json", str(tmp_path / "a.json")]) == 0
    got = pd.read_csv(out)
    expected = _row_level_dstar(frame, ColumnMapping("label", "score", ("group",)))
    assert len(got) == len(expected) > 0 and got["id"].is_unique
    assert got.groupby(["group", "label"]).size().equals(expected.groupby(["group", "label"]).size())
    # distinct scores: the very rows; cells of 1/300,000: rows may differ only inside a cell cut by a region edge
    differ = len(set(got["id"]) ^ set(expected["id"]))
    assert differ == 0 if rows <= 200_000 else differ <= 2 * 3 * 2 * 4


def test_dstar_needs_the_engine(tmp_path, capsys):
    assert main(["audit", "assets/compas.csv", "--explain", "--dstar", str(tmp_path / "d.csv")]) == 2
    assert "--dstar reads D* through the engine" in capsys.readouterr().err


def test_an_uploads_bytes_give_the_same_rows_as_its_file(tmp_path):
    """The app's path: the upload's bytes are reduced, then queried again for D*'s rows with every column."""
    from fairviz.data.engine import Engine, resolve
    from fairviz.residuals import dstar_rows

    mapping = ColumnMapping("two_year_recid", "score", ("race",))
    raw = open("assets/compas.csv", "rb").read()
    found = []
    for source in (raw, resolve("assets/compas.csv")):
        engine = Engine()
        stats = engine.reduce(source, mapping, name="compas.csv")
        pred = stats.predictions()
        rows = dstar_rows(engine, source, stats, pred, analyse(pred, None, RDFParams(resamples=0)))
        found.append(rows.sort_values("id", ignore_index=True))
        engine.close()
    assert len(found[0]) > 0 and found[0].equals(found[1])


def test_an_output_folder_that_does_not_exist_is_named_before_the_audit_runs(tmp_path, capsys):
    for flag in ("--dstar", "--html", "--json"):
        assert main(["audit", "assets/compas.csv", *QUICK, flag, str(tmp_path / "missing" / "out")]) == 2
        assert f"the folder '{tmp_path / 'missing'}' does not exist" in capsys.readouterr().err
