"""Regression: a numeric target and, per model, a numeric prediction ŷ (residual D = ŷ − y in the target's units).

Validation: the target (``label``) and each model's prediction (``score``, ``more_scores``) are numbers, any scale;
y is the target and score the first model's prediction. A target with two values is a binary task and is refused as
a regression (a conclusion a misread column could reverse is checked, not assumed).

Reduction (``fairviz.data.engine``): one entry per (groups, cell of y, cell of every model's ŷ, cell of every
model's residual ŷ − y); the cells cut each column's [min, max] (and each residual's) into ``REGRESSION_CELLS``
equal cells (a first, cheap query reads the bounds). The residual cells are the knee search's
(``fairviz.residuals.curves.ResidualGrid``): every row of an entry lies in one of them, so rows and table give the
search the same sorted residual curve. Each entry carries its count and the sums of y, ŷ, |ŷ − y|, (ŷ − y)², y², ŷ²
and y·ŷ, so the entry's y and ŷ are its means and every moment (bias, MAE, MSE, the Mincer–Zarnowitz normal
equations) can be summed exactly from the table (``MOMENTS``, ``MODEL_MOMENTS``). Rows that validation must name as
they are (a missing, NaN or infinite value) keep their own values, one entry per distinct row; a column the engine
does not read as numbers is grouped by its values. Inputs of at most ``EXACT_ROWS`` rows are exact.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from fairviz.data.cleaning import count_rows, numeric_values, without_na_texts
from fairviz.data.dialects import DUCKDB, Dialect
from fairviz.data.model import ColumnMapping
from fairviz.data.roles import (MAX_GUESSED_CLASSES, FEW_CLASSES, PREDICTION_NAMES, ROLE_NAMES, distinct_count,
                                is_numeric, looks_like_model_name, most_correlated, named, numeric_columns,
                                quantile_level)
from fairviz.data.tasks.common import (RESAMPLED, binned_table, cell_means, finite, other_models, shown, suffix,
                                       validator)
from fairviz.data.tasks.registry import register
from fairviz.data.task_spec import NO, STRONG, WEAK, MetricSpec, Reduced, Reduction, TaskSpec

REGRESSION_CELLS = 100_000   # cells of each column's [min, max]: measured in docs/engines.md
MOMENTS = ("sum_y", "sum_yy")                                   # per entry, once
MODEL_MOMENTS = ("sum_p", "sum_abs", "sum_sq", "sum_pp", "sum_yp")   # per entry and model (suffixed _i)


# ----------------------------------------------------------------------------------------------- recognition

def recognise(frame: pd.DataFrame, label) -> float:
    """Numbers that are not all whole, or more than classes can be: surely a target; many whole numbers: maybe."""
    series = frame[label]
    n = distinct_count(series)
    if n <= 2 or not is_numeric(series):
        return NO
    values = series.dropna().to_numpy(dtype=float)
    if not np.all(values == np.round(values)) or n > MAX_GUESSED_CLASSES:
        return STRONG
    return WEAK if n > FEW_CLASSES else NO


def guess_roles(frame: pd.DataFrame, guess) -> ColumnMapping:
    """The binary guess turned into a regression one: the prediction named after the target, else named like a
    prediction, else the numeric column closest to the target; other models by their names."""
    first = guess.mapping
    label, groups, ids = first.label, set(first.groups), guess.ids
    numbers = [c for c in numeric_columns(frame) if c != label and c not in groups and c not in ids]
    by_name = [guess.prediction] if guess.prediction is not None else \
        named(numbers, PREDICTION_NAMES + ROLE_NAMES["score"])
    score = by_name[0] if by_name else most_correlated(frame, label, numbers)
    models = tuple(c for c in numbers if c != score and looks_like_model_name(c))
    features = tuple(c for c in first.features if c not in (score, *models) and c != label)
    return replace(first, task=REGRESSION.name, score=score or "", features=features, candidate_scores=models)


# ----------------------------------------------------------------------------------------------- validation

def _regression_columns(frame, mapping: ColumnMapping, label: pd.Series, problems, notes, w):
    """The target and every model's prediction as numbers; a bad other model is left out with a note."""
    target = numeric_values(label, mapping.label, problems, w, role="target",
                            wanted="a regression target must be numbers",
                            true_false="a two-valued label is a binary task, not a regression")
    first = mapping.models()[0]
    columns = {"__target__": target,
               first.title: numeric_values(without_na_texts(frame[first.column]), first.column, problems, w,
                                           role="prediction", wanted="predictions must be numbers",
                                           true_false="a regression's prediction must be numbers")}
    kept, predictions = other_models(mapping, lambda model, own: numeric_values(
        without_na_texts(frame[model.column]), model.column, own, w, role="prediction",
        wanted="predictions must be numbers"), notes)
    columns.update(predictions)
    for column in mapping.quantiles:              # prediction-interval bounds: numbers, their level in the name
        if quantile_level(column) is None:
            problems.append(f"The quantile column '{column}' does not name its level (q0.05, p95, quantile_0.9).")
        columns[f"q:{column}"] = numeric_values(without_na_texts(frame[column]), column, problems, w,
                                                role="quantile", wanted="quantiles must be numbers")
    return replace(mapping, more_scores=kept), columns


def _regression_fields(label, columns: dict[str, pd.Series], mapping: ColumnMapping, problems, notes, w):
    target = columns.pop("__target__").to_numpy(dtype=float)
    bounds = {c: columns.pop(f"q:{c}").to_numpy(dtype=float) for c in mapping.quantiles}
    if np.isinf(target).any():
        problems.append(f"The target column '{mapping.label}' has {count_rows(np.isinf(target), w):,} infinite values.")
    distinct = np.unique(target[np.isfinite(target)])
    if distinct.size == 2:
        problems.append(f"The target column '{mapping.label}' has two values ({shown(distinct)}): that is a binary "
                        "task, not a regression; choose the task 'binary'.")
    elif distinct.size == 1:
        problems.append(f"The target column '{mapping.label}' is constant ({distinct[0]:.4g}): there is nothing to "
                        "predict, so no error can differ between groups.")
    scores = {}
    for title, values in columns.items():
        values = values.to_numpy(dtype=float)
        column = next(m.column for m in mapping.models() if m.title == title)
        infinite = np.isinf(values)
        if infinite.any():
            problems.append(f"The prediction column '{column}' has {count_rows(infinite, w):,} infinite values.")
        scores[title] = values
    first = next(iter(scores.values()))
    fields = {"y": target, "score": first, "scores": scores if len(scores) > 1 else {}}
    if bounds:                                    # coverage of the prediction intervals (calibration in the mean)
        fields["quantiles"] = np.column_stack(list(bounds.values()))
        fields["quantile_levels"] = tuple(quantile_level(c) for c in bounds)
    return mapping, fields


# ----------------------------------------------------------------------------------------------- reduction

def regression_bounds_sql(source: str, mapping: ColumnMapping, dialect: Dialect = DUCKDB) -> str:
    """Rows, and min and max of the target and of every model's prediction (lo0, hi0, lo1 …), and of every model's
    residual ŷ − y (dlo0, dhi0 …), over the rows where all are finite."""
    q, d = dialect.quote, dialect
    cols = [d.as_double(q(mapping.label))] + [d.as_double(q(m.column)) for m in mapping.models()]
    plain = " AND ".join(finite(c) for c in cols)
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
    plain = " AND ".join(finite(f"v{k}") if numeric[k] else "FALSE" for k in range(len(cols)))
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
        x = suffix(i)
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
            table[m.column] = cells["s" + suffix(i)]
        return table, None, True
    table[mapping.label], exact = cell_means(cells, "y", "ylo", "yhi", "sum_y", n)
    for i, m in enumerate(models):
        x = suffix(i)
        table[m.column], single = cell_means(cells, "s" + x, "slo" + x, "shi" + x, "sum_p" + x, n)
        exact &= single
    names = MOMENTS + tuple(f"{c}{suffix(i)}" for i in range(len(models)) for c in MODEL_MOMENTS)
    moments = pd.DataFrame({name: pd.to_numeric(cells[name], errors="coerce").to_numpy(dtype=float)
                            for name in names})
    return table, moments, exact


def reduce(runner, at: ColumnMapping, mapping: ColumnMapping) -> Reduced:
    """Binned above ``runner.exact_rows`` rows (a first query reads every column's bounds), else exact."""
    cells_per_column = runner.task_cells(REGRESSION.name)
    numeric = tuple(runner.is_numeric(c) for c in (at.label, *(m.column for m in at.models())))
    bounds, residual_bounds, resolution = None, None, 0.0
    if all(numeric):
        found = runner.sql(regression_bounds_sql(runner.relation, at, runner.dialect)).iloc[0]
        pairs = [(found[f"lo{k}"], found[f"hi{k}"]) for k in range(len(numeric))]
        if int(found["n"]) > runner.exact_rows and all(pd.notna(lo) and pd.notna(hi) for lo, hi in pairs):
            bounds = [(float(lo), float(hi)) for lo, hi in pairs]
            residual_bounds = [(float(found[f"dlo{i}"]), float(found[f"dhi{i}"])) for i in range(len(numeric) - 1)]
            resolution = 1.0 / cells_per_column
    cells = runner.sql(regression_sql(runner.relation, at, numeric, bounds, cells_per_column, runner.dialect,
                                      residual_bounds)).reset_index(drop=True)
    table, moments, exact = regression_table(cells, mapping)
    grids = None
    if residual_bounds:      # the knee search's residual grid of each model (fairviz.residuals.curves)
        grids = {m.title: (*b, cells_per_column) for m, b in zip(mapping.models(), residual_bounds)}
    return binned_table(table, cells, exact, resolution, mapping, moments=moments, residual_grids=grids)


def reduced_columns(mapping: ColumnMapping) -> list:
    """The columns the table carries: groups, the target, every model's prediction."""
    return list(dict.fromkeys([*mapping.groups, mapping.label, *(m.column for m in mapping.models())]))


def binned_note(mapping: ColumnMapping, resolution: float, entries: int, rows: int) -> str:
    """What the cells do to the reported numbers (measured: benchmarks/bench_engine_tasks.py, docs/engines.md)."""
    cells = round(1 / resolution)
    return (f"The target and predictions were reduced to cells of 1/{cells:,} of each column's "
            f"range ({entries:,} entries for {rows:,} rows), each at the mean of its rows; every point "
            f"estimate moves by less than 1e-4 of its scale; {RESAMPLED} " + knee_note(cells))


def knee_note(cells: int) -> str:
    """What the residual cells do to the knees. The row path searches at 1/``REGRESSION_CELLS`` of the residual
    range above 200,000 rows; a table cut at other cells (``Engine(task_cells=…)``) is searched at its own, so its
    knees are those of another curve: a coarser one moves them by a few of its cells, not one
    (tests/data/test_engine_regression_models.py measures it)."""
    shared = (f"Knees: the table is also cut at 1/{cells:,} of each model's residual range and the knee search "
              "reads those cells")
    if cells != REGRESSION_CELLS:
        return (shared + f", where the row path reads 1/{REGRESSION_CELLS:,} above 200,000 rows: the knees are "
                "searched on a coarser curve, so knee percentiles, F_h and F_v may differ from the rows' (measured at "
                "1/2,000 on 20,000 rows: knee percentiles by up to 0.01, knee residuals by up to 8 such cells); the "
                f"default 1/{REGRESSION_CELLS:,} keeps them equal.")
    return (shared + ", as the row path does above 200,000 rows, so knee percentiles and F_h equal the rows', knee "
            "residuals move by less than one such cell w, and F_v by at most (2 + F_v)·w / (|r| − w), r the "
            "smaller pooled knee residual (measured on 1M rows: equal).")


REGRESSION = register(TaskSpec(
    name="regression", title="regression",
    roles=("label", "score", "groups", "more_scores", "quantiles"),
    numeric_target=True,
    metrics=(MetricSpec("mean_residual", "mean residual (bias)", unit="target", better="zero"),
             MetricSpec("mae", "mean absolute error", unit="target"),
             MetricSpec("rmse", "root mean squared error", unit="target")),
    error_metric="mean_residual",
    overview=("mean target", "mean prediction"), overview_labels=("Mean target", "Mean prediction"),
    words={"label": "target", "score": "prediction", "choice": "Regression (numeric target)",
           "guessed": "numbers with many values → regression",
           "pages": "Residuals, Calibration (in the mean) and Group parity (errors and predictions) audit regression; "
                    "the other pages read a two-valued label."},
    recognise=recognise, guess_roles=guess_roles, validate=validator(_regression_columns, _regression_fields),
    reduction=Reduction(cells=REGRESSION_CELLS, reduce=reduce, columns=reduced_columns, note=binned_note),
))
