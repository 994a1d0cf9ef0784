"""Regression and multiclass predictions: validation of a frame under a mapping whose ``task`` is not binary.

- Regression: the target (``label``) and each model's prediction (``score``, ``more_scores``) are numbers, any
  scale; y is the target and score the first model's prediction. A target with two values is a binary task and
  is refused as a regression (a conclusion a misread column could reverse is checked, not assumed).
- Multiclass: the label has C ≥ 3 classes, and either one probability column per class (``class_scores``; the
  predicted class is the most probable one, the confidence its probability) or a predicted-class column with an
  optional confidence column (``predicted``, ``score``). y and ``predicted`` are class codes.

Rows with a missing value in a mapped column are dropped and counted; groups are cleaned as for binary data
(``fairviz.data.cleaning``).
"""
from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np
import pandas as pd

from fairviz.data.cleaning import (
    count_rows,
    drop_small_groups,
    factorize_groups,
    group_attributes,
    numeric_values,
    without_na_texts,
)
from fairviz.data.limits import GroupLimits
from fairviz.data.model import ColumnMapping, DataError, Predictions, plain_value
from fairviz.data.roles import class_of_column, quantile_level, range_order

TASKS = ("binary", "regression", "multiclass")
TASK_TITLES = {"binary": "binary classification", "regression": "regression",
               "multiclass": "multiclass classification"}
MAX_CLASSES = 100                 # more label values than this are not classes (a regression target, or ids)
SUM_TOLERANCE = 0.01              # class probabilities of a row may miss 1 by this much (rounding in the file)


def build_task_predictions(frame: pd.DataFrame, mapping: ColumnMapping, source: str, file_fingerprint: str,
                           weights: np.ndarray | None, limits: GroupLimits) -> Predictions:
    """``frame`` under a regression or multiclass ``mapping`` → ``Predictions``, or a ``DataError`` listing every
    blocking problem (``fairviz.data.validation.build_predictions`` calls it for those tasks)."""
    problems: list[str] = []
    notes: list[str] = []
    w = None if weights is None else np.asarray(weights, dtype=np.int64)
    total = len(frame) if w is None else int(w.sum())
    label = without_na_texts(frame[mapping.label])
    if mapping.task == "regression":
        mapping, columns = _regression_columns(frame, mapping, label, problems, notes, w)
    else:
        mapping, columns = _multiclass_columns(frame, mapping, problems, notes, w)
    factorized = {c: factorize_groups(without_na_texts(frame[c])) for c in mapping.groups}
    if problems:
        raise DataError(problems)

    missing = label.isna().to_numpy().copy()
    for values in columns.values():
        missing |= values.isna().to_numpy()
    for codes, _ in factorized.values():
        missing |= codes < 0
    keep = ~missing
    if count_rows(missing, w):
        notes.append(f"{count_rows(missing, w):,} of {total:,} rows dropped for a missing value in a mapped column.")
    if not keep.any():
        raise DataError("Every row has a missing value in a mapped column: nothing is left to analyse.")
    w = None if w is None else w[keep]
    kept = {name: values[keep] for name, values in columns.items()}
    if mapping.task == "regression":
        mapping, fields = _regression_fields(kept, mapping, problems, w)
    else:
        mapping, fields = _multiclass_fields(label[keep], kept, mapping, problems, notes, w)
    attributes = group_attributes({c: (codes[keep], names) for c, (codes, names) in factorized.items()}, mapping,
                                  problems, notes, w)
    if problems:
        raise DataError(problems)
    small_kept, attributes, w = drop_small_groups(attributes, w)
    kept_frame = frame.loc[keep]
    if small_kept is not None:
        fields = {k: _rows(v, small_kept) for k, v in fields.items()}
        kept_frame = kept_frame.loc[small_kept]
    too_many = [p for view in attributes.values() if (p := limits.too_many_groups(view.attribute, len(view.names)))]
    if too_many:
        raise DataError(too_many)
    fingerprint = hashlib.blake2b(f"{file_fingerprint}|{mapping.to_dict()}".encode(), digest_size=16).hexdigest()
    return Predictions(attributes=attributes, frame=kept_frame, mapping=mapping, source=source,
                       fingerprint=fingerprint, notes=tuple(notes), weight=w, limits=limits, task=mapping.task,
                       **fields)


def _rows(value, keep: np.ndarray):
    if isinstance(value, dict):
        return {k: v[keep] for k, v in value.items()}
    return value[keep] if isinstance(value, np.ndarray) else value


# ----------------------------------------------------------------------------------------------- regression

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
    kept = []
    for model in mapping.more_scores:
        own: list[str] = []
        if model.title in columns or model.column in (first.column, *(m.column for m in kept)):
            own.append("another model has that name or column.")
        else:
            values = numeric_values(without_na_texts(frame[model.column]), model.column, own, w, role="prediction",
                                    wanted="predictions must be numbers")
        if own:
            notes.append(f"Model '{model.title}' left out: {own[0]}")
            continue
        columns[model.title] = values
        kept.append(model)
    for column in mapping.quantiles:              # prediction-interval bounds: numbers, their level in the name
        if quantile_level(column) is None:
            problems.append(f"The quantile column '{column}' does not name its level (q0.05, p95, quantile_0.9).")
        columns[f"q:{column}"] = numeric_values(without_na_texts(frame[column]), column, problems, w,
                                                role="quantile", wanted="quantiles must be numbers")
    return replace(mapping, more_scores=tuple(kept)), columns


def _regression_fields(columns: dict[str, pd.Series], mapping: ColumnMapping, problems, w):
    target = columns.pop("__target__").to_numpy(dtype=float)
    bounds = {c: columns.pop(f"q:{c}").to_numpy(dtype=float) for c in mapping.quantiles}
    if np.isinf(target).any():
        problems.append(f"The target column '{mapping.label}' has {count_rows(np.isinf(target), w):,} infinite values.")
    distinct = np.unique(target[np.isfinite(target)])
    if distinct.size == 2:
        problems.append(f"The target column '{mapping.label}' has two values ({_shown(distinct)}): that is a binary "
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


def _shown(values) -> str:
    # a whole float reads as the integer it is (0.0 → 0): plain_value turns numpy's scalars to Python's first
    return ", ".join(f"{plain_value(plain_value(v))!r}" for v in list(values)[:5]) + (", …" if len(values) > 5 else "")


# ----------------------------------------------------------------------------------------------- multiclass

def _multiclass_columns(frame, mapping: ColumnMapping, problems, notes, w):
    """The class probabilities (or the predicted class and its confidence) of a multiclass mapping."""
    if mapping.more_scores:
        notes.append("Several models are compared for binary and regression tasks; for multiclass predictions only "
                     f"the first model is audited ({', '.join(m.title for m in mapping.more_scores)} left out).")
        mapping = replace(mapping, more_scores=())
    columns = {}
    if mapping.class_scores:
        if mapping.classes and len(mapping.classes) != len(mapping.class_scores):
            problems.append(f"{len(mapping.class_scores)} class probability columns but {len(mapping.classes)} "
                            "class names: give one name per column.")
        for column in mapping.class_scores:
            columns[f"p:{column}"] = numeric_values(without_na_texts(frame[column]), column, problems, w,
                                                    role="class probability")
        return mapping, columns
    if not mapping.predicted:
        problems.append("A multiclass audit needs either one probability column per class or a predicted-class "
                        "column; none was chosen.")
        return mapping, columns
    columns["predicted"] = without_na_texts(frame[mapping.predicted])
    if mapping.score:
        columns["confidence"] = numeric_values(without_na_texts(frame[mapping.score]), mapping.score, problems, w,
                                               role="confidence", wanted="a confidence must be a number in [0, 1]")
    return mapping, columns


def _class_key(value) -> str:
    return str(plain_value(value)).strip().lower()


def _multiclass_fields(label: pd.Series, columns: dict[str, pd.Series], mapping: ColumnMapping, problems, notes, w):
    label_values = list(dict.fromkeys(str(plain_value(v)).strip() for v in label.unique()))
    if mapping.class_scores:
        classes = tuple(str(c) for c in mapping.classes) if mapping.classes else \
            tuple(class_of_column(c) for c in mapping.class_scores)
    else:
        predicted_values = [str(plain_value(v)).strip() for v in columns["predicted"].unique()]
        classes = tuple(_natural_order(list(dict.fromkeys(label_values + predicted_values))))
    if len(classes) > MAX_CLASSES:
        problems.append(f"The label column '{mapping.label}' and the predictions name {len(classes):,} classes; a "
                        f"multiclass audit takes at most {MAX_CLASSES} (a numeric target is a regression).")
        return mapping, {}
    index = {_class_key(c): k for k, c in enumerate(classes)}
    y = _class_codes(label, index)
    unknown = sorted({str(v) for v in label[y < 0].unique()}) if (y < 0).any() else []
    if unknown:
        problems.append(f"The label column '{mapping.label}' has values with no class probability column: "
                        f"{_shown(unknown)} (classes: {_shown(classes)}).")
    present = np.unique(y[y >= 0])
    if len(classes) < 3:
        problems.append(f"The label column '{mapping.label}' has {len(classes)} classes ({_shown(classes)}): that is "
                        "a binary task; choose the task 'binary'.")
    if problems:
        return mapping, {}
    absent = [classes[k] for k in range(len(classes)) if k not in set(present.tolist())]
    if absent:
        notes.append(f"No row has the label {_shown(absent)}: the recall of "
                     f"{'that class' if len(absent) == 1 else 'those classes'} is undefined.")
    if mapping.class_scores:
        probabilities = np.column_stack([columns[f"p:{c}"].to_numpy(dtype=float) for c in mapping.class_scores])
        _check_probabilities(probabilities, mapping, problems, notes, w)
        if problems:
            return mapping, {}
        if mapping.normalise:
            probabilities = normalised(probabilities, mapping, problems, notes, w)
            if problems:
                return mapping, {}
        predicted = np.argmax(probabilities, axis=1).astype(np.int32)
        score = probabilities[np.arange(predicted.size), predicted]
        return replace(mapping, classes=classes), {"y": y, "score": score, "predicted": predicted,
                                                   "class_scores": probabilities, "classes": classes}
    predicted = _class_codes(columns["predicted"], index)
    score = columns["confidence"].to_numpy(dtype=float) if "confidence" in columns else np.full(y.size, np.nan)
    if "confidence" in columns and ((score < 0) | (score > 1)).any():
        problems.append(f"The confidence column '{mapping.score}' has values outside [0, 1] "
                        f"(range {np.nanmin(score):.3g} to {np.nanmax(score):.3g}).")
    return replace(mapping, classes=classes), {"y": y, "score": score, "predicted": predicted,
                                               "class_scores": None, "classes": classes}


def _class_codes(values: pd.Series, index: dict[str, int]) -> np.ndarray:
    keys = values.map(_class_key)
    return keys.map(index).fillna(-1).to_numpy(dtype=np.int32)


def _check_probabilities(probabilities: np.ndarray, mapping: ColumnMapping, problems, notes, w) -> None:
    outside = ~np.isfinite(probabilities) | (probabilities < 0) | (probabilities > 1)
    if outside.any():
        bad = [c for c, hit in zip(mapping.class_scores, outside.any(axis=0)) if hit]
        problems.append(f"Class probability column{'s' if len(bad) > 1 else ''} {_shown(bad)} "
                        f"{'have' if len(bad) > 1 else 'has'} values outside [0, 1]: each must be the probability "
                        "of its class.")
        return
    sums = probabilities.sum(axis=1)
    off = np.abs(sums - 1) > SUM_TOLERANCE
    if off.any() and not mapping.normalise:        # normalised: ``normalised`` says what it changed
        notes.append(f"The class probabilities of {count_rows(off, w):,} rows do not sum to 1 within "
                     f"{SUM_TOLERANCE} (sums from {sums.min():.3g} to {sums.max():.3g}); they are read as given, and "
                     "the predicted class is the most probable one. Normalising divides each row's by their sum "
                     "(the form's 'Normalise' choice, --normalise).")


def normalised(probabilities: np.ndarray, mapping: ColumnMapping, problems, notes, w) -> np.ndarray:
    """Each row's class probabilities divided by their sum (asked for: ``ColumnMapping.normalise``); a row whose
    probabilities are all 0 cannot be, and is a problem."""
    sums = probabilities.sum(axis=1)
    if (sums <= 0).any():
        problems.append(f"{count_rows(sums <= 0, w):,} rows have every class probability 0: they cannot be "
                        "normalised.")
        return probabilities
    off = np.abs(sums - 1) > SUM_TOLERANCE
    if off.any():
        notes.append(f"The class probabilities were normalised: each row's divided by their sum ({count_rows(off, w):,} "
                     f"rows summed to between {sums[off].min():.3g} and {sums[off].max():.3g}).")
    return probabilities / sums[:, None]


def _natural_order(names: list[str]) -> list[str]:
    """Class names in their natural order: numbers by value, ranges by their bounds, else alphabetically."""
    try:
        return sorted(names, key=float)
    except ValueError:
        order = range_order(names)
        return [n for _, n in sorted(zip(order, names))] if order is not None else sorted(names)
