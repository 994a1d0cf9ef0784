"""Every slice's sufficient statistics: confusion counts at τ, the sums of score and label, for every combination
of up to ``max_depth`` attributes' values. ``slice_counts`` reads a ``Predictions`` (weighted entries or rows);
``fairviz.slices.sql`` gives the same table from one query on the engine."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np
import pandas as pd

from fairviz.data.limits import MAX_GROUPS
from fairviz.data.model import DataError

COUNTS = ("n", "tp", "fp", "fn", "tn", "score_sum", "label_sum")
MAX_ATTRIBUTES = 50             # more attributes than this are refused: name the ones that matter
MAX_GROUPING_SETS = 2_500       # attribute combinations one query computes; past it the depth is lowered
MAX_DEPTH = 3
MISSING = "(missing)"


@dataclass(frozen=True)
class SliceCounts:
    """One row per slice: a column per attribute (its value, or None when the attribute does not define the slice),
    ``depth`` and the counts (``COUNTS``). Slices of depth ≥ 2 under the support floor are not kept: none of their
    refinements can reach it. ``total``: the counts of all the data; ``notes``: what the limits left out."""

    attributes: tuple[str, ...]
    table: pd.DataFrame
    total: dict
    max_depth: int
    min_support: float
    threshold: float
    notes: tuple[str, ...] = ()


def plan(attributes, max_depth: int, min_support: float) -> tuple[tuple[str, ...], int, list[str]]:
    """The attributes and depth that fit the limits, and a note for each thing left out."""
    attributes = tuple(dict.fromkeys(str(a) for a in attributes))
    if not attributes:
        raise DataError("Slices need at least one group attribute (--group).")
    if len(attributes) > MAX_ATTRIBUTES:
        raise DataError(f"{len(attributes)} attributes were given; slices search at most {MAX_ATTRIBUTES}. "
                        "Name the attributes that matter.")
    if not 1 <= int(max_depth) <= MAX_DEPTH:
        raise DataError(f"The slice depth must be 1…{MAX_DEPTH} (got {max_depth}).")
    if not min_support >= 1:
        raise DataError(f"The minimum support must be at least 1 row (got {min_support}).")
    notes, depth = [], min(int(max_depth), len(attributes))
    while depth > 1 and grouping_sets(len(attributes), depth) > MAX_GROUPING_SETS:
        depth -= 1
    if depth < min(max_depth, len(attributes)):
        notes.append(f"{len(attributes)} attributes to depth {max_depth} would be "
                     f"{grouping_sets(len(attributes), max_depth):,} attribute combinations (the limit is "
                     f"{MAX_GROUPING_SETS:,}): slices were searched to depth {depth}.")
    return attributes, depth, notes


def grouping_sets(m: int, depth: int) -> int:
    return sum(comb(m, d) for d in range(1, depth + 1))


def combos(m: int, depth: int) -> list[tuple[int, ...]]:
    return [c for d in range(1, depth + 1) for c in combinations(range(m), d)]


def slice_counts(pred, attributes=None, max_depth: int = MAX_DEPTH, min_support: float = 100,
                 threshold: float = 0.5, max_values: int = MAX_GROUPS) -> SliceCounts:
    """Every slice's counts from a binary ``Predictions``: sums of the entries' weights per (values, label,
    decision) — the engine's counts over the same rows, to the last row."""
    if not pred.binary:
        raise DataError("Slices cover binary predictions (0/1 labels, scores in [0, 1]) for now.")
    names, depth, notes = plan(attributes or list(pred.attributes), max_depth, min_support)
    missing = [a for a in names if a not in pred.attributes]
    if missing:
        raise DataError(f"'{missing[0]}' is not a group attribute of the data ({', '.join(pred.attributes)}).")
    weight = np.ones(len(pred.y)) if pred.weight is None else np.asarray(pred.weight, float)
    y = np.asarray(pred.y, float)
    d = (np.asarray(pred.score) >= threshold).astype(float)
    frame = pd.DataFrame({f"a{i}": pred.attributes[a].codes for i, a in enumerate(names)})
    frame["n"] = weight
    frame["tp"], frame["fp"] = weight * y * d, weight * (1 - y) * d
    frame["fn"], frame["tn"] = weight * y * (1 - d), weight * (1 - y) * (1 - d)
    frame["score_sum"], frame["label_sum"] = weight * pred.score, weight * y
    keys = list(frame.columns[:len(names)])
    cells = frame.groupby(keys, sort=False, observed=True)[list(COUNTS)].sum().reset_index()
    decode = [np.asarray(pred.attributes[a].names, dtype=object) for a in names]
    parts = []
    for combo in combos(len(names), depth):
        grouped = cells.groupby([keys[i] for i in combo], sort=False)[list(COUNTS)].sum().reset_index()
        if len(combo) > 1:
            grouped = grouped[grouped["n"] >= min_support]
        part = pd.DataFrame({a: None for a in names}, index=grouped.index, dtype=object)
        for i in combo:
            part[names[i]] = decode[i][grouped[keys[i]].to_numpy()]
        part["depth"] = len(combo)
        parts.append(pd.concat([part, grouped[list(COUNTS)]], axis=1))
    total = {c: float(frame[c].sum()) for c in COUNTS}
    table = pd.concat(parts, ignore_index=True)
    return cap_values(SliceCounts(names, table, total, depth, float(min_support), float(threshold), tuple(notes)),
                      max_values)


def cap_values(counts: SliceCounts, max_values: int) -> SliceCounts:
    """Leave out every slice of an attribute with more values than ``max_values`` (an id-like column), and say so."""
    first = counts.table[counts.table["depth"] == 1]
    notes, drop = list(counts.notes), np.zeros(len(counts.table), bool)
    for attribute in counts.attributes:
        values = int(first[attribute].notna().sum())
        if values > max_values:
            drop |= counts.table[attribute].notna().to_numpy()
            notes.append(f"'{attribute}' has {values:,} values (the limit is {max_values:,} per attribute: an id-like "
                         "column?): its slices were left out.")
    if not drop.any():
        return counts
    table = counts.table[~drop].reset_index(drop=True)
    return SliceCounts(counts.attributes, table, counts.total, counts.max_depth, counts.min_support,
                       counts.threshold, tuple(notes))


def slice_names(table: pd.DataFrame, attributes) -> list[str]:
    """'sex=F ∧ age=18-25' per row: the attributes that define the slice, in the order they were given."""
    columns = [table[a].to_numpy(object) for a in attributes]
    return [" ∧ ".join(f"{a}={v}" for a, v in zip(attributes, values) if isinstance(v, str))
            for values in zip(*columns)]


SLICE_PREFIX = "slice: "
IN_SLICE, REST = "in the slice", "the rest"


def slice_attribute(pred, values: dict) -> tuple[str, object]:
    """The attribute "this slice vs the rest" over ``pred``'s entries: ``slice: sex=F ∧ age=18-25`` with two groups
    (the larger first, as every attribute orders its groups). ``values``: attribute → value."""
    from fairviz.data.model import GroupView

    inside = np.ones(len(pred.y), bool)
    for attribute, value in values.items():
        view = pred.attributes[attribute]
        if value not in view.names:
            raise DataError(f"'{value}' is not a group of '{attribute}'.")
        inside &= view.mask(value)
    name = SLICE_PREFIX + " ∧ ".join(f"{a}={v}" for a, v in values.items())
    weight = np.ones(len(inside)) if pred.weight is None else np.asarray(pred.weight, float)
    names = (IN_SLICE, REST) if weight[inside].sum() >= weight[~inside].sum() else (REST, IN_SLICE)
    codes = np.where(inside, names.index(IN_SLICE), names.index(REST)).astype(np.int32)
    return name, GroupView(name, codes, names, pred.weight)
