"""What every task's validation shares: missing values, group columns and their views, rows counted with weights.

Binary predictions (``fairviz.data.validation``) and regression or multiclass ones (``fairviz.data.tasks``) clean
their rows the same way: the missing-value words are missing, group values that print alike are one group, groups
too small to compare are dropped and named.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairviz.data.model import INTERSECTION_SEP, ColumnMapping, DataError, GroupView, weighted_bincount
from fairviz.data.reading import NA_VALUES
from fairviz.data.roles import range_order

MIN_GROUP_SIZE = 2


def count_rows(mask: np.ndarray, weights: np.ndarray | None) -> int:
    """Rows where ``mask`` holds (weighted data: the sum of their weights)."""
    mask = np.asarray(mask, dtype=bool)
    return int(mask.sum()) if weights is None else int(weights[mask].sum())


_NA_TEXTS = frozenset(v.lower() for v in NA_VALUES)


def without_na_texts(series: pd.Series) -> pd.Series:
    """Text columns with the missing-value words (NA, null, …, any case, spaces around) as missing values."""
    if not (series.dtype == object or pd.api.types.is_string_dtype(series)):
        return series
    text = series.astype("string").str.strip().str.lower()
    missing = text.isin(_NA_TEXTS).fillna(False).to_numpy(dtype=bool)
    return series.where(~missing) if missing.any() else series


def numeric_values(series: pd.Series, name: str, problems: list[str], weights=None, role: str = "score",
                   wanted: str = "scores must be numbers in [0, 1]",
                   true_false: str = "it needs probabilities in [0, 1]") -> pd.Series:
    """A column as numbers; text in it is a problem naming the column, how many rows and examples."""
    if pd.api.types.is_bool_dtype(series):
        problems.append(f"The {role} column '{name}' holds true/false values; {true_false}.")
        return series.astype(float)
    if pd.api.types.is_numeric_dtype(series):
        return series.astype(float)
    numeric = pd.to_numeric(series, errors="coerce")
    text_mask = numeric.isna() & series.notna() & (series.astype(str).str.strip() != "")
    if text_mask.any():
        examples = ", ".join(repr(v) for v in series[text_mask].astype(str).unique()[:3])
        problems.append(f"The {role} column '{name}' has {count_rows(text_mask.to_numpy(), weights):,} non-numeric "
                        f"values (e.g. {examples}); {wanted}.")
    return numeric


def factorize_groups(series: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Codes and names of a group column; missing and blank values get code −1. Values that print alike
    (1 and '1', ' a' and 'a') are one group."""
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    names = [str(u).strip() for u in uniques]
    distinct = {name: k for k, name in enumerate(dict.fromkeys(n for n in names if n))}
    remap = np.array([distinct.get(name, -1) for name in names] + [-1], dtype=np.int64)
    return remap[codes], list(distinct)          # codes of −1 index the appended −1


def group_attributes(groups: dict[str, tuple[np.ndarray, list[str]]], mapping: ColumnMapping, problems: list[str],
                notes: list[str], weights: np.ndarray | None = None) -> dict[str, GroupView]:
    attributes = {}
    for col, (codes, names) in groups.items():
        view = ordered_view(col, codes, names, weights)
        if len(view.names) < 2:
            problems.append(f"The group column '{col}' has a single value ('{view.names[0]}'): fairness compares "
                            "groups, so it needs at least two.")
        attributes[col] = view
    if mapping.intersect and len(mapping.groups) >= 2:
        a, b = mapping.groups[:2]
        (codes_a, names_a), (codes_b, names_b) = groups[a], groups[b]
        joint, pairs = pd.factorize(codes_a * len(names_b) + codes_b)
        joint_names = [f"{names_a[p // len(names_b)]}{INTERSECTION_SEP}{names_b[p % len(names_b)]}" for p in pairs]
        attributes[f"{a}{INTERSECTION_SEP}{b}"] = ordered_view(f"{a}{INTERSECTION_SEP}{b}", joint, joint_names,
                                                                weights)
    for view in attributes.values():
        tiny = [f"'{name}' (n = {size})" for name, size in zip(view.names, view.sizes) if size < MIN_GROUP_SIZE]
        listed = ", ".join(tiny[:10]) + (f", … ({len(tiny):,} in all)" if len(tiny) > 10 else "")
        if tiny and len(view.names) - len(tiny) >= 2:
            notes.append(f"Group{'s' if len(tiny) > 1 else ''} {listed} of '{view.attribute}' "
                         f"dropped: fewer than {MIN_GROUP_SIZE} rows cannot be compared.")
        elif tiny and len(view.names) >= 2:
            problems.append(f"The group column '{view.attribute}' has fewer than two groups with at least "
                            f"{MIN_GROUP_SIZE} rows ({listed}).")
    return attributes


def ordered_view(attribute: str, codes: np.ndarray, names: list[str], weights: np.ndarray | None = None) -> GroupView:
    """A GroupView whose groups are ordered largest first (ties by name), or in their natural order when every group
    is a numeric range ('<18', '18-25', '75+': ``roles.range_order``); groups with no rows are left out."""
    sizes = weighted_bincount(codes, weights, len(names))
    present = np.flatnonzero(sizes)
    natural = range_order([str(names[k]) for k in present])
    if natural is not None:
        order = present[np.argsort(np.array(natural), kind="stable")]
    else:
        order = present[np.lexsort((np.array(names, dtype=object)[present].astype(str), -sizes[present]))]
    remap = np.full(len(names), -1, dtype=np.int64)
    remap[order] = np.arange(order.size)
    return GroupView(attribute, remap[codes].astype(np.int32), tuple(names[k] for k in order), weights)


def recode_view(view: GroupView, keep: np.ndarray, weights: np.ndarray | None = None) -> GroupView:
    return ordered_view(view.attribute, view.codes[keep], list(view.names), weights)


def drop_small_groups(attributes: dict[str, GroupView], weights: np.ndarray | None):
    """Rows in groups of fewer than ``MIN_GROUP_SIZE`` rows (after validation, so they were counted): the kept-row
    mask (None: all kept), the recoded attributes and weights. Raises when an attribute is left with one group."""
    small = np.zeros(next(iter(attributes.values())).codes.size, dtype=bool)
    for view in attributes.values():
        small |= np.isin(view.codes, np.flatnonzero(view.sizes < MIN_GROUP_SIZE))
    if not small.any():
        return None, attributes, weights
    weights = None if weights is None else weights[~small]
    attributes = {k: recode_view(v, ~small, weights) for k, v in attributes.items()}
    for view in attributes.values():
        if len(view.names) < 2:
            raise DataError(f"Group column '{view.attribute}' has fewer than two groups with at least "
                            f"{MIN_GROUP_SIZE} rows: fairness compares groups, so at least two are needed.")
    return ~small, attributes, weights
