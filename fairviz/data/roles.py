"""Role guessing: which column of an uploaded file plays which role, for the user to confirm.

One vocabulary of column names (``ROLE_NAMES``) and one set of content tests serve every form that maps columns:
the predictions upload (``guess_columns``; its task and the task's own roles: ``fairviz.data.tasks.guess_mapping``),
text datasets for explanations (``guess_text_roles``), training data for the conditions simulator
(``guess_training_roles``) and quantile forecasts (``guess_forecast_roles``). A guess only preselects a choice:
the forms and the CLI let the user overrule it, and validation checks what was chosen.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairviz.data.model import ColumnMapping, plain_value

# Column names per role, lower case, most telling first (where a form takes the first named column, the order
# decides; where it takes every named column, the file's order does).
ROLE_NAMES = {
    "label": ("label", "labels", "y", "y_true", "target", "truth", "ground_truth", "actual", "outcome", "class", "gold",
              "two_year_recid", "default"),
    "score": ("score", "scores", "p", "p_hat", "phat", "prob", "proba", "probability", "y_prob", "y_score", "pred_prob",
              "prediction", "pred", "predicted_probability", "risk"),
    "group": ("group", "groups", "sex", "gender", "race", "ethnicity", "age_group", "age_cat", "student", "a",
              "sensitive", "protected", "attribute", "region", "nationality", "religion"),
    "text": ("text", "sentence", "comment", "review", "document", "content", "description", "narrative"),
    "row_id": ("id", "row_id", "uid", "index", "example_id"),
    "pair": ("pair", "pair_id", "twin", "twin_id"),          # counterfactual twins share a pair id
    "split": ("split",),
    # quantile forecasts: one row per (series, step) and model
    "series": ("id", "series", "series_id", "unique_id", "window", "window_id", "item_id", "forecast_id"),
    "step": ("step", "lead", "horizon", "h", "lead_time", "ds", "t"),
    "truth": ("truth", "y", "observed", "actual", "target", "y_true", "obs", "observation"),
    "level": ("level", "quantile", "tau", "quantile_level", "q_level"),
    "value": ("value", "forecast", "prediction", "yhat", "quantile_value", "q_value", "pred"),
    "model": ("model", "model_name", "forecaster"),
    "point": ("point", "point_forecast", "deterministic", "nvar", "mean", "median_forecast"),
}
# The conditions simulator's group column is often called z, the sensitive attribute's letter in its papers; a
# predictions file's z is more often a feature, so only that form looks for it.
TRAINING_GROUP_NAMES = ROLE_NAMES["group"] + ("z",)
TRUE_WORDS = {"1", "true", "yes", "y", "t", "pos", "positive"}     # label values that read as the positive class
MAX_SCANNED = 1_000           # role guessing reads the contents of this many columns (names: all of them)
MAX_GUESSED_GROUPS = 50        # a column with more distinct values is not guessed to be a group column

# Wide quantile columns: 'q0.05', 'q_0.9', 'quantile_0.5', '0.95' (levels) or 'q05', 'p95' (percent).
LEVEL_PATTERNS = [
    (re.compile(r"^(?:q|quantile|tau|level|p)?[_\s-]?(0?\.\d+)$", re.I), 1.0),
    (re.compile(r"^(?:q|quantile|p)[_\s-]?(\d{1,2})$", re.I), 100.0),
]


# ----------------------------------------------------------------------------------------------- shared tests

def named(columns: Iterable, role: str | tuple[str, ...]) -> list:
    """The columns called by one of the role's names (case and surrounding spaces aside), in the file's order."""
    names = ROLE_NAMES[role] if isinstance(role, str) else role
    return [c for c in columns if str(c).strip().lower() in names]


def first_named(columns: Iterable, role: str | tuple[str, ...]) -> Any:
    """The column called by the most telling of the role's names that the file has, or None."""
    names = ROLE_NAMES[role] if isinstance(role, str) else role
    by_name = {str(c).strip().lower(): c for c in columns}
    return next((by_name[n] for n in names if n in by_name), None)


def is_numeric(series: pd.Series) -> bool:
    """Numbers, not true/false."""
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def numeric_columns(frame: pd.DataFrame) -> list:
    """The columns holding numbers (not true/false), from the dtypes alone: fast on a very wide frame."""
    return [c for c, dtype in zip(frame.columns, frame.dtypes) if getattr(dtype, "kind", "O") in "iuf"]


def has_few_values(series: pd.Series) -> bool:
    """Between 2 and ``MAX_GUESSED_GROUPS`` distinct non-missing values: a column that could name groups."""
    return 2 <= distinct_count(series) <= MAX_GUESSED_GROUPS


def distinct_count(series: pd.Series) -> int:
    """Distinct non-missing values; 0 for cells that cannot be compared (lists, dicts, arrays from a Parquet list or
    struct column), which then play no role."""
    try:
        return int(series.nunique())
    except TypeError:
        return 0


def looks_like_groups(series: pd.Series) -> bool:
    """Categories (not numbers) with few distinct values."""
    return not is_numeric(series) and has_few_values(series)


def looks_like_probability(series: pd.Series) -> bool:
    if not is_numeric(series):
        return False
    values = series.dropna()
    return len(values) > 0 and values.min() >= 0 and values.max() <= 1 and values.nunique() > 2


def quantile_level(column: Any) -> float | None:
    """The quantile level that a wide forecast column's name stands for ('q0.05' → 0.05, 'p95' → 0.95), or None."""
    name = str(column).strip()
    for pattern, divisor in LEVEL_PATTERNS:
        match = pattern.match(name)
        if match:
            value = float(match.group(1)) / divisor
            return value if 0 < value < 1 else None
    return None


# ----------------------------------------------------------------------------------------------- the four forms

@dataclass(frozen=True)
class ColumnGuess:
    """A first reading of a predictions file, before its task is known: the mapping as for binary predictions, and
    what a task's own reading of the columns (``TaskSpec.guess_roles``) starts from."""

    mapping: ColumnMapping
    ids: tuple = ()              # identifier columns: never a score, a class or a feature
    prediction: Any = None       # a column named after the label as its prediction (price → price_pred), or None


def guess_columns(frame: pd.DataFrame) -> ColumnGuess:
    """A predictions file: each column's role from its name and content, as for binary predictions (the task's own
    roles follow: ``fairviz.data.tasks.guess_mapping``). Ids (``id``, ``*_id``) are never groups, scores or
    features; the score is a numeric column other than the label (named like a score, else probability-like, else
    percentages or logits), and the other probability-like columns are ``candidate_scores`` (several models); band
    columns ('18-25', '75+') are groups. Contents are read in the first ``MAX_SCANNED`` columns only (names in
    all), so a very wide file is guessed in a second."""
    columns = list(frame.columns)
    scanned = columns[:MAX_SCANNED]
    ids = [c for c in columns if is_id_name(c)]
    paired = target_and_prediction(frame)         # 'price' and 'price_pred': a regression's own names
    label = paired[0] if paired else labelled_by_class_columns(frame, scanned) or next(
        iter(named(columns, "label")), None) or next(
        (c for c in scanned if c not in ids and distinct_count(frame[c]) == 2), columns[0])
    scores = score_candidates(frame, exclude=(label, *ids))
    score = scores[0] if scores else next((c for c in columns if c != label), label)
    taken = {label, score, *ids}
    groups = tuple(c for c in named(columns, "group") if c not in taken)
    groups += tuple(c for c in scanned if c not in taken and c not in groups and looks_like_bands(frame[c]))
    if not groups:
        groups = tuple(c for c in scanned if c not in taken and looks_like_groups(frame[c]))[:1]
    text = next((c for c in named(columns, "text") if c not in (label, score, *groups)), None)
    row_id = next((c for c in [*named(columns, "row_id"), *ids] if c not in (label, score, *groups)), None)
    candidates = tuple(c for c in scores[1:] if looks_like_probability(frame[c]))
    models = {c for c in candidates if looks_like_model_name(c)}      # other models, not features
    taken = {label, score, text, row_id, *groups, *ids, *models}
    features = tuple(c for c in numeric_columns(frame) if c not in taken)
    guess = ColumnMapping(label=label, score=score, groups=groups, positive_label=None, text=text,
                          features=features, row_id=row_id, candidate_scores=candidates)
    return ColumnGuess(guess, tuple(ids), paired[1] if paired and paired[0] == label else None)


def labelled_by_class_columns(frame: pd.DataFrame, scanned: list) -> Any:
    """A column of 3 or more classes each of which has a probability column named after it (``animal`` with
    ``p_cat``, ``p_dog``, ``p_bird``): a multiclass label, or None."""
    for column in scanned:
        if 3 <= distinct_count(frame[column]) <= MAX_GUESSED_CLASSES:
            classes = [str(plain_value(v)) for v in frame[column].dropna().unique()]
            if class_columns(frame, classes):
                return column
    return None


PREDICTION_AFFIXES = (("", "_pred"), ("", "_hat"), ("", "_prediction"), ("", "_predicted"), ("", "_fitted"),
                      ("pred_", ""), ("predicted_", ""), ("prediction_", ""))


def target_and_prediction(frame: pd.DataFrame) -> tuple | None:
    """A numeric column and its prediction: named after it (``price`` and ``price_pred``, ``pred_price``), or a column
    named like a prediction (``y_pred``, ``prediction``) whose values are no probabilities, with the numeric column
    of many values closest to it (largest |correlation|). None when neither is found."""
    numbers = numeric_columns(frame)
    by_name = {str(c).strip().lower(): c for c in numbers}
    for column in numbers:
        name = str(column).strip().lower()
        for prefix, suffix in PREDICTION_AFFIXES:
            if name.startswith(prefix) and name.endswith(suffix) and len(name) > len(prefix) + len(suffix):
                base = by_name.get(name[len(prefix):len(name) - len(suffix)])
                if base is not None and base != column:
                    return base, column
    prediction = next((c for c in named(numbers, PREDICTION_NAMES) if not looks_like_probability(frame[c])
                       and distinct_count(frame[c]) > MAX_GUESSED_CLASSES), None)   # not a predicted class
    if prediction is None:
        return None
    targets = [c for c in numbers[:MAX_SCANNED] if c != prediction and not is_id_name(c)
               and not looks_like_model_name(c) and distinct_count(frame[c]) > MAX_GUESSED_CLASSES]
    target = next(iter(named(targets, "label")), None) or most_correlated(frame, prediction, targets)
    return (target, prediction) if target is not None else None


MODEL_WORDS = frozenset(("score", "scores", "p", "phat", "prob", "proba", "probability", "pred", "prediction",
                         "predicted", "risk", "yhat", "model", "logit", "logits"))


def looks_like_model_name(column: Any) -> bool:
    """``score_lr``, ``p_default_v2``, ``prob_gbm``, ``model_b``: a name made of a score word and a model's tag."""
    return any(word in MODEL_WORDS for word in re.split(r"[_\s.\-]+", str(column).strip().lower()))


def is_id_name(column: Any) -> bool:
    """``id``, ``row_id``, ``applicant_id``, ``customer id``: an identifier, never a group or a score."""
    name = str(column).strip().lower()
    return name in ROLE_NAMES["row_id"] or bool(re.search(r"[_\s.-]id$", name)) or name.endswith("uuid")


def score_candidates(frame: pd.DataFrame, exclude: Iterable = ()) -> list:
    """The columns that could be the score, most likely first: named like a score, then probability-like, then
    numbers that read as percentages or logits (in the first ``MAX_SCANNED`` columns). Only numbers (never
    true/false), never ``exclude``. One pass over a block of the numeric columns, so a wide file costs little."""
    excluded = set(exclude)
    numbers = numeric_columns(frame)
    by_name = [c for c in named(numbers, "score") if c not in excluded]
    seen = excluded | set(by_name)
    numeric = [c for c in numbers[:MAX_SCANNED] if c not in seen]
    if not numeric:
        return by_name
    block = frame[numeric].to_numpy(dtype=float, na_value=np.nan)
    block = np.where(np.isfinite(block), block, np.nan)
    present = ~np.isnan(block).all(axis=0)
    with np.errstate(invalid="ignore"):
        low = np.nanmin(np.where(present, block, 0.0), axis=0)
        high = np.nanmax(np.where(present, block, 0.0), axis=0)
    ordered = np.sort(block, axis=0)                                   # NaN last
    distinct = (np.diff(ordered, axis=0) > 0).sum(axis=0) + present    # distinct finite values per column
    many = present & (distinct > 2)
    probability = many & (low >= 0) & (high <= 1)
    # percentages or logits by the rules of fairviz.data.scales (guess_scale, unambiguous), on every column at once
    other = many & ~probability & (((low >= 0) & (high <= 100) & (high > 10)) | ((low < 0) & (high > 0)))
    return by_name + [c for c, ok in zip(numeric, probability) if ok] + [c for c, ok in zip(numeric, other) if ok]


def looks_like_bands(series: pd.Series) -> bool:
    """Text values that are all numeric ranges ('18-25', '75+', '<18', 'Less than 25'): groups in a natural order."""
    if is_numeric(series) or not has_few_values(series):
        return False
    return range_order([str(v) for v in series.dropna().unique()]) is not None


_NUMBER = r"(-?\d+(?:[.,]\d+)?)"
_BELOW = re.compile(rf"^(?:<|≤|<=|under|below|less than|up to|younger than)\s*{_NUMBER}", re.I)
_ABOVE = re.compile(rf"^(?:>|≥|>=|over|above|greater than|more than|older than)\s*{_NUMBER}|^{_NUMBER}\s*(?:\+|and (?:over|above|older|more))$", re.I)
_RANGE = re.compile(rf"^[\[(]?\s*{_NUMBER}\s*(?:-|–|—|to|,)\s*{_NUMBER}\s*[\])]?$", re.I)


def range_key(name: str) -> float | None:
    """A range's place in the natural order (its lower bound; '<18' just below 18), or None for other names."""
    text = str(name).strip()
    for pattern, shift in ((_RANGE, 0.0), (_ABOVE, 0.0), (_BELOW, -0.5)):
        match = pattern.match(text)
        if match:
            number = next(g for g in match.groups() if g is not None)
            return float(number.replace(",", ".")) + shift
    return None


def range_order(names: list[str]) -> list[float] | None:
    """Each name's ``range_key`` when every name is a range (at least two), else None: size order stays."""
    keys = [range_key(n) for n in names]
    return keys if len(keys) >= 2 and all(k is not None for k in keys) else None


def guess_text_roles(frame: pd.DataFrame) -> dict:
    """A text dataset (explanations): the text, label and group columns and an optional pair id of twin sentences.
    The text is the column named like one, else the wordiest column; label and group as for predictions."""
    mapping = guess_columns(frame).mapping
    columns = list(frame.columns)
    words = {c: frame[c].astype(str).str.count(" ").mean() for c in columns
             if not pd.api.types.is_numeric_dtype(frame[c])}
    text = next(iter(named(columns, "text")), None) or (max(words, key=words.get) if words else columns[0])
    group = next((g for g in mapping.groups if g != text), None) or next(
        (c for c in columns if c not in (text, mapping.label) and has_few_values(frame[c])), columns[0])
    return {"text": text, "label": mapping.label, "group": group, "pair": next(iter(named(columns, "pair")), None)}


def guess_training_roles(columns: list[str]) -> dict:
    """Training data (the conditions simulator), from the names alone: label, group and split columns (None when
    no column is named like one)."""
    return {"label": first_named(columns, "label"), "group": first_named(columns, TRAINING_GROUP_NAMES),
            "split": first_named(columns, "split")}


def guess_forecast_roles(frame: pd.DataFrame) -> dict:
    """Quantile forecasts: series, step, truth, groups, model, point, and — for the long format only, when no column
    is named like a quantile level — the level and value columns. A role no column is named for is '' (required
    roles) or None (optional ones); the page lets the user correct them."""
    columns = list(frame.columns)
    level_columns = [c for c in columns if quantile_level(c) is not None]
    level, value = (None, None) if level_columns else (first_named(columns, "level"), first_named(columns, "value"))
    roles = {role: first_named(columns, role) for role in ("series", "step", "truth", "model", "point")}
    used = {*roles.values(), level, value, *level_columns}
    groups = tuple(c for c in columns if c not in used and looks_like_groups(frame[c]))
    return {"series": roles["series"] or "", "step": roles["step"] or "", "truth": roles["truth"] or "",
            "groups": groups, "model": roles["model"], "point": roles["point"], "level": level, "value": value}


# ----------------------------------------------------------------------------------------------- label values

def label_values(series: pd.Series) -> list:
    """The distinct non-missing values of a label column, in a stable order."""
    return sorted(series.dropna().unique().tolist(), key=lambda v: (str(type(v)), str(v)))


def guess_positive_label(values: list) -> Any:
    """For two label values, the one that most plausibly means 'positive' (1, True, 'yes', …; else the larger)."""
    for value in values:
        if isinstance(value, (bool, np.bool_)) and value:
            return value
        if str(value).strip().lower() in TRUE_WORDS:
            return value
    return max(values, key=lambda v: (isinstance(v, (int, float, np.number)), v if not isinstance(v, str) else 0, str(v)))


# Label names whose positive value is a harm to the person (reoffending, defaulting, dying): the good outcome is the
# other value. Matched as parts of the name ('two_year_recid', 'is_fraud', 'default_next_month').
HARM_WORDS = ("recid", "reoffend", "default", "delinquen", "fraud", "churn", "risk", "death", "died", "dead",
              "mortality", "readmi", "arrest", "convict", "violent", "disease", "sick", "fail", "bad", "denied",
              "reject", "declin", "loss", "harm")


def guess_good_outcome(label: Any, values: list, positive: Any) -> Any:
    """The label value that is good for the person: the other value when the label names a harm (``HARM_WORDS``),
    else the positive value ('approved = yes', 'hired = 1'). Only a preselection: the form asks."""
    name = str(label).strip().lower()
    harmful = any(word in name for word in HARM_WORDS)
    if not harmful or len(values) != 2:
        return positive
    return next((v for v in values if v != positive), positive)


# ---------------------------------------------------------------------------------------- class and target columns

MAX_GUESSED_CLASSES = 50       # a label with more values is not guessed to be classes
FEW_CLASSES = 10               # whole numbers with more values and no class columns: a regression target
PREDICTION_NAMES = ("prediction", "pred", "y_pred", "yhat", "y_hat", "predicted", "forecast", "estimate", "fitted",
                    "predicted_class", "pred_class", "y_pred_class")


def class_columns(frame: pd.DataFrame, classes) -> list:
    """One probability column per class, named after it (``p_cat``, ``prob_3``, ``dog_prob``), in the classes' order;
    empty unless every class has one."""
    wanted = {str(c).strip().lower() for c in classes}
    found = {}
    for column in numeric_columns(frame):
        name = class_of_column(column).strip().lower()
        if name in wanted and name not in found and str(column).strip().lower() != name:
            found[name] = column
    return list(found.values()) if len(found) == len(wanted) else []


def predicted_column(frame: pd.DataFrame, label: Any, classes) -> Any:
    """A column named like a prediction whose values are mostly the label's classes (a model may predict a class
    no row has), or None."""
    wanted = {str(c).strip().lower() for c in classes}
    for column in named([c for c in frame.columns if c != label], PREDICTION_NAMES):
        values = {str(plain_value(v)).strip().lower() for v in frame[column].dropna().unique()}
        if values and 2 * len(values - wanted) <= len(values) <= MAX_GUESSED_CLASSES:
            return column
    return None


def most_correlated(frame: pd.DataFrame, label: Any, numbers: list) -> Any:
    """The numeric column closest to the target (largest |correlation|): the likeliest prediction, or None."""
    if not numbers:
        return None
    target = frame[label].astype(float)
    with np.errstate(all="ignore"):
        correlations = [abs(frame[c].astype(float).corr(target)) for c in numbers[:MAX_SCANNED]]
    correlations = [c if np.isfinite(c) else -1 for c in correlations]
    return numbers[int(np.argmax(correlations))]


CLASS_PREFIXES = ("p_", "prob_", "proba_", "probability_", "score_", "p(", "pr_")
CLASS_SUFFIXES = ("_prob", "_proba", "_probability", "_score", "_p")


def class_of_column(column) -> str:
    """The class a probability column stands for, from its name: ``p_cat`` → ``cat``, ``prob_3`` → ``3``,
    ``dog_prob`` → ``dog``; else the name itself."""
    name = str(column).strip()
    lower = name.lower()
    for prefix in CLASS_PREFIXES:
        if lower.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix):].rstrip(")")
    for suffix in CLASS_SUFFIXES:
        if lower.endswith(suffix) and len(name) > len(suffix):
            return name[:-len(suffix)]
    return name
