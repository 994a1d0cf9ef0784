"""The sufficient statistics of every audit: the table a task's reduction returns (``SufficientStats``: counts per
group values, label and prediction cell) and how that table becomes ``Predictions``. Each task's SQL and what its
cells keep exact are its spec's (``fairviz.data.tasks``: ``TaskSpec.reduction``); ``fairviz.data.engine`` runs it
where the data lives."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from fairviz.data.limits import GroupLimits
from fairviz.data.model import ColumnMapping, DataError, Predictions
from fairviz.data.tasks import Reduced, spec_of
from fairviz.data.validation import build_predictions

EXACT_ROWS = 200_000            # inputs up to this many rows are always reduced exactly (the table has ≤ that many rows)
COUNT = "__fairviz_n"           # the count column of the table
CELL_KEY = "__fairviz_cell"     # (no longer a column of the table: kept for the names that import it)


@dataclass(frozen=True)
class SufficientStats:
    """Counts per (group values, label, prediction cell): everything an audit needs from the rows."""

    table: pd.DataFrame         # mapped group columns, label, score (float), COUNT (int64); one row per cell
    mapping: ColumnMapping
    resolution: float           # 0: exact counts per distinct score; else the width of the score cells
    rows: int                   # rows in the input
    source: str
    fingerprint: str
    engine: str = "duckdb"
    cell_key: np.ndarray | None = None   # per table row: its score cell in the query (FLOOR(s·cells), or s itself)
    key_cells: int = 0                   # the cells of that query (0: a cell per distinct score)
    count: str = COUNT                   # the count column's name (another when the file has a column named COUNT)
    # regression: per table row, the sums of its rows' y, y², and per model ŷ, |ŷ − y|, (ŷ − y)², ŷ², y·ŷ
    # (``fairviz.data.tasks.regression.MOMENTS``): the exact moments, whatever the cells
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
        reduction = spec_of(self.mapping).reduction
        columns = reduction.columns(self.mapping)
        pred = build_predictions(self.table[columns], core_mapping(self.mapping), source=self.source,
                                 file_fingerprint=self.fingerprint, weights=self.table[self.count].to_numpy(),
                                 limits=limits, converted=True)
        if self.residual_grids:
            pred = replace(pred, residual_grids=dict(self.residual_grids))
        if not self.exact:
            pred = pred.with_note(reduction.note(self.mapping, self.resolution, len(self.table), self.rows),
                                  resolution=self.resolution)
        return pred


def core_mapping(mapping: ColumnMapping) -> ColumnMapping:
    """The mapping without the row-level roles (text, features, id, a regression's quantile columns): the table
    does not carry them."""
    return replace(mapping, text=None, features=(), row_id=None, candidate_scores=(), quantiles=())


def stats_of(reduced: Reduced, mapping: ColumnMapping, source: str, fingerprint: str, engine: str) -> SufficientStats:
    """A task's reduction (``TaskSpec.reduction.reduce``) → ``SufficientStats``: the count column added and the
    entries in one order (by their values), whatever order the engine returned them in."""
    rows = int(reduced.n.sum())
    if rows == 0:
        raise DataError(f"'{source}' is empty: there are no rows to analyse.")
    table = reduced.table
    keys = list(table.columns)
    count = count_column(keys)
    table[count] = reduced.n
    order = table.sort_values(keys, kind="stable", na_position="last",
                              key=lambda s: s.astype(str) if s.dtype == object else s).index.to_numpy()
    table = table.iloc[order].reset_index(drop=True)
    cell_key = None if reduced.cell_key is None else reduced.cell_key[order]
    moments = None if reduced.moments is None else reduced.moments.iloc[order].reset_index(drop=True)
    return SufficientStats(table, mapping, reduced.resolution, rows, source, fingerprint, engine, cell_key,
                           reduced.key_cells, count, moments, reduced.residual_grids)


def count_column(names) -> str:
    """The table's count column: ``COUNT``, unless the file has a column of that name (then one that it has not)."""
    count = COUNT
    while count in names:
        count += "_"
    return count
