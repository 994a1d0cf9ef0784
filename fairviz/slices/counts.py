"""Every slice's sufficient statistics (the task's counts, ``fairviz.slices.methods``: e.g. confusion counts at τ
and the sums of score and label) for every combination of up to ``max_depth`` attributes' values. ``slice_counts``
reads a ``Predictions`` (weighted entries or rows); ``fairviz.slices.sql`` gives the same table from one query on the
engine."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from itertools import combinations
from math import comb, prod

import numpy as np
import pandas as pd

from fairviz.data.limits import MAX_GROUPS
from fairviz.data.model import DataError
from fairviz.data.tasks import BINARY, spec_of
from fairviz.slices.methods import method_of

MAX_ATTRIBUTES = 50             # more attributes than this are refused: name the ones that matter
MAX_GROUPING_SETS = 2_500       # attribute combinations one query computes; past it the depth is lowered
MAX_DEPTH = 3
MISSING = "(missing)"


@dataclass(frozen=True)
class Search:
    """What the lattice search computed and left out. ``top_k`` None: the full lattice (one query). ``queries``:
    queries (levels) run; ``grouping_sets``: attribute combinations computed, of ``lattice_sets`` in the lattice;
    ``evaluated``: slices kept; ``pruned``: slices at or above the support floor that were not evaluated (exact
    where their combination was computed, else bounded by min(Π values at the floor, rows / floor))."""

    top_k: int | None = None
    metric: str | None = None
    queries: int = 1
    grouping_sets: int = 0
    lattice_sets: int = 0
    evaluated: int = 0
    pruned: int = 0


@dataclass(frozen=True)
class SliceCounts:
    """One row per slice: a column per attribute (its value, or None when the attribute does not define the slice),
    ``depth`` and the counts (``method_of(task).counts``). Slices of depth ≥ 2 under the support floor are not kept:
    none of their refinements can reach it. ``total``: the counts of all the data; ``notes``: what the limits left out;
    ``search``: what the level-wise search computed and pruned."""

    attributes: tuple[str, ...]
    table: pd.DataFrame
    total: dict
    max_depth: int
    min_support: float
    threshold: float
    notes: tuple[str, ...] = ()
    task: str = BINARY.name
    search: Search = field(default_factory=Search)


def plan(attributes, max_depth: int, min_support: float, pruned: bool = False) -> tuple[tuple[str, ...], int, list[str]]:
    """The attributes and depth that fit the limits, and a note for each thing left out. ``pruned``: a level-wise
    search, whose levels are each held to the grouping-set limit as they are planned, so the depth is not lowered
    here."""
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
    while not pruned and depth > 1 and grouping_sets(len(attributes), depth) > MAX_GROUPING_SETS:
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


FULL_LATTICE = 41           # attribute combinations searched whole by default (six attributes to depth 3)
PRUNED_TOP_K = 20           # the default top-k past it


def default_top_k(attributes: int, depth: int = MAX_DEPTH) -> int:
    """Every slice while the lattice is small; past ``FULL_LATTICE`` combinations, the pruned search, which keeps
    ten and more attributes fast (0: the full lattice)."""
    return 0 if grouping_sets(attributes, min(depth, attributes)) <= FULL_LATTICE else PRUNED_TOP_K


def check_top_k(top_k) -> int | None:
    if top_k is None or int(top_k) == 0:
        return None
    if int(top_k) < 0:
        raise DataError(f"The top-k of the pruned search must be a positive number of slices (got {top_k}).")
    return int(top_k)


def slice_counts(pred, attributes=None, max_depth: int = MAX_DEPTH, min_support: float = 100,
                 threshold: float = 0.5, max_values: int = MAX_GROUPS, *, metric: str | None = None,
                 top_k: int | None = None) -> SliceCounts:
    """Every slice's counts from a ``Predictions`` (the task's counts: confusion cells at τ, residual sums or
    errors): sums of the entries' weights per cell — the engine's counts over the same rows, to the last
    row. ``top_k``: the level-wise search that leaves unexpanded every slice whose bound on SliceLine's score of
    ``metric`` cannot beat the current k-th best (``fairviz.slices.metrics``); None: the full lattice."""
    task, method = pred.task, method_of(pred.task)
    top_k = check_top_k(top_k)
    names, depth, notes = plan(attributes or list(pred.attributes), max_depth, min_support, top_k is not None)
    missing = [a for a in names if a not in pred.attributes]
    if missing:
        raise DataError(f"'{missing[0]}' is not a group attribute of the data ({', '.join(pred.attributes)}).")
    frame = pd.DataFrame({f"a{i}": pred.attributes[a].codes for i, a in enumerate(names)})
    for column, values in method.row_counts(pred, threshold).items():
        frame[column] = values
    counts = list(method.counts)
    keys = [f"a{i}" for i in range(len(names))]
    cells = frame.groupby(keys, sort=False, observed=True)[counts].sum().reset_index()
    decode = [np.asarray(pred.attributes[a].names, dtype=object) for a in names]

    def level(sets):
        parts = []
        for combo in sets:
            grouped = cells.groupby([keys[i] for i in combo], sort=False)[counts].sum().reset_index()
            if len(combo) > 1:
                grouped = grouped[grouped["n"] >= min_support]
            part = pd.DataFrame({k: None for k in keys}, index=grouped.index, dtype=object)
            for i in combo:
                part[keys[i]] = decode[i][grouped[keys[i]].to_numpy()]
            part["depth"] = len(combo)
            parts.append(pd.concat([part, grouped[counts]], axis=1))
        return pd.concat(parts, ignore_index=True)

    total = {c: float(frame[c].sum()) for c in counts}
    table, search, more = lattice_search(level, len(names), depth, min_support, total, task, metric, top_k)
    return cap_values(SliceCounts(names, named(table, names), total, depth, float(min_support), float(threshold),
                                  tuple(notes + more), task, search), max_values)


def named(table: pd.DataFrame, names) -> pd.DataFrame:
    """The search's table (value columns a0, a1, …) with the attributes' own names."""
    return table.rename(columns={f"a{i}": name for i, name in enumerate(names)})


def lattice_search(level, m: int, depth: int, floor: float, total, task: str, metric: str | None,
                   top_k: int | None) -> tuple[pd.DataFrame, Search, list[str]]:
    """The slices to ``depth`` over ``m`` attributes. ``level(sets)`` computes every slice of those attribute
    combinations (value columns a0…, ``depth``, the counts; depth ≥ 2 at or above the floor only), one query on an
    engine. Without ``top_k``: every combination at once. With it, level by level (SliceLine, Sagadeeva and Boehm,
    SIGMOD 2021): ``total`` (the whole data's counts, or a function giving them after the first query) bounds
    the score; level d + 1 evaluates a slice only when each of its d parents was evaluated and is at or above the
    floor, and its score bound (``metrics.bound``, SliceLine's score) exceeds the bar; a combination with no
    such slice is not computed. The bar is the k-th best score so far, or 0 while fewer than k slices score above 0
    (only those enter SliceLine's top-k)."""
    from fairviz.slices import metrics as scores

    keys = [f"a{i}" for i in range(m)]
    lattice = grouping_sets(m, depth)
    if top_k is None:
        table = level(combos(m, depth))
        return table, Search(None, metric, 1, lattice, lattice, len(table), 0), []
    metric = metric or spec_of(task).error_metric
    scores.check_metric(metric, task)
    tables = [level([(i,) for i in range(m)])]
    total = total() if callable(total) else total       # an engine's totals come with its first query
    computed, queries, pruned, notes = m, 1, 0, []
    first = tables[0]
    at_floor = {i: int(((first[keys[i]].notna()) & (first["n"] >= floor)).sum()) for i in range(m)}
    most = int(total["n"] // floor)
    found = np.where(first["n"].to_numpy(float) >= floor, scores.score(first, total, task, metric), -np.inf)
    items = Items(first[first["n"].to_numpy(float) >= floor], keys)
    for d in range(1, depth):
        previous = tables[-1]
        kept = previous[previous["n"].to_numpy(float) >= floor].reset_index(drop=True)
        parents = pd.concat([pd.DataFrame(items.of(kept, d), columns=[f"i{j}" for j in range(d)]),
                             scores.parts(kept, task, metric)], axis=1)
        best = np.sort(found[found > 0])[::-1]           # SliceLine's top-k holds positive scores only
        bar = best[top_k - 1] if len(best) >= top_k else 0.0
        children = children_of(parents, d, items.attribute)
        children = children[scores.bound(children, total, task, metric, floor) > bar]
        child_items = children[[f"i{j}" for j in range(d + 1)]].to_numpy()
        wanted_combos = sorted({tuple(int(a) for a in row) for row in items.attribute[child_items]})
        skipped = [c for c in combinations(range(m), d + 1) if c not in set(wanted_combos)]
        if len(wanted_combos) > MAX_GROUPING_SETS:
            notes.append(f"Level {d + 1} of the pruned search would compute {len(wanted_combos):,} attribute "
                         f"combinations (the limit is {MAX_GROUPING_SETS:,}): slices were searched to depth {d}.")
            skipped, wanted_combos = list(combinations(range(m), d + 1)), []
        pruned += sum(min(prod(at_floor[i] for i in c), most) for c in skipped)
        if not wanted_combos:
            for deeper in range(d + 2, depth + 1):
                pruned += sum(min(prod(at_floor[i] for i in c), most) for c in combinations(range(m), deeper))
            break
        result = level(wanted_combos)
        queries, computed = queries + 1, computed + len(wanted_combos)
        wanted = set(map(tuple, child_items.tolist()))
        evaluated = np.array([tuple(row) in wanted for row in items.of(result, d + 1).tolist()], bool)
        pruned += int((~evaluated).sum())
        level_table = result[evaluated].reset_index(drop=True)
        tables.append(level_table)
        found = np.concatenate([found, scores.score(level_table, total, task, metric)])
    table = pd.concat(tables, ignore_index=True)
    return table, Search(top_k, metric, queries, computed, lattice, len(table), pruned), notes


class Items:
    """The depth-1 slices at or above the floor as items (an attribute and a value), numbered in attribute order, so
    that a slice of depth d is the sorted row of its d item numbers."""

    def __init__(self, first: pd.DataFrame, keys):
        self.keys = keys
        self.codes, attributes = [], []
        for i, key in enumerate(keys):
            values = [v for v in first[key].to_numpy(object) if v is not None]
            self.codes.append({v: len(attributes) + k for k, v in enumerate(values)})
            attributes += [i] * len(values)
        self.attribute = np.asarray(attributes, dtype=np.int64)

    def of(self, table: pd.DataFrame, d: int) -> np.ndarray:
        """Each row's item numbers (rows × d); −1 where a value is not an item (under the floor)."""
        ids = np.full((len(table), len(self.keys)), -1, dtype=np.int64)
        for i, key in enumerate(self.keys):
            column = table[key].to_numpy(object)
            ids[:, i] = [self.codes[i].get(v, -2) if v is not None else -1 for v in column]
        defined = np.sort(ids, axis=1)[:, len(self.keys) - d:]
        return np.where((ids == -2).any(axis=1)[:, None], -1, defined)


def children_of(parents: pd.DataFrame, d: int, attribute: np.ndarray) -> pd.DataFrame:
    """SliceLine's candidate generation, for a whole level at once: two parents of depth d that share their first
    d − 1 items and end in items of different attributes make a child of depth d + 1; it is kept only if its every
    other parent is in ``parents`` too. Returns the children's items (i0…i_d) and the minimum of their parents'
    bound parts."""
    items = [f"i{j}" for j in range(d)]
    part_names = [c for c in parents.columns if c.startswith("b_")]
    parents = parents[(parents[items] >= 0).all(axis=1)]
    shared = items[:-1]
    left = parents.rename(columns={items[-1]: "left", **{c: f"{c}_l" for c in part_names}})
    right = parents.rename(columns={items[-1]: "right", **{c: f"{c}_r" for c in part_names}})
    pairs = left.merge(right, how="cross") if not shared else left.merge(right, on=shared)
    pairs = pairs[attribute[pairs["left"].to_numpy()] < attribute[pairs["right"].to_numpy()]]
    child = [f"i{j}" for j in range(d + 1)]
    out = pairs[shared].copy() if shared else pd.DataFrame(index=pairs.index)
    out[child[-2]], out[child[-1]] = pairs["left"].to_numpy(), pairs["right"].to_numpy()
    for c in part_names:
        out[c] = np.minimum(pairs[f"{c}_l"].to_numpy(float), pairs[f"{c}_r"].to_numpy(float))
    for drop in range(d - 1):               # the parents without one of the shared items
        rest = [c for j, c in enumerate(child) if j != drop]
        other = parents.rename(columns=dict(zip(items, rest)))
        other = other.rename(columns={c: f"{c}_o" for c in part_names})
        out = out.merge(other, on=rest)
        for c in part_names:
            out[c] = np.minimum(out[c].to_numpy(float), out.pop(f"{c}_o").to_numpy(float))
    return out.reset_index(drop=True)


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
    return dataclasses.replace(counts, table=table, notes=tuple(notes))


def slice_names(table: pd.DataFrame, attributes) -> list[str]:
    """'sex=F ∧ age=18-25' per row: the attributes that define the slice, in the order they were given."""
    columns = [table[a].to_numpy(object) for a in attributes]
    return [" ∧ ".join(f"{a}={v}" for a, v in zip(attributes, values) if isinstance(v, str))
            for values in zip(*columns)]
