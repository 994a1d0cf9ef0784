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
from fairviz.data.tasks import BINARY
from fairviz.slices.counts import (MAX_DEPTH, MISSING, SliceCounts, cap_values, check_top_k, combos, lattice_search,
                                   named, plan)
from fairviz.slices.methods import method_of

CELL_GAIN = 8           # the cells pass is worth it when the cells are at most 1/8 of the rows


def slices_sql(relation: str, label: str, score: str, groups: list[str], depth: int, min_support: float,
               threshold: float, dialect: Dialect, *, sets=None, total: bool = True, task: str = BINARY.name,
               cells: bool = True, predicted: str = "") -> str:
    """The query over ``relation``'s columns (positional aliases: no user name enters the text). ``sets``: the
    attribute combinations (tuples of positions in ``groups``; default every one to ``depth``); ``total``: add the
    whole data's row (``()``). Rows the task's method cannot use (``row_sql``'s condition: e.g. a label that is not
    0/1, or a score missing, not a number or outside [0, 1]) are counted in ``bad`` and left out. ``cells``: sum the
    rows to their finest cells before the grouping sets (see ``worth_cells``). ``predicted``: the predicted-class
    column of a method that reads one (``score`` is then its confidence, or "")."""
    method = method_of(task)
    sets = list(sets) if sets is not None else combos(len(groups), depth)
    # TRY_CAST (DuckDB, Spark ≥ 3.2): a label or score that is not a number is a left-out row, not a failed query
    y, s = (f"TRY_CAST({column} AS {dialect.double})" if column else "" for column in (label, score))
    columns, cell, ok = method.row_sql(y, s, dialect, threshold, label, predicted)
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
                        task: str = BINARY.name, metric: str | None = None, top_k: int | None = None,
                        predicted: str | None = None) -> SliceCounts:
    """Run the search on ``engine`` (``fairviz.data.engine.Engine``) over ``source`` (a located source): the full
    lattice in one query, or with ``top_k`` the pruned search, one query per level. ``task``: the task's name (its
    method, ``fairviz.slices.methods``, says what ``label`` and ``score`` are: a 0/1 label and a score in [0, 1], a
    target and its prediction, or a class with ``predicted`` the predicted class and score its confidence or None)."""
    method = method_of(task)
    top_k = check_top_k(top_k)
    names, depth, notes = plan(groups, max_depth, min_support, top_k is not None)
    if method.reads_predicted and not predicted:
        raise DataError(f"Slices of {task} predictions on the engine read a predicted-class column (--predicted).")
    read = list(dict.fromkeys(c for c in (label, score, predicted, *names) if c))
    # a class is compared as the file writes it: label and predicted class read as text, as the attributes are
    as_text = (*names, label, predicted) if method.reads_predicted else names
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
        frame = method.derived(frame) if method.derived else frame
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
        rows, were = ("rows", "were") if bad != 1 else ("row", "was")
        notes = [*notes, f"{bad:,} {rows} without {method.usable} {were} left out."]
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
    method = method_of(task)
    if whole.empty or not float(pd.to_numeric(whole["n"]).fillna(0).iloc[0]) > 0:
        raise DataError(method.empty)
    row = whole.iloc[0]
    return {c: float(pd.to_numeric(row[c])) for c in method.counts}, int(float(row["bad"] or 0))


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
    for c in method_of(task).counts:
        table[c] = pd.to_numeric(rows[c]).astype(float).fillna(0.0).to_numpy()
    return table
