"""Binary classification: a two-valued label and, per model, a score read as the probability of the positive one.

Validation: rows with a missing label, score or group value are dropped and counted, never lost silently; the
score is converted to the probability of the positive label (the mapping's scale and direction,
``fairviz.data.scales``) and its direction checked (``fairviz.data.checks``); any text in a score column is refused,
naming the column and examples; every other model is read, converted and checked as the first is, or left out with
a note naming why.

Reduction (``fairviz.data.engine``): counts per (group values, label, score cell of every model); scores are cut
into ``cells`` equal cells of [0, 1] (``DEFAULT_CELLS``; several models share one GROUP BY at ``JOINT_CELLS`` per
model). When every cell holds a single distinct score the table is exact (inputs of at most ``EXACT_ROWS`` rows are
always exact, by a second pass with one cell per distinct score); else each cell carries the mean of its scores.
Values outside [0, 1], NaN and missing values keep their own cells so that validation names them as the row path
does.
"""
from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from fairviz.data.checks import confirm_direction
from fairviz.data.cleaning import (count_rows, drop_small_groups, factorize_groups, group_attributes, numeric_values,
                                   without_na_texts)
from fairviz.data.dialects import DUCKDB, Dialect
from fairviz.data.model import ColumnMapping, DataError, Predictions, plain_value
from fairviz.data.roles import TRUE_WORDS, distinct_count, guess_positive_label, label_values
from fairviz.data.scales import SCALE_TITLES, guess_scale, oriented, probability_sql, to_probability
from fairviz.data.tasks.common import RESAMPLED, suffix
from fairviz.data.tasks.registry import register
from fairviz.data.task_spec import DEFAULT_TASK, FALLBACK, SURE, MetricSpec, Reduced, Reduction, TaskSpec

DEFAULT_CELLS = 300_000         # score cells on [0, 1]: width 3.3e-6 (multiples of 1/10, 1/15, 1/30 are cell edges)
# Several models: cells per model in the joint GROUP BY (width 3.3e-4; multiples of 1/10, 1/15, 1/30 stay cell
# edges, so ECE's bins stay exact). Finer joint cells would make the table as large as the input for 100M rows.
JOINT_CELLS = 3_000


# ----------------------------------------------------------------------------------------------- recognition

def recognise(frame: pd.DataFrame, label) -> float:
    """Two label values: binary for sure; anything no other task claims stays binary, so that validation names the
    label's values (a label of three values with one score is more often a mapping mistake than a multiclass file)."""
    return SURE if distinct_count(frame[label]) <= 2 else FALLBACK


# ----------------------------------------------------------------------------------------------- validation

def validate(frame: pd.DataFrame, mapping: ColumnMapping, source: str, file_fingerprint: str,
             weights: np.ndarray | None, limits, converted: bool = False) -> Predictions:
    """``frame`` under a binary ``mapping`` → ``Predictions``, or a ``DataError`` listing every blocking problem
    (``fairviz.data.validation.build_predictions`` says what ``weights``, ``limits`` and ``converted`` are)."""
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


# ----------------------------------------------------------------------------------------------- reduction

def reduction_sql(source: str, mapping: ColumnMapping, numeric_score, cells: int = DEFAULT_CELLS,
                  dialect: Dialect = DUCKDB) -> str:
    """The reduction, in SQL that every engine runs (``dialect``: its few differences): one row per (groups, label,
    score cell of every model).

    Output columns: g0…g{k-1}, y, n, and per model (the first unsuffixed, model i ≥ 1 suffixed ``_i``): cell, odd
    (NaN, ±inf or a non-numeric score as is; −1 / 2 for finite scores below 0 / above 1), lo, hi, total (min, max
    and sum of the scores in the cell). ``cells`` = 0: one cell per distinct score. ``numeric_score``: one flag, or
    one per model (``mapping.models()``). Several models share one GROUP BY: one scan, and the table's entries are
    the joint cells every model's audit and the paired comparisons read."""
    q = dialect.quote
    models = mapping.models()
    numeric = tuple(numeric_score) if isinstance(numeric_score, (tuple, list)) else (bool(numeric_score),) * len(models)
    keys = [f"{q(g)} AS g{k}" for k, g in enumerate(mapping.groups)]
    scores = [f"{_as_probability(m, q, dialect) if numeric[i] else q(m.column)} AS s{suffix(i)}"
              for i, m in enumerate(models)]
    inner = f"SELECT {', '.join(keys)}, {q(mapping.label)} AS y, {', '.join(scores)} FROM {source}"
    groups = [f"g{k}" for k in range(len(mapping.groups))] + ["y"]
    selects, by = [], list(groups)
    for i in range(len(models)):
        cell, odd, stats = _model_cells(f"s{suffix(i)}", numeric[i], cells, dialect)
        x = suffix(i)
        selects.append(f"{cell} AS cell{x}, {odd} AS odd{x}, {stats.format(x=x)}")
        by += [cell, odd]
    return (f"SELECT {', '.join(groups)}, COUNT(*) AS n, {', '.join(selects)} "
            f"FROM ({inner}) t GROUP BY {', '.join(by)}")


def _as_probability(model, q, dialect: Dialect) -> str:
    return probability_sql(dialect.as_double(q(model.column)), model.scale, model.direction, dialect.is_nan)


def _model_cells(s: str, numeric: bool, cells: int, dialect: Dialect) -> tuple[str, str, str]:
    """One model's cell and out-of-range expressions (grouped by) and its statistics (aggregated)."""
    if not numeric:
        return "NULL", s, "NULL AS lo{x}, NULL AS hi{x}, NULL AS total{x}"
    inside = f"{s} >= 0 AND {s} <= 1"
    cell = f"CASE WHEN {inside} THEN FLOOR({s} * {int(cells)}) END" if cells else f"CASE WHEN {inside} THEN {s} END"
    # outside [0, 1]: NaN and ±inf keep their value (≤ 3 cells); finite values below 0 / above 1 share one cell per
    # side (code -1 / 2) with their count, min and max — all that validation reports — so the table stays bounded
    odd = (f"CASE WHEN {s} IS NULL OR ({inside}) THEN NULL WHEN {dialect.is_nan(s)} THEN {s} "
           f"WHEN {s} - {s} <> 0 THEN {s} WHEN {s} > 1 THEN 2.0 ELSE -1.0 END")
    return cell, odd, f"MIN({s}) AS lo{{x}}, MAX({s}) AS hi{{x}}, SUM({s}) AS total{{x}}"


def single_valued(cells: pd.DataFrame) -> bool:
    """Every score cell inside [0, 1] holds one distinct score (of every model)."""
    for x in _model_suffixes(cells):
        lo, hi = (pd.to_numeric(cells[c + x], errors="coerce").to_numpy(dtype=float) for c in ("lo", "hi"))
        if not np.all((lo == hi)[cells["cell" + x].notna().to_numpy()]):
            return False
    return True


def _model_suffixes(cells: pd.DataFrame) -> list[str]:
    return [""] + [c[len("cell"):] for c in cells.columns if c.startswith("cell_")]


def _model_values(cells: pd.DataFrame, x: str, n: np.ndarray, numeric: bool):
    """One model's score per table row ((value, value of the split-off row)), whether its cells are single-valued,
    and which rows hold several values outside [0, 1] (split in two, so validation reports their range)."""
    if not numeric:
        return (cells["odd" + x], cells["odd" + x]), True, np.zeros(len(cells), dtype=bool)   # validation names them
    lo, hi, total = (pd.to_numeric(cells[c + x], errors="coerce").to_numpy(dtype=float) for c in ("lo", "hi", "total"))
    odd = pd.to_numeric(cells["odd" + x], errors="coerce").to_numpy(dtype=float)
    in_range = cells["cell" + x].notna().to_numpy()
    single = lo == hi
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(single, lo, total / n)        # one distinct score: itself; else the cell's mean
    outside = np.isin(odd, (-1.0, 2.0))                # finite scores outside [0, 1]: their min and max
    value = np.where(in_range, value, np.where(outside, lo, odd))
    split = outside & (n > 1) & ~single
    return (value, np.where(split, hi, value)), bool(single[in_range].all()), split


def entries(cells: pd.DataFrame, mapping: ColumnMapping, numeric) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, bool]:
    """The engine's output (see ``reduction_sql``) → (the table's columns, rows per entry, each entry's score cell,
    whether every cell holds one distinct score). A cell of several scores outside [0, 1] becomes two entries (its
    min with n − 1 rows, its max with 1), so that validation reports their range."""
    cells = cells.reset_index(drop=True)
    n = cells["n"].to_numpy(dtype=np.int64)
    models = mapping.models()
    numeric = tuple(numeric) if isinstance(numeric, (tuple, list)) else (bool(numeric),) * len(models)
    values, exact, split = {}, True, np.zeros(len(cells), dtype=bool)
    for i, model in enumerate(models):
        values[i], single_valued_model, needs_split = _model_values(cells, suffix(i), n, numeric[i])
        exact &= single_valued_model
        split |= needs_split
    if split.any():          # two entries: (min, n − 1 rows) and (max, 1 row) of a cell outside [0, 1]
        extra = np.flatnonzero(split)
        for i in values:
            low, high = values[i]
            values[i] = ((pd.concat([low, high.iloc[extra]], ignore_index=True) if isinstance(low, pd.Series)
                          else np.concatenate([low, high[extra]])), None)
        cells = pd.concat([cells, cells.iloc[extra]], ignore_index=True)
        n = np.concatenate([np.where(split, n - 1, n), np.ones(extra.size, dtype=np.int64)])
    table = pd.DataFrame({g: cells[f"g{k}"] for k, g in enumerate(mapping.groups)})
    table[mapping.label] = cells["y"]
    for i, model in enumerate(models):
        value = values[i][0]           # a non-numeric score keeps its column's own type: validation names it
        table[model.column] = value.reset_index(drop=True) if isinstance(value, pd.Series) else pd.Series(value,
                                                                                                          dtype=float)
    cell_key = pd.to_numeric(cells["cell"], errors="coerce").to_numpy(dtype=float)
    return table, n, cell_key, exact


def reduce(runner, at: ColumnMapping, mapping: ColumnMapping) -> Reduced:
    """Score cells of [0, 1] (``runner.cells``; ``JOINT_CELLS`` at most for several models); again, one cell per
    distinct score, when the input has at most ``runner.exact_rows`` rows and a cell holds several."""
    numeric = tuple(runner.is_numeric(m.column) for m in at.models())
    key_cells = runner.cells if len(numeric) == 1 else min(runner.cells, JOINT_CELLS)
    cells = runner.sql(reduction_sql(runner.relation, at, numeric, key_cells, runner.dialect))
    if all(numeric) and int(cells["n"].sum()) <= runner.exact_rows and not single_valued(cells):
        key_cells = 0
        cells = runner.sql(reduction_sql(runner.relation, at, numeric, 0, runner.dialect))   # small: exact
    table, n, cell_key, exact = entries(cells, mapping, numeric)
    return Reduced(table, n, 0.0 if exact else 1.0 / (key_cells or runner.cells), f"{key_cells or runner.cells}",
                   cell_key=cell_key, key_cells=key_cells)


def reduced_columns(mapping: ColumnMapping) -> list:
    """The columns the table carries: groups, the label, every model's score."""
    return list(dict.fromkeys((*mapping.groups, mapping.label, *(m.column for m in mapping.models()))))


def binned_note(mapping: ColumnMapping, resolution: float, entries: int, rows: int) -> str:
    """What a cell width does to the reported numbers (measured: tests/data/test_several_models.py)."""
    if resolution <= 1.0 / DEFAULT_CELLS:
        moves = f"point estimates move by less than 1e-4; {RESAMPLED}"
    else:
        moves = ("one cell per model and per 1/3,000 of [0, 1] (several models share the cells): counts at a "
                 "threshold on a 0.01 step and ECE's bins stay exact; quantiles move by less than one cell width, "
                 "AUROC and log-loss by less than 1e-4.")
    return f"Scores were reduced to cells of width {resolution:.2g} ({entries:,} cells for {rows:,} rows); {moves}"


BINARY = register(TaskSpec(
    name=DEFAULT_TASK, title="binary classification",
    roles=("label", "score", "groups", "positive_label", "score_scale", "score_direction", "more_scores"),
    thresholded=True, probability_scores=True,
    metrics=(MetricSpec("fpr", "false-positive rate"), MetricSpec("fnr", "false-negative rate"),
             MetricSpec("ppr", "positive prediction rate", better="zero"), MetricSpec("error_rate", "error rate")),
    error_metric="fpr",
    overview=("base rate", "mean score"), overview_labels=("Positive rate (label)", "Mean score"),
    words={"label": "label", "score": "score", "choice": "Binary (two-valued label, a score)",
           "guessed": "two values → binary"},
    recognise=recognise, validate=validate,
    reduction=Reduction(cells=DEFAULT_CELLS, reduce=reduce, columns=reduced_columns, note=binned_note),
))
