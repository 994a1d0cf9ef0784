"""What the task modules share: the validation steps of a task whose columns are read as numbers or classes
(``validated_rows``, a spec's ``validate`` from its two steps by ``validator``, and ``other_models``: each other
model read or left out with a note), and the small pieces of the reduction SQL, its table and its notes.

Rows with a missing value in a mapped column are dropped and counted; groups are cleaned as for binary data
(``fairviz.data.cleaning``); groups too small to compare are dropped and named; too many groups are refused.
"""
from __future__ import annotations

import hashlib
from typing import Callable

import numpy as np
import pandas as pd

from fairviz.data.cleaning import count_rows, drop_small_groups, factorize_groups, group_attributes, without_na_texts
from fairviz.data.limits import GroupLimits
from fairviz.data.model import ColumnMapping, DataError, Predictions, ScoreColumn, plain_value
from fairviz.data.task_spec import Reduced

# What binning does to resampled numbers (a cell's rows are drawn together)
RESAMPLED = ("bootstrap intervals and permutation p-values resample the table's entries, so their random draws are "
             "not the rows' (they differ as two seeds do).")


def validator(columns: Callable, fields: Callable) -> Callable:
    """A task's ``TaskSpec.validate``: ``validated_rows`` with the task's two steps, ``columns`` and ``fields``."""
    def validate(frame, mapping: ColumnMapping, source: str, file_fingerprint: str, weights, limits,
                 converted: bool = False) -> Predictions:
        return validated_rows(frame, mapping, source, file_fingerprint, weights, limits, columns, fields)
    return validate


def validated_rows(frame: pd.DataFrame, mapping: ColumnMapping, source: str, file_fingerprint: str,
                   weights: np.ndarray | None, limits: GroupLimits, columns: Callable, fields: Callable) -> Predictions:
    """``frame`` under ``mapping`` → ``Predictions``, or a ``DataError`` listing every blocking problem.

    ``columns(frame, mapping, label, problems, notes, w)`` → (mapping, the task's mapped columns as series, by a
    name of its own); ``fields(label, columns, mapping, problems, notes, w)`` → (mapping, the ``Predictions``
    fields), both on the rows kept (no missing value in a mapped column)."""
    problems: list[str] = []
    notes: list[str] = []
    w = None if weights is None else np.asarray(weights, dtype=np.int64)
    total = len(frame) if w is None else int(w.sum())
    label = without_na_texts(frame[mapping.label])
    mapping, mapped = columns(frame, mapping, label, problems, notes, w)
    factorized = {c: factorize_groups(without_na_texts(frame[c])) for c in mapping.groups}
    if problems:
        raise DataError(problems)

    missing = label.isna().to_numpy().copy()
    for values in mapped.values():
        missing |= values.isna().to_numpy()
    for codes, _ in factorized.values():
        missing |= codes < 0
    keep = ~missing
    if count_rows(missing, w):
        notes.append(f"{count_rows(missing, w):,} of {total:,} rows dropped for a missing value in a mapped column.")
    if not keep.any():
        raise DataError("Every row has a missing value in a mapped column: nothing is left to analyse.")
    w = None if w is None else w[keep]
    kept = {name: values[keep] for name, values in mapped.items()}
    mapping, found = fields(label[keep], kept, mapping, problems, notes, w)
    attributes = group_attributes({c: (codes[keep], names) for c, (codes, names) in factorized.items()}, mapping,
                                  problems, notes, w)
    if problems:
        raise DataError(problems)
    small_kept, attributes, w = drop_small_groups(attributes, w)
    kept_frame = frame.loc[keep]
    if small_kept is not None:
        found = {k: _rows(v, small_kept) for k, v in found.items()}
        kept_frame = kept_frame.loc[small_kept]
    too_many = [p for view in attributes.values() if (p := limits.too_many_groups(view.attribute, len(view.names)))]
    if too_many:
        raise DataError(too_many)
    fingerprint = hashlib.blake2b(f"{file_fingerprint}|{mapping.to_dict()}".encode(), digest_size=16).hexdigest()
    return Predictions(attributes=attributes, frame=kept_frame, mapping=mapping, source=source,
                       fingerprint=fingerprint, notes=tuple(notes), weight=w, limits=limits, task=mapping.task,
                       **found)


def other_models(mapping: ColumnMapping, read: Callable, notes: list[str]) -> tuple[tuple[ScoreColumn, ...], dict]:
    """The other models (``mapping.more_scores``) each read by ``read(model, problems)`` → its columns. A model whose
    name or a column of which another model has, or that ``read`` finds a problem in, is left out with a note
    naming why: the first model's audit goes on. Returns (the models kept, title → what ``read`` gave)."""
    first = mapping.models()[0]
    titles, taken = {first.title}, set(first.columns())
    kept, found = [], {}
    for model in mapping.more_scores:
        own: list[str] = []
        if model.title in titles or taken & set(model.columns()):
            own.append("another model has that name or column.")
        else:
            values = read(model, own)
        if own:
            notes.append(f"Model '{model.title}' left out: {own[0]}")
            continue
        kept.append(model)
        found[model.title] = values
        titles.add(model.title)
        taken |= set(model.columns())
    return tuple(kept), found


def _rows(value, keep: np.ndarray):
    if isinstance(value, dict):
        return {k: _rows(v, keep) for k, v in value.items()}
    if isinstance(value, tuple):                  # a model's class outputs: (predicted codes, probabilities)
        return tuple(_rows(v, keep) for v in value)
    return value[keep] if isinstance(value, np.ndarray) else value


def shown(values) -> str:
    """The first five values, as a message names them."""
    # a whole float reads as the integer it is (0.0 → 0): plain_value turns numpy's scalars to Python's first
    return ", ".join(f"{plain_value(plain_value(v))!r}" for v in list(values)[:5]) + (", …" if len(values) > 5 else "")


# ----------------------------------------------------------------------------------------------- the SQL

def suffix(model: int) -> str:
    """The reduction's column suffix of model ``model`` (the first unsuffixed, model i ≥ 1 ``_i``)."""
    return f"_{model}" if model else ""


def finite(x: str) -> str:
    """True for a finite number (NULL, NaN and ±inf fail: x − x is NaN or NULL for them on every engine)."""
    return f"({x} - {x} = 0)"


def binned_table(table: pd.DataFrame, cells: pd.DataFrame, exact: bool, resolution: float, mapping: ColumnMapping,
                 **extra) -> Reduced:
    """A reduction read back: the table, each entry's rows (``cells["n"]``), the cells' width (0 when the query was
    exact or every cell held a single value) and what makes the table's fingerprint differ (the task, the width)."""
    return Reduced(table, cells["n"].to_numpy(dtype=np.int64), 0.0 if exact or not resolution else resolution,
                   f"{mapping.task}|{resolution}", **extra)


def cell_means(cells: pd.DataFrame, raw: str, lo: str, hi: str, total: str,
               n: np.ndarray) -> tuple[np.ndarray, bool]:
    """One column of a binned table: each entry's value (its single value, else the mean of its rows; a row
    validation must see keeps its raw value) and whether every cell held a single value."""
    lo, hi, total = (pd.to_numeric(cells[c], errors="coerce").to_numpy(dtype=float) for c in (lo, hi, total))
    plain = ~np.isnan(lo)
    single = bool(np.all((lo == hi)[plain]))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(lo == hi, lo, total / n)
    return np.where(plain, mean, pd.to_numeric(cells[raw], errors="coerce").to_numpy(dtype=float)), single
