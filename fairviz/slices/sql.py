"""Every slice's counts on the engine: the rows are first summed to their finest cells (one per combination of the
attributes' values, with the task's counts: confusion cells at τ, or residual sums), then ``GROUPING SETS`` sums
the cells to the attribute combinations asked for. The full lattice is ONE query; the pruned search
(``counts.lattice_search``) runs one such query per level, over only the combinations that hold a candidate, and
the cells of a level group by only the attributes those combinations use. The text is the same on DuckDB and Spark:
only the dialect's double and text types differ. No name or value of the data enters the text: columns are read by
their positional aliases, and the candidates are chosen from the small per-slice table in Python.

Slices of depth ≥ 2 under the support floor are dropped in the query (their refinements cannot reach it, SliceLine's
support pruning), so what comes back is bounded by the grouping sets × rows / floor, never by the rows."""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairviz.data.dialects import Dialect
from fairviz.data.limits import MAX_GROUPS
from fairviz.data.model import DataError
from fairviz.slices.counts import (ECE_BINS, GAPS, MAX_DEPTH, MISSING, TASK_COUNTS, SliceCounts, cap_values, check_top_k, combos,
                                   lattice_search, named, plan)

SQL_TASKS = ("binary", "regression", "multiclass")
CELL_GAIN = 8           # the cells pass is worth it when the cells are at most 1/8 of the rows


def _row_values(task: str, y: str, s: str, dialect: Dialect, threshold: float,
                label: str = "", predicted: str = "") -> tuple[str, dict[str, str], str]:
    """The base's per-row columns (besides the attributes), each count's summand, and the condition of a usable row.
    A multiclass row is right when its label and predicted class read the same as text; its confidence (``s``, when
    mapped) is summed where it is a finite number."""
    if task == "multiclass":
        ok = f"{label} IS NOT NULL AND {predicted} IS NOT NULL"
        right = f"CAST({label} AS {dialect.text}) = CAST({predicted} AS {dialect.text})"
        confidence = f"CASE WHEN {s} - {s} = 0 THEN {s} ELSE 0 END" if s else "0"
        columns = (f"CASE WHEN {ok} AND {right} THEN 1 ELSE 0 END AS c,\n"
                   f"         CASE WHEN {ok} THEN {confidence} ELSE 0 END AS s")
        sums = {"n": "ok", "errors": "ok * (1 - c)", "score_sum": "s", "correct_sum": "c"}
        return columns, sums, ok
    if task == "regression":
        # x − x = 0 is false for NULL, NaN and ±inf alike (on DuckDB and Spark)
        ok = f"{y} - {y} = 0 AND {s} - {s} = 0"
        columns = f"CASE WHEN {ok} THEN {s} - {y} ELSE 0 END AS r"
        sums = {"n": "ok", "residual_sum": "r", "residual_sq": "r * r", "abs_residual_sum": "ABS(r)"}
        return columns, sums, ok
    ok = f"{y} IN (0, 1) AND {s} IS NOT NULL AND NOT {dialect.is_nan(s)} AND {s} >= 0 AND {s} <= 1"
    columns = (f"CASE WHEN {y} = 1 THEN 1 ELSE 0 END AS y,\n"
               f"         CASE WHEN {s} >= {float(threshold)!r} THEN 1 ELSE 0 END AS d,\n"
               f"         CASE WHEN {ok} THEN {s} ELSE 0 END AS s,\n"
               f"         CASE WHEN {ok} THEN LEAST(FLOOR({s} * {ECE_BINS}), {ECE_BINS - 1}) ELSE -1 END AS bin")
    # n, Σ label and Σ score follow from these (``slice_rows``): fewer sums, a faster query
    sums = {"tp": "ok * y * d", "fp": "ok * (1 - y) * d", "fn": "ok * y * (1 - d)", "tn": "ok * (1 - y) * (1 - d)"}
    sums.update({gap: f"CASE WHEN bin = {b} THEN y - s ELSE 0 END" for b, gap in enumerate(GAPS)})
    return columns, sums, ok


def slices_sql(relation: str, label: str, score: str, groups: list[str], depth: int, min_support: float,
               threshold: float, dialect: Dialect, *, sets=None, total: bool = True, task: str = "binary",
               cells: bool = True, predicted: str = "") -> str:
    """The query over ``relation``'s columns (positional aliases: no user name enters the text). ``sets``: the
    attribute combinations (tuples of positions in ``groups``; default every one to ``depth``); ``total``: add the
    whole data's row (``()``). Binary: rows whose label is not 0/1 or whose score is missing, not a number or outside
    [0, 1] are counted in ``bad`` and left out; regression: rows whose target or prediction is not a finite number.
    ``cells``: sum the rows to their finest cells before the grouping sets (see ``worth_cells``). Multiclass:
    ``predicted`` the predicted-class column, ``score`` its confidence or "" (rows without a label or a predicted
    class are left out)."""
    if task not in SQL_TASKS:
        raise DataError(f"Slices on the engine cover binary, regression and multiclass predictions (got {task}).")
    sets = list(sets) if sets is not None else combos(len(groups), depth)
    # TRY_CAST (DuckDB, Spark ≥ 3.2): a label or score that is not a number is a left-out row, not a failed query
    y, s = (f"TRY_CAST({column} AS {dialect.double})" if column else "" for column in (label, score))
    columns, cell, ok = _row_values(task, y, s, dialect, threshold, label, predicted)
    used = sorted({i for combo in sets for i in combo})
    attrs = [f"a{i}" for i in used]
    values = ", ".join(f"COALESCE(CAST({groups[i]} AS {dialect.text}), '{MISSING}') AS a{i}" for i in used)
    sums = ", ".join(f"SUM({expr}) AS {name}" for name, expr in cell.items())
    grouping = ", ".join("(" + ", ".join(f"a{i}" for i in combo) + ")" for combo in sets)
    flags = ", ".join(f"GROUPING({a}) AS g{a[1:]}" for a in attrs)
    ungrouped = " + ".join(f"GROUPING({a})" for a in attrs)
    totals = ", ".join(f"SUM({c}) AS {c}" for c in (*cell, "bad"))
    size = "n" if "n" in cell else "tp + fp + fn + tn"
    finest = (f"SELECT {', '.join(attrs)}, {sums}, SUM(1 - ok) AS bad\n  FROM base GROUP BY {', '.join(attrs)}"
              if cells else
              f"SELECT {', '.join(attrs)}, {', '.join(f'{e} AS {c}' for c, e in cell.items())}, 1 - ok AS bad"
              f"\n  FROM base")
    return f"""WITH base AS (
  SELECT {values},
         CASE WHEN {ok} THEN 1 ELSE 0 END AS ok,
         {columns}
  FROM {relation}
), cells AS (
  {finest}
), slices AS (
  SELECT {', '.join(attrs)}, {flags}, {len(attrs)} - ({ungrouped}) AS depth, {totals}
  FROM cells GROUP BY GROUPING SETS ({'(), ' if total else ''}{grouping})
)
SELECT * FROM slices WHERE depth <= 1 OR {size} >= {float(min_support)!r}"""


def engine_slice_counts(engine, source, label: str, score: str, groups, max_depth: int = MAX_DEPTH,
                        min_support: float = 100, threshold: float = 0.5, max_values: int = MAX_GROUPS, *,
                        task: str = "binary", metric: str | None = None, top_k: int | None = None,
                        predicted: str | None = None) -> SliceCounts:
    """Run the search on ``engine`` (``fairviz.data.engine.Engine``) over ``source`` (a located source): the full
    lattice in one query, or with ``top_k`` the pruned search, one query per level. ``task``: 'binary' (label 0/1,
    score in [0, 1]), 'regression' (label the target, score the prediction) or 'multiclass' (label the class,
    ``predicted`` the predicted class, score its confidence or None)."""
    top_k = check_top_k(top_k)
    names, depth, notes = plan(groups, max_depth, min_support, top_k is not None)
    if task == "multiclass" and not predicted:
        raise DataError("Multiclass slices on the engine read a predicted-class column (--predicted).")
    read = list(dict.fromkeys(c for c in (label, score, predicted, *names) if c))
    # a class is compared as the file writes it: label and predicted class read as text, as the attributes are
    as_text = (*names, label, predicted) if task == "multiclass" else names
    relation, at = engine.located_columns(source, read, text=as_text)
    at[""] = ""
    columns = [at[g] for g in names]
    found = {}

    def level(sets):
        first = not found
        frame = engine.sql(slices_sql(relation, at[label], at[score or ""], columns, depth, min_support, threshold,
                                      engine.dialect, sets=sets, total=first, task=task,
                                      cells=top_k is None or worth_cells(sets, found),
                                      predicted=at[predicted or ""]))
        frame = derived(frame, task)
        rows = slice_rows(frame, len(names), task)
        if first:
            found["total"], found["bad"] = whole_of(frame, task)
            single = rows[rows["depth"] == 1]
            found["values"] = {i: int(single[f"a{i}"].notna().sum()) for i in range(len(names))}
        return rows

    table, search, more = lattice_search(level, len(names), depth, min_support, lambda: found["total"], task,
                                         metric, top_k)
    total, bad = found["total"], found["bad"]
    if bad:
        what = {"regression": "a finite target and prediction", "multiclass": "a label and a predicted class"}.get(
            task, "a 0/1 label or a score in [0, 1]")
        notes = [*notes, f"{bad:,} row{'s' if bad != 1 else ''} without {what} {'were' if bad != 1 else 'was'} "
                         "left out."]
    return cap_values(SliceCounts(tuple(names), named(table, names), total, depth, float(min_support),
                                  float(threshold), tuple(notes + more), task, search), max_values)


def worth_cells(sets, found: dict) -> bool:
    """Sum the rows to cells first only where the cells are far fewer than the rows: each grouping set then reads
    the cells, not the rows (the full lattice over few attributes: 20M rows, 46,656 cells); where every row is
    nearly its own cell (12 attributes of 8 values), the extra pass costs as much as it saves. Unknown before the
    first level's query: not then."""
    if "values" not in found:
        return False
    used = {i for combo in sets for i in combo}
    cells = float(np.prod([max(found["values"][i], 1) for i in used], dtype=float))
    return cells * CELL_GAIN <= found["total"]["n"]


def whole_of(frame: pd.DataFrame, task: str) -> tuple[dict, int]:
    """The whole data's counts (the ``()`` row) and the rows left out."""
    depth = pd.to_numeric(frame["depth"]).astype(int)
    whole = frame[depth == 0]
    counts = TASK_COUNTS[task]
    if whole.empty or not float(pd.to_numeric(whole["n"]).fillna(0).iloc[0]) > 0:
        if task == "regression":
            raise DataError("No row has a numeric target and prediction: check the label and score columns.")
        if task == "multiclass":
            raise DataError("No row has a label and a predicted class: check the label and predicted columns.")
        raise DataError("No row has a 0/1 label and a score in [0, 1]: check the label and score columns.")
    row = whole.iloc[0]
    return {c: float(pd.to_numeric(row[c])) for c in counts}, int(float(row["bad"] or 0))


def derived(frame: pd.DataFrame, task: str) -> pd.DataFrame:
    """A binary query's n, Σ label and Σ score from its cells: n = tp + fp + fn + tn, Σ label = tp + fn,
    Σ score = Σ label − Σ_b Σ (label − score)."""
    if task != "binary":
        return frame
    frame = frame.copy()
    cells = {c: pd.to_numeric(frame[c]).astype(float).fillna(0.0) for c in ("tp", "fp", "fn", "tn", *GAPS)}
    frame["n"] = cells["tp"] + cells["fp"] + cells["fn"] + cells["tn"]
    frame["label_sum"] = cells["tp"] + cells["fn"]
    frame["score_sum"] = frame["label_sum"] - sum(cells[g] for g in GAPS)
    return frame


def slice_rows(frame: pd.DataFrame, m: int, task: str) -> pd.DataFrame:
    """The query's slices (depth ≥ 1) as the search's table: value columns a0… (None where the attribute does not
    define the slice: GROUPING tells that from a real missing value), ``depth`` and the counts."""
    depth = pd.to_numeric(frame["depth"]).astype(int)
    rows = frame[depth > 0].reset_index(drop=True)
    table = pd.DataFrame(index=rows.index)
    for i in range(m):
        if f"g{i}" in rows.columns:
            grouped = pd.to_numeric(rows[f"g{i}"]).astype(int) == 0
            table[f"a{i}"] = rows[f"a{i}"].astype(object).where(grouped, None)
        else:
            table[f"a{i}"] = pd.Series([None] * len(rows), index=rows.index, dtype=object)
    table["depth"] = depth[depth > 0].to_numpy()
    for c in TASK_COUNTS[task]:
        table[c] = pd.to_numeric(rows[c]).astype(float).fillna(0.0).to_numpy()
    return table
