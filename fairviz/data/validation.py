"""Validation: a frame under a column mapping → ``Predictions``, or a ``DataError`` with one sentence per problem.

Rows with a missing label, score or group value are dropped and counted, never lost silently; groups too small to
compare are dropped and named. Missing is the same on every path (``fairviz.data.reading.NA_VALUES``): an empty
value, NA, N/A, NaN, null, None or #N/A (any case) — read from a file or already in a frame; any other text in the
score column is refused, naming the column and examples.
"""
from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairviz.data.limits import DEFAULT_LIMITS, GroupLimits
from fairviz.data.cleaning import (
    MIN_GROUP_SIZE,
    count_rows,
    drop_small_groups,
    factorize_groups,
    group_attributes,
    numeric_values,
    without_na_texts,
)
from fairviz.data.model import ColumnMapping, DataError, Predictions, plain_value
from fairviz.data.checks import confirm_direction
from fairviz.data.reading import read_table
from fairviz.data.task_validation import TASKS, build_task_predictions
from fairviz.data.scales import SCALE_TITLES, guess_scale, oriented, to_probability
from fairviz.data.roles import TRUE_WORDS, guess_mapping, guess_positive_label, label_values

__all__ = ["MIN_GROUP_SIZE", "build_predictions", "check_columns", "load_predictions"]


def build_predictions(frame: pd.DataFrame, mapping: ColumnMapping, source: str = "upload",
                      file_fingerprint: str = "", weights: np.ndarray | None = None,
                      limits: GroupLimits | None = None, converted: bool = False) -> Predictions:
    """Validate ``frame`` under ``mapping``. Raises ``DataError`` listing every blocking problem.

    With ``weights`` (rows per entry: the counts of fairviz.data.engine's table) every message counts rows, and the
    result is weighted data (``Predictions.weight``). ``limits`` caps the groups per attribute
    (``fairviz.data.limits``; the defaults unless given). The score is converted to the probability of the positive
    label (the mapping's scale and direction, ``fairviz.data.scales``) unless ``converted`` (the engine's SQL did it),
    and its direction is checked (``fairviz.data.checks``)."""
    limits = limits or DEFAULT_LIMITS
    check_columns(frame, mapping)
    if mapping.task != "binary":
        return build_task_predictions(frame, mapping, source, file_fingerprint, weights, limits)
    problems: list[str] = []
    notes: list[str] = []
    w = None if weights is None else np.asarray(weights, dtype=np.int64)
    total = len(frame) if w is None else int(w.sum())

    score = numeric_values(without_na_texts(frame[mapping.score]), mapping.score, problems, w)
    mapping, others = _other_models(frame, mapping, notes, w)
    y_raw = without_na_texts(frame[mapping.label])
    factorized = {c: factorize_groups(without_na_texts(frame[c])) for c in mapping.groups}   # one hash pass a column

    missing = score.isna() | y_raw.isna()
    for values in others.values():              # every model is audited on the same rows
        missing |= values.isna()
    for codes, _ in factorized.values():
        missing |= codes < 0
    keep = ~missing.to_numpy()
    n_missing = count_rows(~keep, w)
    if n_missing:
        notes.append(f"{n_missing:,} of {total:,} rows dropped for a missing label, score or group value"
                     f"{' (of any model: every model is audited on the same rows)' if others else ''}.")
    if not keep.any():
        problems.append("Every row has a missing label, score or group value: nothing is left to analyse.")
        raise DataError(problems)

    score_values = score.to_numpy(dtype=float)[keep]
    w = None if w is None else w[keep]
    mapping = replace(mapping, score_scale=mapping.score_scale or "probability")   # callers guess (scales.py)
    if not converted:                            # the engine's reduction converts in its SQL
        score_values = oriented(to_probability(score_values, mapping.score_scale), mapping.score_direction)
    _check_score_range(score_values, mapping.score, problems, w, mapping.score_scale)
    other_values = {m: values.to_numpy(dtype=float)[keep] for m, values in others.items()}
    y = _binary_labels(y_raw[keep], mapping, problems)
    positive, other = _label_value(y_raw[keep], y, 1), _label_value(y_raw[keep], y, 0)   # named in messages
    if mapping.positive_label is None and positive is not None:
        mapping = replace(mapping, positive_label=positive)       # the guess, stated wherever the label is named
    if problems:                       # group checks on rows that are about to change would only add noise
        raise DataError(problems)
    attributes = group_attributes({c: (codes[keep], names) for c, (codes, names) in factorized.items()}, mapping,
                             problems, notes, w)
    if problems:
        raise DataError(problems)

    small_kept, attributes, w = drop_small_groups(attributes, w)     # groups too small to compare: named, dropped
    kept_frame = frame.loc[keep]
    if small_kept is not None:
        y, score_values = y[small_kept], score_values[small_kept]
        other_values = {m: values[small_kept] for m, values in other_values.items()}
        kept_frame = kept_frame.loc[small_kept]
    too_many = [p for view in attributes.values() if (p := limits.too_many_groups(view.attribute, len(view.names)))]
    if too_many:
        raise DataError(too_many)

    note = confirm_direction(y, score_values, w, score_name=mapping.score, label=mapping.label, positive=positive,
                             other=other, direction=mapping.score_direction)
    notes += [note] if note else []
    mapping, scores = _checked_models(mapping, score_values, other_values, y, w, positive, other, notes, converted)
    fingerprint = hashlib.blake2b(f"{file_fingerprint}|{mapping.to_dict()}".encode(), digest_size=16).hexdigest()
    return Predictions(y=y, score=score_values, attributes=attributes, frame=kept_frame, mapping=mapping,
                       source=source, fingerprint=fingerprint, notes=tuple(notes), weight=w, limits=limits,
                       scores=scores)


def _other_models(frame: pd.DataFrame, mapping: ColumnMapping, notes: list[str], weights=None):
    """The other models' score columns as numbers. A model that cannot be read (a column mapped twice, a name
    taken, text in it) is left out with a note naming why: the first model's audit goes on."""
    kept, others, seen = [], {}, {mapping.score: mapping.models()[0].title}
    titles = {mapping.models()[0].title}
    for model in mapping.more_scores:
        if model.column in seen:
            notes.append(f"Model '{model.title}' left out: its column '{model.column}' is already the model "
                         f"'{seen[model.column]}' (one column, two names).")
            continue
        if model.title in titles:
            notes.append(f"Model '{model.title}' left out: another model has that name.")
            continue
        problems: list[str] = []
        values = numeric_values(without_na_texts(frame[model.column]), model.column, problems, weights)
        if problems:
            notes.append(f"Model '{model.title}' left out: {problems[0]}")
            continue
        seen[model.column], others[model.title] = model.title, values
        titles.add(model.title)
        kept.append(model)
    return replace(mapping, more_scores=tuple(kept)), others


def _checked_models(mapping: ColumnMapping, first: np.ndarray, others: dict[str, np.ndarray], y, w, positive,
                    other, notes: list[str], converted: bool) -> tuple[ColumnMapping, dict[str, np.ndarray]]:
    """Each other model converted to probabilities (its own scale and direction) and checked as the first is: a
    model whose scores leave [0, 1], are all one value or run the other way is left out with a note."""
    kept, scores = [], {mapping.models()[0].title: first}
    for model in mapping.more_scores:
        model = replace(model, scale=model.scale or "probability")
        values = others[model.title]
        if not converted:
            values = oriented(to_probability(values, model.scale), model.direction)
        problems: list[str] = []
        _check_score_range(values, model.column, problems, w, model.scale)
        if not problems and np.ptp(values) == 0:
            problems.append(f"The score column '{model.column}' is constant (every row {values[0]:.4g}): a model "
                            "that gives everyone the same score cannot be compared.")
        if not problems:
            try:
                note = confirm_direction(y, values, w, score_name=model.column, label=mapping.label,
                                         positive=positive, other=other, direction=model.direction)
                notes += [note] if note else []
            except DataError as err:
                problems += err.problems
        if problems:
            notes.append(f"Model '{model.title}' left out: {' '.join(problems)}")
            continue
        kept.append(model)
        scores[model.title] = values
    return replace(mapping, more_scores=tuple(kept)), (scores if kept else {})


def load_predictions(path: str | Path, mapping: ColumnMapping | None = None, **mapping_kwargs) -> Predictions:
    """Read and validate a file in one call (the CLI's and the tests' entry point)."""
    frame, digest = read_table(path)
    if mapping is None:
        mapping = guess_mapping(frame)
        if mapping_kwargs:
            mapping = ColumnMapping(**{**mapping.__dict__, **mapping_kwargs})
    return build_predictions(frame, mapping, source=Path(path).name, file_fingerprint=digest)


def check_columns(frame: pd.DataFrame, mapping: ColumnMapping) -> None:
    """Every mapped column is in ``frame`` and the roles do not overlap (the engine checks a schema with it too)."""
    if mapping.task not in TASKS:
        raise DataError(f"The task '{mapping.task}' is not one of {', '.join(TASKS)}.")
    regression = mapping.task == "regression"
    needed = {"target" if regression else "label": [mapping.label],
              "prediction" if regression else "score": [c for c in (mapping.score, *(m.column for m in
                                                                                      mapping.more_scores)) if c],
              "class probability": list(mapping.class_scores), "quantile": list(mapping.quantiles),
              "predicted class": [mapping.predicted] if mapping.predicted else [],
              "group": list(mapping.groups)}
    if mapping.text:
        needed["text"] = [mapping.text]
    needed["feature"] = list(mapping.features)
    if mapping.row_id:
        needed["id"] = [mapping.row_id]
    problems = [f"The {role} column '{col}' is not in the file (columns: {_column_list(frame)})."
                for role, cols in needed.items() for col in cols if col not in frame.columns]
    if not mapping.groups:
        problems.append("No group column was chosen: pick at least one column that says which group a row is in.")
    if mapping.label == mapping.score:
        problems.append(f"The label and the score are the same column ('{mapping.label}'); choose two columns.")
    if mapping.label in (m.column for m in mapping.more_scores):
        problems.append(f"The label column '{mapping.label}' is also mapped as a model's score; choose two columns.")
    if mapping.label in (*mapping.class_scores, mapping.predicted):
        problems.append(f"The label column '{mapping.label}' is also mapped as a class's probability or the predicted "
                        "class; choose different columns.")
    if mapping.label in mapping.groups or (mapping.score and mapping.score in mapping.groups):
        problems.append("A group column is also the label or the score column; choose different columns.")
    if problems:
        raise DataError(problems)


def _column_list(frame: pd.DataFrame, limit: int = 12) -> str:
    cols = [str(c) for c in frame.columns]
    return ", ".join(cols[:limit]) + (f", … ({len(cols)} in all)" if len(cols) > limit else "")


def _label_value(raw: pd.Series, y: np.ndarray, value: int):
    """The label column's own value behind y = ``value`` (None when no kept row has it)."""
    if raw.size != y.size:
        return None
    hits = np.flatnonzero(y == value)
    return plain_value(raw.iloc[hits[0]]) if hits.size else None


def _check_score_range(score: np.ndarray, name: str, problems: list[str], weights=None,
                       scale: str | None = "probability") -> None:
    infinite = np.isinf(score)
    if infinite.any():
        problems.append(f"The score column '{name}' has {count_rows(infinite, weights):,} infinite values; "
                        "scores must be in [0, 1].")
    finite = score[~infinite]
    outside = (finite < 0) | (finite > 1)
    if outside.any():
        outside_rows = count_rows(outside, None if weights is None else weights[~infinite])
        converted = "" if scale in (None, "probability") else f" after reading it as {SCALE_TITLES[scale]}"
        hint = _range_hint(finite) if not converted else ""
        problems.append(f"The score column '{name}' has {outside_rows:,} values outside [0, 1]{converted} "
                        f"(range {finite.min():.3g} to {finite.max():.3g}).{hint}")


def _range_hint(finite: np.ndarray) -> str:
    """What the out-of-range values look like, from their range (the guess the user can confirm)."""
    guess = guess_scale(finite)
    if guess.scale == "percent":
        return " They look like percentages (0–100): give the score scale 'percent' (÷ 100)."
    if guess.scale == "logit":
        return " They look like logits (log-odds): give the score scale 'logit' (the logistic function)."
    return " They are not probabilities, percentages or logits: convert them to probabilities first."


def _binary_labels(series: pd.Series, mapping: ColumnMapping, problems: list[str]) -> np.ndarray:
    values = label_values(series)
    if len(values) > 2:
        shown = ", ".join(repr(plain_value(v)) for v in values[:5])
        problems.append(f"The label column '{mapping.label}' has {len(values)} distinct values ({shown}"
                        f"{', …' if len(values) > 5 else ''}); it must be binary (two values, e.g. 0/1).")
        return np.zeros(len(series), dtype=np.int8)
    positive = mapping.positive_label
    plain = {plain_value(v) for v in values}
    if positive is None:
        if plain <= {0, 1} or plain <= {True, False}:
            positive = 1
        elif all(isinstance(v, str) for v in values) and any(str(v).strip().lower() in TRUE_WORDS for v in values):
            positive = guess_positive_label(values)
        else:
            shown = ", ".join(repr(v) for v in sorted(plain, key=str))
            problems.append(f"The label column '{mapping.label}' has values {shown}, not 0/1: say which value is "
                            "the positive class (the positive-label choice, or --positive-label).")
            return np.zeros(len(series), dtype=np.int8)
    elif not any(_same(positive, v) for v in values):
        problems.append(f"The positive label {positive!r} does not occur in '{mapping.label}' "
                        f"(values: {', '.join(repr(plain_value(v)) for v in values)}).")
        return np.zeros(len(series), dtype=np.int8)
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
        return (series.to_numpy() == _coerce_like(positive, series)).astype(np.int8)
    text = series.astype(str).str.strip().str.lower().to_numpy()
    return (text == str(plain_value(positive)).strip().lower()).astype(np.int8)


def _same(a: Any, b: Any) -> bool:
    return plain_value(a) == plain_value(b) or str(plain_value(a)).strip().lower() == str(plain_value(b)).strip().lower()


def _coerce_like(value: Any, series: pd.Series) -> Any:
    """A positive label typed in a text box ('1') compared with a numeric or boolean column."""
    if pd.api.types.is_bool_dtype(series):
        return str(value).strip().lower() in TRUE_WORDS if isinstance(value, str) else bool(value)
    if pd.api.types.is_numeric_dtype(series) and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value
