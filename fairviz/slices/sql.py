"""Every slice's counts in ONE query: the rows are first summed to their finest cells (one per combination of every
attribute's value, with the confusion counts at τ), then ``GROUPING SETS`` sums the cells to every combination of up
to k attributes. The text is the same on DuckDB and Spark: only the dialect's double and text types differ.

Slices of depth ≥ 2 under the support floor are dropped in the query (their refinements cannot reach it, SliceLine's
support pruning), so what comes back is bounded by the grouping sets × rows / floor, never by the rows."""
from __future__ import annotations

import pandas as pd

from fairviz.data.dialects import Dialect
from fairviz.data.model import DataError
from fairviz.slices.counts import COUNTS, MAX_DEPTH, MISSING, SliceCounts, cap_values, combos, plan
from fairviz.data.limits import MAX_GROUPS


def slices_sql(relation: str, label: str, score: str, groups: list[str], depth: int, min_support: float,
               threshold: float, dialect: Dialect) -> str:
    """The query over ``relation``'s columns (positional aliases: no user name enters the text). Rows whose label
    is not 0/1 or whose score is missing, not a number or outside [0, 1] are counted in ``bad`` and left out."""
    # TRY_CAST (DuckDB, Spark ≥ 3.2): a label or score that is not a number is a left-out row, not a failed query
    y, s = (f"TRY_CAST({column} AS {dialect.double})" for column in (label, score))
    ok = (f"{y} IN (0, 1) AND {s} IS NOT NULL AND NOT {dialect.is_nan(s)} AND {s} >= 0 AND {s} <= 1")
    attrs = [f"a{i}" for i in range(len(groups))]
    values = ", ".join(f"COALESCE(CAST({g} AS {dialect.text}), '{MISSING}') AS {a}" for g, a in zip(groups, attrs))
    cell = {"tp": "ok * y * d", "fp": "ok * (1 - y) * d", "fn": "ok * y * (1 - d)", "tn": "ok * (1 - y) * (1 - d)",
            "score_sum": "ok * s", "label_sum": "ok * y"}
    sums = ", ".join(f"SUM({expr}) AS {name}" for name, expr in cell.items())
    sets = ", ".join("(" + ", ".join(attrs[i] for i in combo) + ")" for combo in combos(len(attrs), depth))
    flags = ", ".join(f"GROUPING({a}) AS g{i}" for i, a in enumerate(attrs))
    ungrouped = " + ".join(f"GROUPING({a})" for a in attrs)
    totals = ", ".join(f"SUM({c}) AS {c}" for c in ("n", *cell, "bad"))
    return f"""WITH base AS (
  SELECT {values},
         CASE WHEN {ok} THEN 1 ELSE 0 END AS ok,
         CASE WHEN {y} = 1 THEN 1 ELSE 0 END AS y,
         CASE WHEN {s} >= {float(threshold)!r} THEN 1 ELSE 0 END AS d,
         CASE WHEN {ok} THEN {s} ELSE 0 END AS s
  FROM {relation}
), cells AS (
  SELECT {', '.join(attrs)}, SUM(ok) AS n, {sums}, SUM(1 - ok) AS bad
  FROM base GROUP BY {', '.join(attrs)}
), slices AS (
  SELECT {', '.join(attrs)}, {flags}, {len(attrs)} - ({ungrouped}) AS depth, {totals}
  FROM cells GROUP BY GROUPING SETS ((), {sets})
)
SELECT * FROM slices WHERE depth <= 1 OR n >= {float(min_support)!r}"""


def engine_slice_counts(engine, source, label: str, score: str, groups, max_depth: int = MAX_DEPTH,
                        min_support: float = 100, threshold: float = 0.5, max_values: int = MAX_GROUPS) -> SliceCounts:
    """Run the query on ``engine`` (``fairviz.data.engine.Engine``) over ``source`` (a located source). Registering
    a source and naming its columns by position are the engine's own steps (its reduction does the same)."""
    names, depth, notes = plan(groups, max_depth, min_support)
    engine._register(source, names)
    frame = engine.sql(slices_sql(engine._relation, engine._at(label), engine._at(score),
                                  [engine._at(g) for g in names], depth, min_support, threshold, engine.dialect))
    return counts_from_frame(frame, names, depth, min_support, threshold, notes, max_values)


def counts_from_frame(frame: pd.DataFrame, names, depth, min_support, threshold, notes, max_values) -> SliceCounts:
    frame = frame.copy()
    for c in (*COUNTS, "bad"):
        frame[c] = pd.to_numeric(frame[c]).astype(float).fillna(0.0)
    frame["depth"] = pd.to_numeric(frame["depth"]).astype(int)
    whole = frame[frame["depth"] == 0]
    if whole.empty or whole["n"].iloc[0] <= 0:
        raise DataError("No row has a 0/1 label and a score in [0, 1]: check the label and score columns.")
    total = {c: float(whole[c].iloc[0]) for c in COUNTS}
    bad = int(whole["bad"].iloc[0])
    if bad:
        notes = [*notes, f"{bad:,} row{'s' if bad != 1 else ''} without a 0/1 label or a score in [0, 1] "
                         f"{'were' if bad != 1 else 'was'} left out."]
    rows = frame[frame["depth"] > 0].reset_index(drop=True)
    table = pd.DataFrame(index=rows.index)
    for i, name in enumerate(names):
        grouped = pd.to_numeric(rows[f"g{i}"]).astype(int) == 0
        table[name] = rows[f"a{i}"].astype(object).where(grouped, None)
    table["depth"] = rows["depth"]
    for c in COUNTS:
        table[c] = rows[c]
    return cap_values(SliceCounts(tuple(names), table, total, depth, float(min_support), float(threshold),
                                  tuple(notes)), max_values)
