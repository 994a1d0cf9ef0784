"""Multiclass classification: a label of C ≥ 3 classes and either one probability column per class or a predicted
class (with an optional confidence).

Validation: the label has C ≥ 3 classes, and either one probability column per class (``class_scores``; the
predicted class is the most probable one, the confidence its probability) or a predicted-class column with an
optional confidence column (``predicted``, ``score``). y and ``predicted`` are class codes.

Reduction (``fairviz.data.engine``) with class probabilities: one entry per (groups, label, predicted class, cell of
every class's probability); the cells are ``CLASS_CELLS`` equal cells of [0, 1] whose edges hold every ECE and
reliability bin edge (1/10, 1/15, 1/30 …), cut as ``fairviz.core.ece.ece_bin_index`` cuts them, so confusion counts,
top-label and class-wise ECE bins and χ² bins are exact; the entry's probabilities are the means of its rows' (sums
carried, so each class's mean probability per group is exact too). With a predicted class and a confidence: one
entry per (groups, label, predicted class, confidence cell). Rows that validation must name as they are (a missing,
NaN or infinite value; a probability outside [0, 1]; a row whose probabilities miss 1 by more than
``SUM_TOLERANCE``) keep their own values, one entry per distinct row. Inputs of at most ``EXACT_ROWS`` rows, and
tables whose every cell holds one distinct value, are exact.
"""
from __future__ import annotations

import os
from dataclasses import replace

import numpy as np
import pandas as pd

from fairviz.data.cleaning import count_rows, numeric_values, without_na_texts
from fairviz.data.dialects import DUCKDB, Dialect
from fairviz.data.model import ColumnMapping, DataError, ScoreColumn, plain_value
from fairviz.data.roles import (MAX_GUESSED_CLASSES, class_columns, class_of_column, distinct_count, named,
                                numeric_columns, predicted_column, range_order)
from fairviz.data.tasks.common import (RESAMPLED, binned_table, cell_means, finite, other_models, shown, suffix,
                                       validator)
from fairviz.data.tasks.registry import register
from fairviz.data.task_spec import LIKELY, NO, MetricSpec, Reduced, Reduction, TaskSpec

MAX_CLASSES = 100                 # more label values than this are not classes (a regression target, or ids)
SUM_TOLERANCE = 0.01              # class probabilities of a row may miss 1 by this much (rounding in the file)
CLASS_CELLS = 300                 # cells of [0, 1] per class probability: width 1/300, ECE edges kept


# ----------------------------------------------------------------------------------------------- recognition

def recognise(frame: pd.DataFrame, label) -> float:
    """Three or more classes, each with a probability column named after it, or a predicted-class column."""
    series = frame[label]
    n = distinct_count(series)
    if not 3 <= n <= MAX_GUESSED_CLASSES:
        return NO
    classes = {str(plain_value(v)) for v in series.dropna().unique()}
    return LIKELY if class_columns(frame, classes) or predicted_column(frame, label, classes) else NO


def guess_roles(frame: pd.DataFrame, guess) -> ColumnMapping:
    """The binary guess turned into a multiclass one: a probability column per class, else the predicted class and
    its confidence."""
    first = guess.mapping
    label = first.label
    classes = [str(plain_value(v)) for v in frame[label].dropna().unique()]
    columns = class_columns(frame, classes)
    if columns:
        features = tuple(c for c in first.features if c not in columns)
        return replace(first, task=MULTICLASS.name, score="", class_scores=tuple(columns),
                       classes=tuple(class_of_column(c) for c in columns), features=features, candidate_scores=())
    predicted = predicted_column(frame, label, classes)
    confidence = next((c for c in named(numeric_columns(frame), ("confidence", "conf", "prob", "probability",
                                                                 "score", "proba")) if c != predicted), None)
    features = tuple(c for c in first.features if c != confidence)
    return replace(first, task=MULTICLASS.name, score=confidence or "", predicted=predicted, features=features,
                   candidate_scores=())


# ----------------------------------------------------------------------------------------------- validation

def _multiclass_columns(frame, mapping: ColumnMapping, label, problems, notes, w):
    """Every model's class probabilities (or predicted class and its confidence), keyed (model title, role …);
    another model that cannot be read is left out with a note (``other_models``)."""
    first = mapping.models()[0]
    if mapping.class_scores and mapping.classes and len(mapping.classes) != len(mapping.class_scores):
        problems.append(f"{len(mapping.class_scores)} class probability columns but {len(mapping.classes)} "
                        "class names: give one name per column.")
    if not mapping.class_scores and not mapping.predicted:
        problems.append("A multiclass audit needs either one probability column per class or a predicted-class "
                        "column; none was chosen.")
        return mapping, {}
    columns = _model_columns(frame, first, problems, w)
    kept, more = other_models(mapping, lambda model, own: _model_columns(frame, model, own, w), notes)
    for values in more.values():
        columns.update(values)
    return replace(mapping, more_scores=kept), columns


def _model_columns(frame, model: ScoreColumn, problems, w) -> dict[tuple, pd.Series]:
    """One model's columns, keyed (title, "p", column) (class probabilities), (title, "predicted") and (title,
    "confidence")."""
    if model.class_scores:
        return {(model.title, "p", c): numeric_values(without_na_texts(frame[c]), c, problems, w, role="class probability")
                for c in model.class_scores}
    if not model.predicted:
        problems.append("it names neither class probability columns nor a predicted-class column.")
        return {}
    columns = {(model.title, "predicted"): without_na_texts(frame[model.predicted])}
    if model.column:
        columns[(model.title, "confidence")] = numeric_values(without_na_texts(frame[model.column]), model.column, problems,
                                                        w, role="confidence",
                                                        wanted="a confidence must be a number in [0, 1]")
    return columns


def _class_key(value) -> str:
    return str(plain_value(value)).strip().lower()


def _multiclass_fields(label: pd.Series, columns: dict[str, pd.Series], mapping: ColumnMapping, problems, notes, w):
    label_values = list(dict.fromkeys(str(plain_value(v)).strip() for v in label.unique()))
    if mapping.class_scores:
        classes = tuple(str(c) for c in mapping.classes) if mapping.classes else \
            _classes_named(mapping.class_scores, label_values)
    else:
        predicted_values = [str(plain_value(v)).strip() for name, values in columns.items()
                            if name[1:] == ("predicted",) for v in values.unique()]
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
                        f"{shown(unknown)} (classes: {shown(classes)}).")
    present = np.unique(y[y >= 0])
    if len(classes) < 3:
        problems.append(f"The label column '{mapping.label}' has {len(classes)} classes ({shown(classes)}): that is "
                        "a binary task; choose the task 'binary'.")
    if problems:
        return mapping, {}
    absent = [classes[k] for k in range(len(classes)) if k not in set(present.tolist())]
    if absent:
        notes.append(f"No row has the label {shown(absent)}: the recall of "
                     f"{'that class' if len(absent) == 1 else 'those classes'} is undefined.")
    first = mapping.models()[0]
    outputs = {first.title: _model_outputs(first, True, columns, classes, index, mapping, problems, notes, w)}
    if problems:
        return mapping, {}
    kept = []
    for model in mapping.more_scores:
        own: list[str] = []
        found = _model_outputs(model, False, columns, classes, index, mapping, own, notes, w)
        if own:
            notes.append(f"Model '{model.title}' left out: {own[0]}")
            continue
        outputs[model.title] = found
        kept.append(model)
    predicted, probabilities, score = outputs[first.title]
    fields = {"y": y, "score": score, "predicted": predicted, "class_scores": probabilities, "classes": classes}
    if kept:
        fields["scores"] = {title: confidence for title, (_, _, confidence) in outputs.items()}
        fields["class_outputs"] = {title: (codes, p) for title, (codes, p, _) in outputs.items()}
    return replace(mapping, classes=classes, more_scores=tuple(kept)), fields


def _model_outputs(model: ScoreColumn, first: bool, columns, classes, index, mapping: ColumnMapping, problems, notes, w):
    """One model's (predicted class codes, class probabilities or None, confidence): the most probable class and its
    probability, or the predicted-class column's codes and the confidence column (NaN without one)."""
    if model.class_scores:
        order = _class_order(model, first, classes, index, problems)
        if problems:
            return None
        ordered = tuple(model.class_scores[k] for k in order)
        probabilities = np.column_stack([columns[(model.title, "p", c)].to_numpy(dtype=float) for c in ordered])
        _check_probabilities(probabilities, replace(mapping, class_scores=ordered), problems, notes, w)
        if not problems and mapping.normalise:
            probabilities = normalised(probabilities, mapping, problems, notes, w)
        if problems:
            return None
        predicted = np.argmax(probabilities, axis=1).astype(np.int32)
        return predicted, probabilities, probabilities[np.arange(predicted.size), predicted]
    values = columns[(model.title, "predicted")]
    predicted = _class_codes(values, index)
    if (predicted < 0).any():
        problems.append(f"its predicted-class column '{model.predicted}' names classes the first model does not "
                        f"have: {shown(sorted({str(v) for v in values[predicted < 0].unique()}))}.")
    confidence = (model.title, "confidence")
    score = columns[confidence].to_numpy(dtype=float) if confidence in columns else np.full(predicted.size, np.nan)
    if confidence in columns and ((score < 0) | (score > 1)).any():
        problems.append(f"The confidence column '{model.column}' has values outside [0, 1] "
                        f"(range {np.nanmin(score):.3g} to {np.nanmax(score):.3g}).")
    return predicted, None, score


def _class_order(model: ScoreColumn, first: bool, classes, index, problems) -> list[int]:
    """For each class, the position of the model's probability column of it: the first model's columns are the
    classes in order; another model's are matched to them by the class each column names (p_cat → cat, or, for
    names like b_cat, b_dog …, what is left of each without the prefix and suffix they share)."""
    if first:
        return list(range(len(model.class_scores)))
    for names in ([class_of_column(c) for c in model.class_scores], _without_shared_affixes(model.class_scores)):
        codes = [index.get(_class_key(name), -1) for name in names]
        if sorted(codes) == list(range(len(classes))):
            return [codes.index(k) for k in range(len(classes))]
    problems.append(f"its class probability columns ({shown(model.class_scores)}) do not name the classes "
                    f"{shown(classes)} one each.")
    return []


def _classes_named(columns, label_values) -> tuple[str, ...]:
    """The classes a model's probability columns stand for: each column's (p_cat → cat), or, when those miss a label
    value that the columns' names without their shared prefix and suffix hold (a_cat, a_dog … → cat, dog …), those."""
    named_classes = tuple(class_of_column(c) for c in columns)
    stripped = tuple(_without_shared_affixes(columns))
    keys = lambda names: {_class_key(n) for n in names}          # noqa: E731
    wanted = keys(label_values)
    return stripped if not wanted <= keys(named_classes) and wanted <= keys(stripped) else named_classes


def _without_shared_affixes(columns) -> list[str]:
    """Each name without the prefix and the suffix every name shares (b_cat, b_dog, b_bird → cat, dog, bird)."""
    names = [str(c) for c in columns]
    prefix = len(os.path.commonprefix(names))
    suffix = len(os.path.commonprefix([n[prefix:][::-1] for n in names]))
    return [n[prefix:len(n) - suffix] for n in names]


def _class_codes(values: pd.Series, index: dict[str, int]) -> np.ndarray:
    keys = values.map(_class_key)
    return keys.map(index).fillna(-1).to_numpy(dtype=np.int32)


def _check_probabilities(probabilities: np.ndarray, mapping: ColumnMapping, problems, notes, w) -> None:
    outside = ~np.isfinite(probabilities) | (probabilities < 0) | (probabilities > 1)
    if outside.any():
        bad = [c for c, hit in zip(mapping.class_scores, outside.any(axis=0)) if hit]
        problems.append(f"Class probability column{'s' if len(bad) > 1 else ''} {shown(bad)} "
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


# ----------------------------------------------------------------------------------------------- reduction

def corrected_cell(p: str, cells: int) -> str:
    """The cell of ``p`` in ``cells`` equal cells of [0, 1] exactly as ``ece_bin_index`` cuts them (the floor
    corrected at an edge that rounding moved; a probability of 1 in the last cell)."""
    f = f"FLOOR({p} * {cells})"
    fixed = f"({f} + CASE WHEN {p} >= ({f} + 1) / {cells} THEN 1 ELSE 0 END - CASE WHEN {p} < {f} / {cells} " \
            f"THEN 1 ELSE 0 END)"
    return f"LEAST(GREATEST({fixed}, 0), {cells - 1})"


def _value_columns(model: ScoreColumn) -> tuple[str, ...]:
    """The numbers a model's entries carry: its class probabilities, else its confidence (none without one)."""
    return model.class_scores or ((model.column,) if model.column else ())


def multiclass_sql(source: str, mapping: ColumnMapping, numeric, cells: int = CLASS_CELLS,
                   dialect: Dialect = DUCKDB) -> str:
    """One row per (groups, label, every model's predicted class, cell of each of its class probabilities) — or, for
    a model with a predicted-class column, its predicted class and confidence cell. ``numeric``: per probability
    (or confidence) column of every model in turn, whether the engine reads it as numbers; ``cells`` = 0: one entry
    per distinct row.

    Output: g0…, y, n, per model i pred (suffix _i for i ≥ 1: the argmax class code, or the predicted column's
    value), and per probability (or confidence) column k of every model in turn: p{k} (the raw value of a row
    validation must see, else NULL), lo{k}, hi{k}, sum{k}."""
    q, d = dialect.quote, dialect
    models = mapping.models()
    names = [c for m in models for c in _value_columns(m)]
    cols = [d.as_double(q(c)) if numeric[k] else q(c) for k, c in enumerate(names)]
    inner = [f"{q(g)} AS g{k}" for k, g in enumerate(mapping.groups)] + [f"{q(mapping.label)} AS y"]
    inner += [f"{c} AS v{k}" for k, c in enumerate(cols)]
    inner += [f"{q(m.predicted)} AS pr{suffix(i)}" for i, m in enumerate(models) if not m.class_scores]
    groups = [f"g{k}" for k in range(len(mapping.groups))] + ["y"]
    exact = not cells or not all(numeric)
    own, start = [], 0                        # each model's v-columns
    for m in models:
        own.append([f"v{k}" for k in range(start, start + len(_value_columns(m)))])
        start += len(_value_columns(m))
    checks = [f"{finite(f'v{k}')} AND v{k} >= 0 AND v{k} <= 1" for k in range(len(cols))] if all(numeric) else []
    if all(numeric):
        checks += [f"ABS({' + '.join(v)} - 1) <= {SUM_TOLERANCE!r}" for m, v in zip(models, own) if m.class_scores]
    plain = " AND ".join(checks) if checks and not exact else "FALSE"
    preds = [_predicted_sql(m, v, all(numeric), suffix(i)) for i, (m, v) in enumerate(zip(models, own))]
    by = list(groups) + preds
    selects = [*groups, "COUNT(*) AS n", *(f"{pred} AS pred{suffix(i)}" for i, pred in enumerate(preds))]
    for k in range(len(cols)):
        odd = f"CASE WHEN {plain} THEN NULL ELSE v{k} END"
        by.append(odd)
        selects.append(f"{odd} AS p{k}")
        if all(numeric):
            v = f"CASE WHEN {plain} THEN v{k} END"
            by.append(f"CASE WHEN {plain} THEN {corrected_cell(f'v{k}', cells)} END" if not exact else v)
            selects += [f"MIN({v}) AS lo{k}", f"MAX({v}) AS hi{k}", f"SUM({v}) AS sum{k}"]
    inner_sql = f"SELECT {', '.join(inner)} FROM {source}"
    return f"SELECT {', '.join(selects)} FROM ({inner_sql}) t GROUP BY {', '.join(by)}"


def _predicted_sql(model: ScoreColumn, values: list[str], numeric: bool, own: str) -> str:
    """A model's predicted class: the code of its most probable class (the first on a tie, as ``np.argmax``), or
    its predicted-class column."""
    if not model.class_scores:
        return f"pr{own}"
    if not numeric:
        return "NULL"
    top = f"GREATEST({', '.join(values)})"
    return "CASE " + " ".join(f"WHEN {v} = {top} THEN {k}" for k, v in enumerate(values)) + " END"


def multiclass_table(cells: pd.DataFrame, mapping: ColumnMapping) -> tuple[pd.DataFrame, bool]:
    """The engine's rows → (table of groups, label, every model's predicted/probability columns and n; whether
    exact)."""
    n = cells["n"].to_numpy(dtype=np.int64)
    table = pd.DataFrame({g: cells[f"g{k}"] for k, g in enumerate(mapping.groups)})
    table[mapping.label] = cells["y"]
    names = [c for m in mapping.models() for c in _value_columns(m)]
    exact = True
    for k, name in enumerate(names):
        if f"lo{k}" not in cells.columns:
            table[name] = cells[f"p{k}"]
            continue
        table[name], single = cell_means(cells, f"p{k}", f"lo{k}", f"hi{k}", f"sum{k}", n)
        exact &= single
    for i, model in enumerate(mapping.models()):
        if not model.class_scores:
            table[model.predicted] = cells[f"pred{suffix(i)}"]
    return table, exact


def reduce(runner, at: ColumnMapping, mapping: ColumnMapping) -> Reduced:
    """Binned at ``CLASS_CELLS`` cells per probability; again, exact, when the input has at most
    ``runner.exact_rows`` rows."""
    if not at.class_scores and not at.predicted:
        raise DataError("A multiclass audit needs either one probability column per class or a predicted-class "
                        "column; none was chosen.")
    numeric = tuple(runner.is_numeric(c) for m in at.models() for c in _value_columns(m))
    cells_per_column = runner.task_cells(MULTICLASS.name)
    resolution = 1.0 / cells_per_column
    cells = runner.sql(multiclass_sql(runner.relation, at, numeric, cells_per_column, runner.dialect))
    if int(cells["n"].sum()) <= runner.exact_rows and all(numeric):
        resolution = 0.0
        cells = runner.sql(multiclass_sql(runner.relation, at, numeric, 0, runner.dialect))   # small: exact
    cells = cells.reset_index(drop=True)
    table, exact = multiclass_table(cells, mapping)
    return binned_table(table, cells, exact, resolution, mapping)


def reduced_columns(mapping: ColumnMapping) -> list:
    """The columns the table carries: groups, the label, and every model's class probabilities (or its predicted
    class and confidence)."""
    return list(dict.fromkeys([*mapping.groups, mapping.label,
                               *(c for m in mapping.models() for c in (m.class_scores or (m.predicted, m.column)) if c)]))


def binned_note(mapping: ColumnMapping, resolution: float, entries: int, rows: int) -> str:
    """What the cells do to the reported numbers (measured: benchmarks/bench_engine_tasks.py, docs/engines.md)."""
    return (f"Class probabilities were reduced to cells of width 1/{round(1 / resolution):,} ({entries:,} entries "
            f"for {rows:,} rows), each at the mean of its rows: confusion counts and the ECE bins stay exact; "
            f"every other point estimate moves by less than 1e-4 of its scale; {RESAMPLED}")


MULTICLASS = register(TaskSpec(
    name="multiclass", title="multiclass classification",
    roles=("label", "groups", "class_scores", "classes", "predicted", "score", "normalise"),
    per_class=True,
    metrics=(MetricSpec("error_rate", "error rate"), MetricSpec("accuracy", "accuracy", better="higher"),
             MetricSpec("macro_f1", "macro-F1", better="higher")),
    error_metric="error_rate",
    overview=("accuracy", "mean confidence"), overview_labels=("Accuracy", "Mean confidence"),
    words={"label": "label", "score": "score", "choice": "Multiclass (a label with 3 or more classes)",
           "guessed": "a few categories (or class probability columns p_<class>) → multiclass",
           "pages": "Calibration and Group parity show every class; the other pages read one class against the rest "
                    "(the sidebar's class)."},
    recognise=recognise, guess_roles=guess_roles, validate=validator(_multiclass_columns, _multiclass_fields),
    reduction=Reduction(cells=CLASS_CELLS, reduce=reduce, columns=reduced_columns, note=binned_note),
))
