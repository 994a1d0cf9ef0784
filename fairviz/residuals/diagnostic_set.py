"""The diagnostic set D* ([1] §7.1) as rows to read: from the analysed rows, or from the input file itself when the
engine reduced it to counts (one filtered query, ``dstar_rows``). The page's table and download and the CLI's
``--dstar`` read these."""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairviz.data import Predictions
from fairviz.data.engine import Engine, SufficientStats
from fairviz.data.scales import oriented, to_probability
from fairviz.residuals.results import ResidualAudit


def diagnostic_table(audit: ResidualAudit, pred: Predictions, limit: int | None = None) -> pd.DataFrame:
    """The first ``limit`` rows of D* (``pred``: one entry per row, ``Predictions.rows()``): the residual, the knee
    that put the row there and its group as analysed, then the row's columns (the mapped ones when the data are the
    engine's table)."""
    rows = np.flatnonzero(audit.in_knee_region)[:limit]
    view = pred.groups(audit.attribute)
    added = {"residual D": (pred.score - pred.y)[rows], "nearest knee": audit.nearest_knee[rows],
             f"{audit.attribute} (analysed)": [view.names[c] for c in view.codes[rows]]}
    if pred.frame.shape[1]:
        columns = pred.frame.iloc[rows].reset_index(drop=True)
    else:                   # rows of the engine's table: its mapped columns are all there is (label as Y = 0/1)
        columns = pd.DataFrame({pred.mapping.label: pred.y[rows], pred.mapping.score: pred.score[rows],
                                **{g: np.asarray(pred.groups(g).names, dtype=object)[pred.groups(g).codes[rows]]
                                   for g in pred.mapping.groups}})
    return pd.concat([pd.DataFrame(added), columns], axis=1)


def dstar_rows(engine: Engine, source, stats: SufficientStats, pred: Predictions,
               residuals: ResidualAudit) -> pd.DataFrame:
    """The input rows of D* with all their columns, ahead of them the residual D = score − Y, the knee that put the
    row in D* and its group as analysed (an intersection gets its own name)."""
    segments = residuals.d_star_segments().rename(columns={"knee": "__fv_knee"})
    entries = segments["entry"].to_numpy(dtype=np.int64)
    view = pred.groups(residuals.attribute)
    segments["__fv_y"] = pred.y[entries]
    segments["__fv_group"] = np.asarray(view.names, dtype=object)[view.codes[entries]]
    rows = engine.rows_of_entries(source, stats, segments)
    if rows.empty:
        return rows
    added = pd.DataFrame({
        "residual D": score_probability(rows[stats.mapping.score], stats.mapping) - rows.pop("__fv_y").astype(float),
        "nearest knee": rows.pop("__fv_knee"), f"{residuals.attribute} (analysed)": rows.pop("__fv_group")})
    return pd.concat([added, rows], axis=1)


def score_probability(column: pd.Series, mapping) -> np.ndarray:
    """The file's score as the audit read it: converted from its scale and turned round when it runs the other way."""
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    return oriented(to_probability(values, mapping.score_scale or "probability"), mapping.score_direction)


def file_dstar_rows(source, stats: SufficientStats, pred: Predictions, audit: ResidualAudit) -> pd.DataFrame:
    """D* with every column of the input file, read by a DuckDB engine opened for this one query."""
    engine = Engine("duckdb")
    try:
        return dstar_rows(engine, source, stats, pred, audit)
    finally:
        engine.close()
