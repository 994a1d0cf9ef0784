"""Binned regression tables keep the rows' knees (issue 34 item 3).

Above 200,000 rows the engine hands over a regression table binned to cells of y and ŷ, each entry at the means
of its rows. Kneedle's difference curve is flat near its maximum, so on raw residuals the sub-cell differences
between the rows and their table moved knees by hundreds of grid points (1M rows: F_v −15 %, F_h −7 %, a pooled knee
75 points away). Now the table is also grouped by cells of each model's residual (1/100,000 of its range) and the
knee search reads residuals at those cells, for rows and table alike: knee percentiles and F_h equal the rows', knee
residuals differ by less than one residual cell w, F_v by at most (2 + F_v)·w / (|r| − w)."""
from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from fairviz.data import ColumnMapping, build_predictions
from fairviz.data.engine import Engine, reduce_path
from fairviz.data.reduction import EXACT_ROWS
from fairviz.data.tasks.regression import REGRESSION_CELLS, residual_cell_sql
from fairviz.residuals.display import rdf_to_dict
from fairviz.residuals import RDFParams, analyse
from fairviz.residuals.curves import ResidualGrid
from fairviz.data.view import View

ROWS = 240_000                  # above EXACT_ROWS: the engine's table is binned
PARAMS = RDFParams(resamples=0, knee_resamples=0)
MAPPING = ColumnMapping("price", "model_a", ("grp",), task="regression")


def _prices(rows: int, seed: int = 0) -> pd.DataFrame:
    """The issue's data: prices 100–200 with cents, a model off by N(0, 5), two groups."""
    rng = np.random.default_rng(seed)
    price = np.round(rng.uniform(100, 200, rows), 2)
    return pd.DataFrame({"grp": rng.choice(np.array(["a", "b"]), rows), "price": price,
                         "model_a": price + rng.normal(0, 5, rows)})


@pytest.fixture(scope="module")
def audits(tmp_path_factory):
    frame = _prices(ROWS)
    folder = tmp_path_factory.mktemp("parts")
    half = ROWS // 2
    frame.iloc[:half].to_parquet(folder / "part-0.parquet")
    frame.iloc[half:].to_parquet(folder / "part-1.parquet")
    stats = reduce_path(folder, MAPPING, Engine())
    assert ROWS > EXACT_ROWS and not stats.exact and stats.rows == ROWS
    rows = build_predictions(frame, MAPPING, source="prices", file_fingerprint="prices-0")
    d = frame["model_a"].to_numpy() - frame["price"].to_numpy()
    binned = stats.predictions()
    assert any("knee percentiles and F_h equal the rows'" in note for note in binned.notes)   # the JSON's note
    return analyse(rows, "grp", PARAMS), analyse(binned, "grp", PARAMS), (d.max() - d.min())


def test_rows_and_their_binned_table_find_the_same_knees(audits):
    exact, binned, span = audits
    cell = span / REGRESSION_CELLS
    for g_exact, g_binned in zip(exact.groups, binned.groups):
        for k_exact, k_binned in zip(g_exact.knees, g_binned.knees):
            assert k_exact.percentile == k_binned.percentile
            assert abs(k_exact.residual - k_binned.residual) <= cell
    for p_exact, p_binned in zip(exact.pairs, binned.pairs):
        for k_exact, k_binned in zip(p_exact.pooled_knees, p_binned.pooled_knees):
            assert k_exact.percentile == k_binned.percentile
            assert abs(k_exact.residual - k_binned.residual) <= cell
        assert p_exact.f_h == p_binned.f_h
        assert p_exact.f_h_abs == p_binned.f_h_abs
        assert abs(p_exact.f_v - p_binned.f_v) <= f_v_bound(p_exact, cell)
        assert abs(p_exact.f_v_abs - p_binned.f_v_abs) <= 2 * cell


def f_v_bound(pair, cell: float) -> float:
    """The stated bound: every knee residual within one cell w moves F_v by at most (2 + F_v)·w / (|r| − w), r the
    smaller pooled knee residual."""
    smallest = min(abs(k.residual) for k in pair.pooled_knees)
    return (2 + pair.f_v) * cell / (smallest - cell)


def test_several_models_on_coarse_cells(tmp_path, monkeypatch):
    """500 cells per column (far coarser than the default, so most entries hold many rows) and two models, each read
    through its view of the joint table: every knee percentile and F_h still equal the rows' searched at the same
    500 residual cells; knee residuals within a cell, F_v within the bound. (Whole-number targets: the view's
    target stays exact whatever its type.)"""
    import fairviz.residuals.curves as curves
    from fairviz.data.model import ScoreColumn
    cells = 500
    monkeypatch.setattr(curves, "REGRESSION_CELLS", cells)
    rng = np.random.default_rng(2)
    y = rng.integers(1, 100, ROWS).astype(float)
    frame = pd.DataFrame({"grp": rng.choice(np.array(["a", "b"]), ROWS), "y": y,
                          "m1": y + rng.normal(0, 5, ROWS), "m2": y + rng.standard_t(3, ROWS) * 4})
    frame.to_parquet(tmp_path / "part-0.parquet")
    mapping = ColumnMapping("y", "m1", ("grp",), task="regression", more_scores=(ScoreColumn("m2"),))
    stats = reduce_path(tmp_path, mapping, Engine(task_cells={"regression": cells}))
    assert not stats.exact and len(stats.table) < ROWS
    binned, rows = stats.predictions(), build_predictions(frame, mapping)
    for title in ("m1", "m2"):
        d = frame[title].to_numpy() - y
        cell = (d.max() - d.min()) / cells
        exact, reduced = (analyse(p.at(View(model=title)), "grp", PARAMS) for p in (rows, binned))
        for g_exact, g_binned in zip(exact.groups, reduced.groups):
            for k_exact, k_binned in zip(g_exact.knees, g_binned.knees):
                assert k_exact.percentile == k_binned.percentile
                assert abs(k_exact.residual - k_binned.residual) <= cell
        for p_exact, p_binned in zip(exact.pairs, reduced.pairs):
            assert [k.percentile for k in p_exact.pooled_knees] == [k.percentile for k in p_binned.pooled_knees]
            assert p_exact.f_h == p_binned.f_h
            assert abs(p_exact.f_v - p_binned.f_v) <= f_v_bound(p_exact, cell)


def test_the_json_names_the_residual_cells(audits):
    for audit in audits[:2]:
        assert rdf_to_dict(audit)["pooled_knees"][0]["search_cells"] == REGRESSION_CELLS


def test_the_engine_and_the_row_path_cut_residuals_alike():
    """Every residual lands in the same cell in SQL as in numpy, edges included (the bounds travel as text)."""
    rng = np.random.default_rng(1)
    d = rng.normal(0, 7.3, 20_000) * rng.choice([1e-3, 1, 1e3], 20_000)
    grid = ResidualGrid(float(d.min()), float(d.max()), REGRESSION_CELLS)
    edges = grid.lo + np.arange(0, REGRESSION_CELLS, 997) * grid.width
    values = np.concatenate([d, edges, np.nextafter(edges, -np.inf), np.nextafter(edges, np.inf)])
    values = values[(values >= grid.lo) & (values <= grid.hi)]
    residuals = pd.DataFrame({"r": values})
    sql = f"SELECT {residual_cell_sql('r', grid.lo, grid.hi, grid.cells)} AS c FROM residuals"
    cells = duckdb.sql(sql).df()["c"].to_numpy()
    assert np.array_equal(cells, grid.cell(values))
