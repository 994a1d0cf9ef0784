"""The sufficient statistics of every classification audit: the one reduction SQL text (counts per group values,
label and score cell), the table it returns (``SufficientStats``) and how that table becomes ``Predictions``.
``fairviz.data.engine`` runs the text where the data lives; the resolution rules are in its docstring."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairviz.data.dialects import DUCKDB, Dialect
from fairviz.data.limits import GroupLimits
from fairviz.data.model import ColumnMapping, DataError, Predictions
from fairviz.data.scales import probability_sql
from fairviz.data.validation import build_predictions

DEFAULT_CELLS = 300_000         # score cells on [0, 1]: width 3.3e-6 (multiples of 1/10, 1/15, 1/30 are cell edges)
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

    @property
    def exact(self) -> bool:
        return self.resolution == 0

    def to_dict(self) -> dict:
        return {"engine": self.engine, "mode": "exact" if self.exact else "binned", "resolution": self.resolution,
                "cells": int(len(self.table)), "rows": int(self.rows)}

    def predictions(self, limits: GroupLimits | None = None) -> Predictions:
        """Validated, weighted predictions: one entry per cell, its count as the weight (messages count rows)."""
        columns = [c for c in dict.fromkeys((*self.mapping.groups, self.mapping.label, self.mapping.score))]
        pred = build_predictions(self.table[columns], core_mapping(self.mapping), source=self.source,
                                 file_fingerprint=self.fingerprint, weights=self.table[self.count].to_numpy(),
                                 limits=limits, converted=True)
        if not self.exact:
            pred = pred.with_note(f"Scores were reduced to cells of width {self.resolution:.2g} ({len(self.table):,} "
                                  f"cells for {self.rows:,} rows); reported numbers move by less than 1e-4.",
                                  resolution=self.resolution)
        return pred


def core_mapping(mapping: ColumnMapping) -> ColumnMapping:
    """The mapping without the row-level roles (text, features, id): the table does not carry them."""
    return ColumnMapping(label=mapping.label, score=mapping.score, groups=mapping.groups,
                         positive_label=mapping.positive_label, intersect=mapping.intersect,
                         score_scale=mapping.score_scale, score_direction=mapping.score_direction)


# ----------------------------------------------------------------------------------------------- the SQL

def reduction_sql(source: str, mapping: ColumnMapping, numeric_score: bool, cells: int = DEFAULT_CELLS,
                  dialect: Dialect = DUCKDB) -> str:
    """The reduction, in SQL that every engine runs (``dialect``: its few differences): one row per (groups, label,
    score cell).

    Output columns: g0…g{k-1}, y, cell, odd (NaN, ±inf or a non-numeric score as is; −1 / 2 for finite scores
    below 0 / above 1),
    n, lo, hi, total (min, max and sum of the scores in the cell). ``cells`` = 0: one cell per distinct score."""
    q = dialect.quote
    keys = [f"{q(g)} AS g{k}" for k, g in enumerate(mapping.groups)]
    score = probability_sql(dialect.as_double(q(mapping.score)), mapping.score_scale, mapping.score_direction,
                            dialect.is_nan) if numeric_score else q(mapping.score)
    inner = f"SELECT {', '.join(keys)}, {q(mapping.label)} AS y, {score} AS s FROM {source}"
    groups = [f"g{k}" for k in range(len(mapping.groups))] + ["y"]
    if not numeric_score:
        return (f"SELECT {', '.join(groups)}, NULL AS cell, s AS odd, COUNT(*) AS n, NULL AS lo, NULL AS hi, "
                f"NULL AS total FROM ({inner}) t GROUP BY {', '.join(groups)}, s")
    inside = "s >= 0 AND s <= 1"
    cell = f"CASE WHEN {inside} THEN FLOOR(s * {int(cells)}) END" if cells else f"CASE WHEN {inside} THEN s END"
    # outside [0, 1]: NaN and ±inf keep their value (≤ 3 cells); finite values below 0 / above 1 share one cell per
    # side (code -1 / 2) with their count, min and max — all that validation reports — so the table stays bounded
    odd = (f"CASE WHEN s IS NULL OR ({inside}) THEN NULL WHEN {dialect.is_nan('s')} THEN s WHEN s - s <> 0 THEN s "
           f"WHEN s > 1 THEN 2.0 ELSE -1.0 END")
    return (f"SELECT {', '.join(groups)}, {cell} AS cell, {odd} AS odd, COUNT(*) AS n, "
            f"MIN(s) AS lo, MAX(s) AS hi, SUM(s) AS total "
            f"FROM ({inner}) t GROUP BY {', '.join(groups)}, {cell}, {odd}")


def single_valued(cells: pd.DataFrame) -> bool:
    """Every score cell inside [0, 1] holds one distinct score."""
    lo, hi = (pd.to_numeric(cells[c], errors="coerce").to_numpy(dtype=float) for c in ("lo", "hi"))
    return bool(np.all((lo == hi)[cells["cell"].notna().to_numpy()]))


def stats_from_cells(cells: pd.DataFrame, mapping: ColumnMapping, source: str, fingerprint: str, engine: str,
                     numeric: bool = True, resolution_cells: int = DEFAULT_CELLS,
                     key_cells: int = DEFAULT_CELLS) -> SufficientStats:
    """The engine's output (see ``reduction_sql``) → the table, exact when every cell holds one distinct score."""
    cells = cells.reset_index(drop=True)
    n = cells["n"].to_numpy(dtype=np.int64)
    rows = int(n.sum())
    if rows == 0:
        raise DataError(f"'{source}' is empty: there are no rows to analyse.")
    exact = True
    if numeric:
        lo, hi, total = (pd.to_numeric(cells[c], errors="coerce").to_numpy(dtype=float) for c in ("lo", "hi", "total"))
        odd = pd.to_numeric(cells["odd"], errors="coerce").to_numpy(dtype=float)
        in_range = cells["cell"].notna().to_numpy()
        single = lo == hi
        exact = bool(single[in_range].all())
        with np.errstate(invalid="ignore", divide="ignore"):
            value = np.where(single, lo, total / n)        # one distinct score: itself; else the cell's mean
        outside = np.isin(odd, (-1.0, 2.0))                # finite scores outside [0, 1]: their min and max
        value = np.where(in_range, value, np.where(outside, lo, odd))
        split = outside & (n > 1) & ~single                # two entries: (min, n − 1 rows) and (max, 1 row)
        if split.any():
            extra = cells[split].copy()
            cells, value, n = pd.concat([cells, extra], ignore_index=True), np.concatenate([value, hi[split]]), \
                np.concatenate([np.where(split, n - 1, n), np.ones(int(split.sum()), dtype=np.int64)])
        score = pd.Series(value, dtype=float)
    else:
        score = cells["odd"]                              # validation names the non-numeric values
    table = pd.DataFrame({g: cells[f"g{k}"] for k, g in enumerate(mapping.groups)})
    table[mapping.label] = cells["y"]
    table[mapping.score] = score
    keys = [*mapping.groups, mapping.label, mapping.score]
    count = count_column(keys)
    table[count] = n
    order = table.sort_values(keys, kind="stable", na_position="last",
                              key=lambda s: s.astype(str) if s.dtype == object else s).index.to_numpy()
    cell_key = pd.to_numeric(cells["cell"], errors="coerce").to_numpy(dtype=float)[order]
    table = table.iloc[order].reset_index(drop=True)
    return SufficientStats(table, mapping, 0.0 if exact else 1.0 / resolution_cells, rows, source, fingerprint,
                           engine, cell_key, key_cells, count)


def count_column(names) -> str:
    """The table's count column: ``COUNT``, unless the file has a column of that name (then one that it has not)."""
    count = COUNT
    while count in names:
        count += "_"
    return count
