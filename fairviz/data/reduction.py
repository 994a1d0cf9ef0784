"""The sufficient statistics of every classification audit: the one reduction SQL text (counts per group values,
label and score cell), the table it returns (``SufficientStats``) and how that table becomes ``Predictions``.
``fairviz.data.engine`` runs the text where the data lives; the resolution rules are in its docstring."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from fairviz.data.dialects import DUCKDB, Dialect
from fairviz.data.limits import GroupLimits
from fairviz.data.model import ColumnMapping, DataError, Predictions
from fairviz.data.scales import probability_sql
from fairviz.data.validation import build_predictions

DEFAULT_CELLS = 300_000         # score cells on [0, 1]: width 3.3e-6 (multiples of 1/10, 1/15, 1/30 are cell edges)
# Several models: cells per model in the joint GROUP BY (width 3.3e-4; multiples of 1/10, 1/15, 1/30 stay cell
# edges, so ECE's bins stay exact). Finer joint cells would make the table as large as the input for 100M rows.
JOINT_CELLS = 3_000
EXACT_ROWS = 200_000            # inputs up to this many rows are always reduced exactly (the table has ≤ that many rows)
COUNT = "__fairviz_n"           # the count column of the table
CELL_KEY = "__fairviz_cell"     # (no longer a column of the table: kept for the names that import it)


@dataclass(frozen=True)
class SufficientStats:
    """Counts per (group values, label, score cell): everything a classification audit needs from the rows."""

    table: pd.DataFrame         # mapped group columns, label, score (float), COUNT (int64); one row per cell
    mapping: ColumnMapping
    resolution: float           # 0: exact counts per distinct score; else the width of the score cells
    rows: int                   # rows in the input
    source: str
    fingerprint: str
    engine: str = "duckdb"
    cell_key: np.ndarray | None = None   # per table row: its score cell in the query (FLOOR(s·cells), or s itself)
    key_cells: int = DEFAULT_CELLS       # the cells of that query (0: a cell per distinct score)
    count: str = COUNT                   # the count column's name (another when the file has a column named COUNT)
    # regression: per table row, the sums of its rows' y, y², and per model ŷ, |ŷ − y|, (ŷ − y)², ŷ², y·ŷ
    # (``fairviz.data.task_reduction.MOMENTS``): the exact moments, whatever the cells
    moments: pd.DataFrame | None = None
    # regression above EXACT_ROWS rows: model title → (lo, hi, cells) of its residual cells, which the table is
    # grouped by and the knee search reads (``fairviz.residuals.curves.ResidualGrid``)
    residual_grids: dict | None = None

    @property
    def exact(self) -> bool:
        return self.resolution == 0

    def to_dict(self) -> dict:
        return {"engine": self.engine, "mode": "exact" if self.exact else "binned", "resolution": self.resolution,
                "cells": int(len(self.table)), "rows": int(self.rows)}

    def predictions(self, limits: GroupLimits | None = None) -> Predictions:
        """Validated, weighted predictions: one entry per cell, its count as the weight (messages count rows)."""
        from fairviz.data.task_reduction import task_columns, task_note
        columns = list(dict.fromkeys((*self.mapping.groups, self.mapping.label,
                                      *(m.column for m in self.mapping.models())))) \
            if self.mapping.task == "binary" else task_columns(self.mapping)
        pred = build_predictions(self.table[columns], core_mapping(self.mapping), source=self.source,
                                 file_fingerprint=self.fingerprint, weights=self.table[self.count].to_numpy(),
                                 limits=limits, converted=True)
        if self.residual_grids:
            pred = replace(pred, residual_grids=dict(self.residual_grids))
        if not self.exact and self.mapping.task != "binary":
            pred = pred.with_note(task_note(self.mapping, self.resolution, len(self.table), self.rows),
                                  resolution=self.resolution)
        elif not self.exact:
            pred = pred.with_note(f"Scores were reduced to cells of width {self.resolution:.2g} ({len(self.table):,} "
                                  f"cells for {self.rows:,} rows); {_moves(self.resolution)}",
                                  resolution=self.resolution)
        return pred


# What binning does to resampled numbers (a cell's rows are drawn together)
RESAMPLED = ("bootstrap intervals and permutation p-values resample the table's entries, so their random draws are "
             "not the rows' (they differ as two seeds do).")


def _moves(resolution: float) -> str:
    """What a cell width does to the reported numbers (measured: tests/data/test_several_models.py)."""
    if resolution <= 1.0 / DEFAULT_CELLS:
        return f"point estimates move by less than 1e-4; {RESAMPLED}"
    return ("one cell per model and per 1/3,000 of [0, 1] (several models share the cells): counts at a threshold "
            "on a 0.01 step and ECE's bins stay exact; quantiles move by less than one cell width, AUROC and "
            "log-loss by less than 1e-4.")


def core_mapping(mapping: ColumnMapping) -> ColumnMapping:
    """The mapping without the row-level roles (text, features, id, a regression's quantile columns): the table
    does not carry them."""
    return replace(mapping, text=None, features=(), row_id=None, candidate_scores=(), quantiles=())


# ----------------------------------------------------------------------------------------------- the SQL

def reduction_sql(source: str, mapping: ColumnMapping, numeric_score, cells: int = DEFAULT_CELLS,
                  dialect: Dialect = DUCKDB) -> str:
    """The reduction, in SQL that every engine runs (``dialect``: its few differences): one row per (groups, label,
    score cell of every model).

    Output columns: g0…g{k-1}, y, n, and per model (the first unsuffixed, model i ≥ 1 suffixed ``_i``): cell, odd
    (NaN, ±inf or a non-numeric score as is; −1 / 2 for finite scores below 0 / above 1), lo, hi, total (min, max
    and sum of the scores in the cell). ``cells`` = 0: one cell per distinct score. ``numeric_score``: one flag, or
    one per model (``mapping.models()``). Several models share one GROUP BY: one scan, and the table's entries are
    the joint cells every model's audit and the paired comparisons read."""
    q = dialect.quote
    models = mapping.models()
    numeric = tuple(numeric_score) if isinstance(numeric_score, (tuple, list)) else (bool(numeric_score),) * len(models)
    keys = [f"{q(g)} AS g{k}" for k, g in enumerate(mapping.groups)]
    scores = [f"{_as_probability(m, q, dialect) if numeric[i] else q(m.column)} AS s{_suffix(i)}"
              for i, m in enumerate(models)]
    inner = f"SELECT {', '.join(keys)}, {q(mapping.label)} AS y, {', '.join(scores)} FROM {source}"
    groups = [f"g{k}" for k in range(len(mapping.groups))] + ["y"]
    selects, by = [], list(groups)
    for i in range(len(models)):
        cell, odd, stats = _model_cells(f"s{_suffix(i)}", numeric[i], cells, dialect)
        x = _suffix(i)
        selects.append(f"{cell} AS cell{x}, {odd} AS odd{x}, {stats.format(x=x)}")
        by += [cell, odd]
    return (f"SELECT {', '.join(groups)}, COUNT(*) AS n, {', '.join(selects)} "
            f"FROM ({inner}) t GROUP BY {', '.join(by)}")


def _suffix(model: int) -> str:
    return f"_{model}" if model else ""


def _as_probability(model, q, dialect: Dialect) -> str:
    return probability_sql(dialect.as_double(q(model.column)), model.scale, model.direction, dialect.is_nan)


def _model_cells(s: str, numeric: bool, cells: int, dialect: Dialect) -> tuple[str, str, str]:
    """One model's cell and out-of-range expressions (grouped by) and its statistics (aggregated)."""
    if not numeric:
        return "NULL", s, "NULL AS lo{x}, NULL AS hi{x}, NULL AS total{x}"
    inside = f"{s} >= 0 AND {s} <= 1"
    cell = f"CASE WHEN {inside} THEN FLOOR({s} * {int(cells)}) END" if cells else f"CASE WHEN {inside} THEN {s} END"
    # outside [0, 1]: NaN and ±inf keep their value (≤ 3 cells); finite values below 0 / above 1 share one cell per
    # side (code -1 / 2) with their count, min and max — all that validation reports — so the table stays bounded
    odd = (f"CASE WHEN {s} IS NULL OR ({inside}) THEN NULL WHEN {dialect.is_nan(s)} THEN {s} "
           f"WHEN {s} - {s} <> 0 THEN {s} WHEN {s} > 1 THEN 2.0 ELSE -1.0 END")
    return cell, odd, f"MIN({s}) AS lo{{x}}, MAX({s}) AS hi{{x}}, SUM({s}) AS total{{x}}"


def single_valued(cells: pd.DataFrame) -> bool:
    """Every score cell inside [0, 1] holds one distinct score (of every model)."""
    for x in _model_suffixes(cells):
        lo, hi = (pd.to_numeric(cells[c + x], errors="coerce").to_numpy(dtype=float) for c in ("lo", "hi"))
        if not np.all((lo == hi)[cells["cell" + x].notna().to_numpy()]):
            return False
    return True


def _model_suffixes(cells: pd.DataFrame) -> list[str]:
    return [""] + [c[len("cell"):] for c in cells.columns if c.startswith("cell_")]


def stats_from_cells(cells: pd.DataFrame, mapping: ColumnMapping, source: str, fingerprint: str, engine: str,
                     numeric=True, resolution_cells: int = DEFAULT_CELLS,
                     key_cells: int = DEFAULT_CELLS) -> SufficientStats:
    """The engine's output (see ``reduction_sql``) → the table, exact when every cell holds one distinct score."""
    cells = cells.reset_index(drop=True)
    n = cells["n"].to_numpy(dtype=np.int64)
    rows = int(n.sum())
    if rows == 0:
        raise DataError(f"'{source}' is empty: there are no rows to analyse.")
    models = mapping.models()
    numeric = tuple(numeric) if isinstance(numeric, (tuple, list)) else (bool(numeric),) * len(models)
    values, exact, split = {}, True, np.zeros(len(cells), dtype=bool)
    for i, model in enumerate(models):
        values[i], single_valued_model, needs_split = _model_values(cells, _suffix(i), n, numeric[i])
        exact &= single_valued_model
        split |= needs_split
    if split.any():          # two entries: (min, n − 1 rows) and (max, 1 row) of a cell outside [0, 1]
        extra = np.flatnonzero(split)
        for i in values:
            low, high = values[i]
            values[i] = ((pd.concat([low, high.iloc[extra]], ignore_index=True) if isinstance(low, pd.Series)
                          else np.concatenate([low, high[extra]])), None)
        cells = pd.concat([cells, cells.iloc[extra]], ignore_index=True)
        n = np.concatenate([np.where(split, n - 1, n), np.ones(extra.size, dtype=np.int64)])
    table = pd.DataFrame({g: cells[f"g{k}"] for k, g in enumerate(mapping.groups)})
    table[mapping.label] = cells["y"]
    for i, model in enumerate(models):
        value = values[i][0]           # a non-numeric score keeps its column's own type: validation names it
        table[model.column] = value.reset_index(drop=True) if isinstance(value, pd.Series) else pd.Series(value,
                                                                                                          dtype=float)
    keys = [*mapping.groups, mapping.label, *(m.column for m in models)]
    count = count_column(keys)
    table[count] = n
    order = table.sort_values(keys, kind="stable", na_position="last",
                              key=lambda s: s.astype(str) if s.dtype == object else s).index.to_numpy()
    cell_key = pd.to_numeric(cells["cell"], errors="coerce").to_numpy(dtype=float)[order]
    table = table.iloc[order].reset_index(drop=True)
    return SufficientStats(table, mapping, 0.0 if exact else 1.0 / resolution_cells, rows, source, fingerprint,
                           engine, cell_key, key_cells, count)


def _model_values(cells: pd.DataFrame, x: str, n: np.ndarray, numeric: bool):
    """One model's score per table row ((value, value of the split-off row)), whether its cells are single-valued,
    and which rows hold several values outside [0, 1] (split in two, so validation reports their range)."""
    if not numeric:
        return (cells["odd" + x], cells["odd" + x]), True, np.zeros(len(cells), dtype=bool)   # validation names them
    lo, hi, total = (pd.to_numeric(cells[c + x], errors="coerce").to_numpy(dtype=float) for c in ("lo", "hi", "total"))
    odd = pd.to_numeric(cells["odd" + x], errors="coerce").to_numpy(dtype=float)
    in_range = cells["cell" + x].notna().to_numpy()
    single = lo == hi
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(single, lo, total / n)        # one distinct score: itself; else the cell's mean
    outside = np.isin(odd, (-1.0, 2.0))                # finite scores outside [0, 1]: their min and max
    value = np.where(in_range, value, np.where(outside, lo, odd))
    split = outside & (n > 1) & ~single
    return (value, np.where(split, hi, value)), bool(single[in_range].all()), split


def count_column(names) -> str:
    """The table's count column: ``COUNT``, unless the file has a column of that name (then one that it has not)."""
    count = COUNT
    while count in names:
        count += "_"
    return count
