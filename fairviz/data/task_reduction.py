"""The reduction of regression and multiclass predictions (``ColumnMapping.task``): one SQL text per task that every
engine runs, and the table it returns as ``SufficientStats`` (see ``fairviz.data.reduction`` for binary data).

Regression: one entry per (groups, cell of y, cell of every model's ŷ, cell of every model's residual ŷ − y); the
cells cut each column's [min, max] (and each residual's) into ``REGRESSION_CELLS`` equal cells (a first, cheap query
reads the bounds). The residual cells are the knee search's (``fairviz.residuals.curves.ResidualGrid``): every row
of an entry lies in one of them, so rows and table give the search the same sorted residual curve. Each entry
carries its count and the sums of y, ŷ, |ŷ − y|, (ŷ − y)², y², ŷ² and y·ŷ, so the entry's y and ŷ are its means
and every moment (bias, MAE, MSE, the Mincer–Zarnowitz normal equations) can be summed exactly from the table
(``moment_columns``).

Multiclass with class probabilities: one entry per (groups, label, predicted class, cell of every class's
probability); the cells are ``CLASS_CELLS`` equal cells of [0, 1] whose edges hold every ECE and reliability bin
edge (1/10, 1/15, 1/30 …), cut as ``fairviz.core.ece.ece_bin_index`` cuts them, so confusion counts, top-label and
class-wise ECE bins and χ² bins are exact; the entry's probabilities are the means of its rows' (sums carried, so
each class's mean probability per group is exact too). With a predicted class and a confidence: one entry per
(groups, label, predicted class, confidence cell).

Rows that validation must name as they are (a missing, NaN or infinite value; a probability outside [0, 1]; a row
whose probabilities miss 1 by more than ``SUM_TOLERANCE``) keep their own values, one entry per distinct row, so
the messages and notes are the row path's. A column that the engine does not read as numbers is grouped by its
values (validation names the text). Inputs of at most ``EXACT_ROWS`` rows, and tables whose every cell holds one
distinct value, are exact: the audits then equal the row-level ones."""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairviz.data.dialects import DUCKDB, Dialect
from fairviz.data.model import ColumnMapping, DataError
from fairviz.data.reduction import RESAMPLED, SufficientStats, count_column
from fairviz.data.task_validation import SUM_TOLERANCE

REGRESSION_CELLS = 100_000   # cells of each column's [min, max] (regression): measured in docs/engines.md
CLASS_CELLS = 300            # cells of [0, 1] per class probability (multiclass): width 1/300, ECE edges kept
MOMENTS = ("sum_y", "sum_yy")                                   # per entry, once
MODEL_MOMENTS = ("sum_p", "sum_abs", "sum_sq", "sum_pp", "sum_yp")   # per entry and model (suffixed _i)


def _suffix(model: int) -> str:
    return f"_{model}" if model else ""


def _finite(x: str) -> str:
    """True for a finite number (NULL, NaN and ±inf fail: x − x is NaN or NULL for them on every engine)."""
    return f"({x} - {x} = 0)"


# ----------------------------------------------------------------------------------------------- regression

def regression_bounds_sql(source: str, mapping: ColumnMapping, dialect: Dialect = DUCKDB) -> str:
    """Rows, and min and max of the target and of every model's prediction (lo0, hi0, lo1 …), and of every model's
    residual ŷ − y (dlo0, dhi0 …), over the rows where all are finite."""
    q, d = dialect.quote, dialect
    cols = [d.as_double(q(mapping.label))] + [d.as_double(q(m.column)) for m in mapping.models()]
    plain = " AND ".join(_finite(c) for c in cols)
    named = [(f"lo{k}", f"hi{k}", c) for k, c in enumerate(cols)]
    named += [(f"dlo{i}", f"dhi{i}", f"({c} - {cols[0]})") for i, c in enumerate(cols[1:])]
    bounds = ", ".join(f"MIN(CASE WHEN {plain} THEN {c} END) AS {lo}, MAX(CASE WHEN {plain} THEN {c} END) AS {hi}"
                       for lo, hi, c in named)
    return f"SELECT COUNT(*) AS n, {bounds} FROM {source}"


def residual_cell_sql(residual: str, lo: float, hi: float, cells: int, dialect: Dialect = DUCKDB) -> str:
    """The cell of ``residual`` among ``cells`` equal cells of [lo, hi], computed with the floating-point steps of
    ``fairviz.residuals.curves.ResidualGrid.cell`` (the bounds passed as text, which every engine parses to the
    nearest double, so each row lands in the cell the row path puts it in)."""
    scale = cells / (hi - lo) if hi > lo else 0.0
    exact_lo, exact_scale = dialect.as_double(f"'{lo!r}'"), dialect.as_double(f"'{scale!r}'")
    return f"LEAST(FLOOR(({residual} - {exact_lo}) * {exact_scale}), {cells - 1})"


def regression_sql(source: str, mapping: ColumnMapping, numeric, bounds=None, cells: int = REGRESSION_CELLS,
                   dialect: Dialect = DUCKDB, residual_bounds=None) -> str:
    """One row per (groups, y cell, every model's ŷ cell, every model's residual cell). ``numeric``: per column
    (target, then each model) whether the engine reads it as numbers; ``bounds``: (lo, hi) per column from
    ``regression_bounds_sql`` (None: exact, one entry per distinct (y, ŷ…)); ``residual_bounds``: (lo, hi) of each
    model's residual (binned tables only).

    Output: g0…, n, y (the raw target of a row validation must see, else NULL), ylo, yhi, sum_y, sum_yy, and per
    model (suffix _i for model i ≥ 1) s (raw), slo, shi, sum_p, sum_abs, sum_sq, sum_pp, sum_yp."""
    q, d = dialect.quote, dialect
    models = mapping.models()
    names = [mapping.label] + [m.column for m in models]
    cols = [d.as_double(q(c)) if numeric[k] else q(c) for k, c in enumerate(names)]
    if mapping.class_scores and mapping.normalise and all(numeric):   # each row's divided by its sum, as validation
        total = " + ".join(cols)
        cols = [f"({c}) / NULLIF({total}, 0)" for c in cols]
    inner = ", ".join([f"{q(g)} AS g{k}" for k, g in enumerate(mapping.groups)] +
                      [f"{c} AS v{k}" for k, c in enumerate(cols)])
    exact = bounds is None or not all(numeric)
    plain = " AND ".join(_finite(f"v{k}") if numeric[k] else "FALSE" for k in range(len(cols)))
    groups = [f"g{k}" for k in range(len(mapping.groups))]
    by = list(groups)
    raw = []
    for k in range(len(cols)):
        if exact:
            by.append(f"v{k}")
            raw.append(f"v{k}")
            continue
        lo, hi = bounds[k]
        scale = cells / (hi - lo) if hi > lo else 0.0
        cell = f"CASE WHEN {plain} THEN LEAST(FLOOR((v{k} - {lo!r}) * {scale!r}), {cells - 1}) END"
        odd = f"CASE WHEN {plain} THEN NULL ELSE v{k} END"       # a row validation names keeps its own value
        by += [cell, odd]
        raw.append(odd)
    if not exact and residual_bounds:
        by += [f"CASE WHEN {plain} THEN {residual_cell_sql(f'(v{i + 1} - v0)', lo, hi, cells, dialect)} END"
               for i, (lo, hi) in enumerate(residual_bounds)]
    num = [f"CASE WHEN {plain} THEN v{k} END" for k in range(len(cols))] if numeric[0] and all(numeric) else None
    selects = [*groups, "COUNT(*) AS n", f"{raw[0]} AS y"]
    if num:
        y = num[0]
        selects += [f"MIN({y}) AS ylo", f"MAX({y}) AS yhi", f"SUM({y}) AS sum_y", f"SUM({y} * {y}) AS sum_yy"]
    for i in range(len(models)):
        x = _suffix(i)
        selects.append(f"{raw[i + 1]} AS s{x}")
        if num:
            p = num[i + 1]
            selects += [f"MIN({p}) AS slo{x}", f"MAX({p}) AS shi{x}", f"SUM({p}) AS sum_p{x}",
                        f"SUM(ABS({p} - {y})) AS sum_abs{x}", f"SUM(({p} - {y}) * ({p} - {y})) AS sum_sq{x}",
                        f"SUM({p} * {p}) AS sum_pp{x}", f"SUM({y} * {p}) AS sum_yp{x}"]
    return f"SELECT {', '.join(selects)} FROM (SELECT {inner} FROM {source}) t GROUP BY {', '.join(by)}"


def regression_table(cells: pd.DataFrame, mapping: ColumnMapping) -> tuple[pd.DataFrame, pd.DataFrame | None, bool]:
    """The engine's rows → (table of groups, target and predictions; the moment sums per entry; whether exact)."""
    n = cells["n"].to_numpy(dtype=np.int64)
    table = pd.DataFrame({g: cells[f"g{k}"] for k, g in enumerate(mapping.groups)})
    models = mapping.models()
    if "sum_y" not in cells.columns:                     # a column the engine reads as text: raw values, exact
        table[mapping.label] = cells["y"]
        for i, m in enumerate(models):
            table[m.column] = cells["s" + _suffix(i)]
        return table, None, True
    exact = True

    def value(raw, lo, hi, total):
        nonlocal exact
        lo, hi, total = (pd.to_numeric(cells[c], errors="coerce").to_numpy(dtype=float) for c in (lo, hi, total))
        plain = ~np.isnan(lo)
        exact &= bool(np.all((lo == hi)[plain]))
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(lo == hi, lo, total / n)
        return np.where(plain, mean, pd.to_numeric(cells[raw], errors="coerce").to_numpy(dtype=float))

    table[mapping.label] = value("y", "ylo", "yhi", "sum_y")
    for i, m in enumerate(models):
        x = _suffix(i)
        table[m.column] = value("s" + x, "slo" + x, "shi" + x, "sum_p" + x)
    names = MOMENTS + tuple(f"{c}{_suffix(i)}" for i in range(len(models)) for c in MODEL_MOMENTS)
    moments = pd.DataFrame({name: pd.to_numeric(cells[name], errors="coerce").to_numpy(dtype=float)
                            for name in names})
    return table, moments, exact


# ----------------------------------------------------------------------------------------------- multiclass

def corrected_cell(p: str, cells: int) -> str:
    """The cell of ``p`` in ``cells`` equal cells of [0, 1] exactly as ``ece_bin_index`` cuts them (the floor
    corrected at an edge that rounding moved; a probability of 1 in the last cell)."""
    f = f"FLOOR({p} * {cells})"
    fixed = f"({f} + CASE WHEN {p} >= ({f} + 1) / {cells} THEN 1 ELSE 0 END - CASE WHEN {p} < {f} / {cells} " \
            f"THEN 1 ELSE 0 END)"
    return f"LEAST(GREATEST({fixed}, 0), {cells - 1})"


def multiclass_sql(source: str, mapping: ColumnMapping, numeric, cells: int = CLASS_CELLS,
                   dialect: Dialect = DUCKDB) -> str:
    """One row per (groups, label, predicted class, cell of each class probability) — or, with a predicted-class
    column, per (groups, label, predicted, confidence cell). ``numeric``: per probability (or the confidence)
    column, whether the engine reads it as numbers; ``cells`` = 0: one entry per distinct row.

    Output: g0…, y, n, pred (the argmax class code, or the predicted column's value), and per probability column
    k: p{k} (the raw value of a row validation must see, else NULL), lo{k}, hi{k}, sum{k}."""
    q, d = dialect.quote, dialect
    if mapping.class_scores:
        names = list(mapping.class_scores)
    else:
        names = [mapping.score] if mapping.score else []
    cols = [d.as_double(q(c)) if numeric[k] else q(c) for k, c in enumerate(names)]
    inner = [f"{q(g)} AS g{k}" for k, g in enumerate(mapping.groups)] + [f"{q(mapping.label)} AS y"]
    inner += [f"{c} AS v{k}" for k, c in enumerate(cols)]
    if not mapping.class_scores:
        inner.append(f"{q(mapping.predicted)} AS pr")
    groups = [f"g{k}" for k in range(len(mapping.groups))] + ["y"]
    exact = not cells or not all(numeric)
    checks = [f"{_finite(f'v{k}')} AND v{k} >= 0 AND v{k} <= 1" for k in range(len(cols))] if all(numeric) else []
    if mapping.class_scores and all(numeric):
        total = " + ".join(f"v{k}" for k in range(len(cols)))
        checks.append(f"ABS({total} - 1) <= {SUM_TOLERANCE!r}")
    plain = " AND ".join(checks) if checks and not exact else "FALSE"
    if mapping.class_scores:
        top = f"GREATEST({', '.join(f'v{k}' for k in range(len(cols)))})"
        pred = ("CASE " + " ".join(f"WHEN v{k} = {top} THEN {k}" for k in range(len(cols))) + " END"
                if all(numeric) else "NULL")
    else:
        pred = "pr"
    by, selects = list(groups) + [pred], [*groups, "COUNT(*) AS n", f"{pred} AS pred"]
    for k in range(len(cols)):
        odd = f"CASE WHEN {plain} THEN NULL ELSE v{k} END"
        by.append(odd)
        selects.append(f"{odd} AS p{k}")
        if all(numeric):
            v = f"CASE WHEN {plain} THEN v{k} END"
            by.append(f"CASE WHEN {plain} THEN {corrected_cell(f'v{k}', cells)} END" if not exact else v)
            selects += [f"MIN({v}) AS lo{k}", f"MAX({v}) AS hi{k}", f"SUM({v}) AS sum{k}"]
    inner_sql = f"SELECT {', '.join(inner)} FROM {source}"
    return f"SELECT {', '.join(selects)} FROM ({inner_sql}) t GROUP BY {', '.join(by)}"


def multiclass_table(cells: pd.DataFrame, mapping: ColumnMapping) -> tuple[pd.DataFrame, bool]:
    """The engine's rows → (table of groups, label, predicted/probability columns and n; whether exact)."""
    n = cells["n"].to_numpy(dtype=np.int64)
    table = pd.DataFrame({g: cells[f"g{k}"] for k, g in enumerate(mapping.groups)})
    table[mapping.label] = cells["y"]
    names = list(mapping.class_scores) or ([mapping.score] if mapping.score else [])
    exact = True
    for k, name in enumerate(names):
        if f"lo{k}" not in cells.columns:
            table[name] = cells[f"p{k}"]
            continue
        lo, hi, total = (pd.to_numeric(cells[c], errors="coerce").to_numpy(dtype=float)
                         for c in (f"lo{k}", f"hi{k}", f"sum{k}"))
        plain = ~np.isnan(lo)
        exact &= bool(np.all((lo == hi)[plain]))
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(lo == hi, lo, total / n)
        table[name] = np.where(plain, mean, pd.to_numeric(cells[f"p{k}"], errors="coerce").to_numpy(dtype=float))
    if not mapping.class_scores:
        table[mapping.predicted] = cells["pred"]
    return table, exact


def task_columns(mapping: ColumnMapping) -> list[str]:
    """The columns a regression or multiclass table carries (groups, label, predictions), in order."""
    if mapping.task == "regression":
        cols = [*mapping.groups, mapping.label, *(m.column for m in mapping.models())]
    else:
        cols = [*mapping.groups, mapping.label, *mapping.class_scores]
        if not mapping.class_scores:
            cols += [c for c in (mapping.predicted, mapping.score) if c]
    return list(dict.fromkeys(cols))


def check_task_mapping(mapping: ColumnMapping) -> None:
    if mapping.task == "multiclass" and not mapping.class_scores and not mapping.predicted:
        raise DataError("A multiclass audit needs either one probability column per class or a predicted-class "
                        "column; none was chosen.")


def task_note(mapping: ColumnMapping, resolution: float, entries: int, rows: int) -> str:
    """What the cells of a binned regression or multiclass table do to the reported numbers (measured:
    benchmarks/bench_engine_tasks.py, docs/engines.md)."""
    if mapping.task == "regression":
        return (f"The target and predictions were reduced to cells of 1/{round(1 / resolution):,} of each column's "
                f"range ({entries:,} entries for {rows:,} rows), each at the mean of its rows; every point "
                f"estimate moves by less than 1e-4 of its scale; {RESAMPLED} Knees: the table is also cut at 1/"
                f"{round(1 / resolution):,} of each model's residual range and the knee search reads those cells, "
                "as the row path does above 200,000 rows, so knee percentiles and F_h equal the rows', knee "
                "residuals move by less than one such cell w, and F_v by at most (2 + F_v)·w / (|r| − w), r the "
                "smaller pooled knee residual (measured on 1M rows: equal).")
    return (f"Class probabilities were reduced to cells of width 1/{round(1 / resolution):,} ({entries:,} entries "
            f"for {rows:,} rows), each at the mean of its rows: confusion counts and the ECE bins stay exact; "
            f"every other point estimate moves by less than 1e-4 of its scale; {RESAMPLED}")


def task_stats(cells: pd.DataFrame, mapping: ColumnMapping, source: str, fingerprint: str, engine: str,
               resolution: float, residual_grids: dict | None = None) -> SufficientStats:
    """The engine's rows (``regression_sql`` / ``multiclass_sql``) → ``SufficientStats`` (``resolution``: the
    cells' width as a fraction of the range; 0 when the reduction was exact; ``residual_grids``: model title →
    (lo, hi, cells) of the residual cells the table was grouped by)."""
    cells = cells.reset_index(drop=True)
    n = cells["n"].to_numpy(dtype=np.int64)
    rows = int(n.sum())
    if rows == 0:
        raise DataError(f"'{source}' is empty: there are no rows to analyse.")
    if mapping.task == "regression":
        table, moments, exact = regression_table(cells, mapping)
    else:
        (table, exact), moments = multiclass_table(cells, mapping), None
    keys = list(table.columns)
    count = count_column(keys)
    table[count] = n
    order = table.sort_values(keys, kind="stable", na_position="last",
                              key=lambda s: s.astype(str) if s.dtype == object else s).index.to_numpy()
    table = table.iloc[order].reset_index(drop=True)
    moments = None if moments is None else moments.iloc[order].reset_index(drop=True)
    return SufficientStats(table, mapping, 0.0 if exact or not resolution else resolution, rows, source, fingerprint,
                           engine, None, 0, count, moments, residual_grids)
