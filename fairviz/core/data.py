"""Load a predictions file once into one validated object that every page and the CLI share.

The flow is: bytes or a path → ``read_table`` (a DataFrame, or a ``DataError`` naming why it could not be
read) → ``guess_mapping`` (which column plays which role, for the user to confirm) → ``build_predictions``
(validation: one message per problem; rows with missing values are dropped and counted, never lost
silently).
"""
from __future__ import annotations

import csv
import hashlib
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairviz.core.limits import DEFAULT_LIMITS, GroupLimits

MAX_ROWS = 20_000_000          # beyond this a browser session is not the right tool; the CLI says so too
MIN_GROUP_SIZE = 2
INTERSECTION_SEP = " × "

_TRUE_WORDS = {"1", "true", "yes", "y", "t", "pos", "positive"}


class DataError(ValueError):
    """Input that cannot be analysed. ``problems`` holds one plain sentence per problem."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))


@dataclass(frozen=True)
class ColumnMapping:
    """Which column of the file plays which role."""

    label: str
    score: str
    groups: tuple[str, ...]
    positive_label: Any = None       # the label value that means Y = 1; None → guessed
    text: str | None = None
    features: tuple[str, ...] = ()
    row_id: str | None = None
    intersect: bool = False          # add the intersection of the first two group columns as an attribute

    def to_dict(self) -> dict:
        return {"label": self.label, "score": self.score, "groups": list(self.groups),
                "positive_label": _plain(self.positive_label), "text": self.text,
                "features": list(self.features), "row_id": self.row_id, "intersect": self.intersect}


@dataclass(frozen=True)
class GroupView:
    """One sensitive attribute: a group code per row and the group names, ordered by size (largest first)."""

    attribute: str
    codes: np.ndarray           # int32, one per row, index into ``names``
    names: tuple[str, ...]

    @property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.codes, minlength=len(self.names))

    def mask(self, name: str) -> np.ndarray:
        return self.codes == self.names.index(name)


@dataclass(frozen=True)
class Predictions:
    """Validated predictions: label y ∈ {0, 1}, score ∈ [0, 1], one or more group attributes."""

    y: np.ndarray                       # int8
    score: np.ndarray                   # float64
    attributes: dict[str, GroupView]    # attribute name → groups
    frame: pd.DataFrame                 # the kept rows, original columns (for hover, text, features, download)
    mapping: ColumnMapping
    source: str
    fingerprint: str                    # hash of the file's bytes + mapping: the cache key of every analysis
    notes: tuple[str, ...] = ()         # what validation changed (dropped rows, small groups), for display
    _intersections: dict = field(default_factory=dict, repr=False, compare=False)   # 'a × b' → GroupView, built once
    limits: GroupLimits = field(default=DEFAULT_LIMITS, compare=False)   # group-count caps (fairviz.core.limits)

    @property
    def n(self) -> int:
        return int(self.y.size)

    @property
    def attribute_names(self) -> list[str]:
        return list(self.attributes)

    def groups(self, attribute: str | None = None) -> GroupView:
        """An attribute's groups, or those of the intersection 'a × b' of two attributes (built once, then kept):
        every page and concept can audit intersections the same way."""
        name = attribute or self.attribute_names[0]
        if name in self.attributes:
            return self.attributes[name]
        if name not in self._intersections:
            parts = name.split(INTERSECTION_SEP)
            if len(parts) != 2 or not all(p in self.attributes for p in parts):
                raise KeyError(f"unknown group attribute {name!r}")
            view = intersection_view(self.attributes[parts[0]], self.attributes[parts[1]])
            problem = self.limits.too_many_groups(name, len(view.names))
            if problem:
                raise DataError(problem)
            self._intersections[name] = view
        return self._intersections[name]

    def choices(self) -> list[str]:
        """Every grouping a page can audit: the attributes, then the intersection of each pair of them."""
        plain = [a for a in self.attribute_names if INTERSECTION_SEP not in a]
        pairs = [f"{a}{INTERSECTION_SEP}{b}" for i, a in enumerate(plain) for b in plain[i + 1:]]
        return self.attribute_names + [p for p in pairs if p not in self.attributes]

    def row_labels(self) -> np.ndarray:
        """A short label per row for hover text: the id column if mapped, else the row number in the file."""
        if self.mapping.row_id:
            return self.frame[self.mapping.row_id].astype(str).to_numpy()
        return np.array([f"row {i}" for i in self.frame.index])

    def texts(self) -> np.ndarray | None:
        return None if not self.mapping.text else self.frame[self.mapping.text].astype(str).to_numpy()

    def with_shuffled_groups(self, seed: int) -> "Predictions":
        """The same rows with every attribute's group labels permuted (sizes kept): the paper's null control."""
        rng = np.random.default_rng(seed)
        shuffled = {name: GroupView(view.attribute, rng.permutation(view.codes), view.names)
                    for name, view in self.attributes.items()}
        return Predictions(self.y, self.score, shuffled, self.frame, self.mapping, self.source,
                           f"{self.fingerprint}:shuffled{seed}",
                           self.notes + (f"Group labels randomly permuted (seed {seed}): a null control.",),
                           limits=self.limits)


# ----------------------------------------------------------------------------------------------- reading

def read_table(source: str | Path | bytes | io.IOBase, name: str | None = None) -> tuple[pd.DataFrame, str]:
    """Read CSV or Parquet from a path or bytes. Returns (frame, fingerprint of the bytes)."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.exists():
            raise DataError(f"File not found: {path}")
        name = name or path.name
        raw = path.read_bytes()
    elif isinstance(source, bytes):
        raw = source
    else:
        raw = source.read()
    name = name or "upload"
    if not raw or not raw.strip():
        raise DataError(f"'{name}' is empty: there are no rows to analyse.")
    digest = hashlib.blake2b(raw, digest_size=16).hexdigest()
    frame = _parse(raw, name)
    if frame.shape[1] == 0 or frame.shape[0] == 0:
        raise DataError(f"'{name}' has a header but no data rows.")
    if frame.shape[0] > MAX_ROWS:
        raise DataError(f"'{name}' has {frame.shape[0]:,} rows; the limit is {MAX_ROWS:,}. "
                        "Sample it, or aggregate first.")
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame, digest


def _parse(raw: bytes, name: str) -> pd.DataFrame:
    if raw[:4] == b"PAR1" or name.lower().endswith((".parquet", ".pq")):
        try:
            return pd.read_parquet(io.BytesIO(raw))
        except Exception as err:  # pyarrow raises many types for a damaged file
            raise DataError(f"'{name}' could not be read as Parquet ({type(err).__name__}).") from None
    if b"\x00" in raw[:4096]:
        raise DataError(f"'{name}' looks like a binary file, not CSV or Parquet.")
    for encoding in ("utf-8-sig", "latin-1"):
        try:
            text = raw.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    if not _few_commas(text):
        try:                                    # multi-threaded; falls back to pandas' parser on any complaint
            return pd.read_csv(io.BytesIO(raw), engine="pyarrow")
        except Exception:  # noqa: BLE001 - pyarrow raises several error types for odd files
            pass
    try:
        return pd.read_csv(io.StringIO(text), sep=None, engine="python") if _few_commas(text) \
            else pd.read_csv(io.StringIO(text), low_memory=False)
    except pd.errors.EmptyDataError:
        raise DataError(f"'{name}' is empty: there are no rows to analyse.") from None
    except (pd.errors.ParserError, csv.Error) as err:
        first = str(err).splitlines()[0][:160]
        raise DataError(f"'{name}' could not be parsed as CSV: {first}") from None


def _few_commas(text: str) -> bool:
    """A header without commas suggests ';' or tab separated text: let pandas sniff the separator."""
    header = text.split("\n", 1)[0]
    return "," not in header and any(sep in header for sep in (";", "\t", "|"))


# ----------------------------------------------------------------------------------------------- roles

_ROLE_PATTERNS = {
    "label": r"^(y|y_true|label|labels|target|truth|ground_truth|actual|outcome|class|gold|two_year_recid|default)$",
    "score": r"^(score|scores|p|p_hat|phat|prob|proba|probability|y_prob|y_score|pred_prob|prediction|pred|predicted_probability|risk)$",
    "groups": r"^(group|groups|sex|gender|race|ethnicity|age_group|age_cat|student|a|sensitive|protected|attribute|region|nationality|religion)$",
    "text": r"^(text|sentence|comment|review|document|content|description|narrative)$",
    "row_id": r"^(id|row_id|uid|index|example_id)$",
}


def guess_mapping(frame: pd.DataFrame) -> ColumnMapping:
    """Guess each column's role from its name and content; the user confirms on the home page."""
    columns = list(frame.columns)
    lower = {c: c.lower().strip() for c in columns}

    def by_name(role: str) -> list[str]:
        return [c for c in columns if re.match(_ROLE_PATTERNS[role], lower[c])]

    label = next(iter(by_name("label")), None) or next(
        (c for c in columns if frame[c].dropna().nunique() == 2), columns[0])
    score = next((c for c in by_name("score") if c != label), None) or next(
        (c for c in columns if c != label and _looks_like_probability(frame[c])), columns[min(1, len(columns) - 1)])
    groups = tuple(c for c in by_name("groups") if c not in (label, score))
    if not groups:
        groups = tuple(c for c in columns if c not in (label, score) and not _is_numeric(frame[c])
                       and 2 <= frame[c].nunique() <= 50)[:1]
    text = next((c for c in by_name("text") if c not in (label, score, *groups)), None)
    row_id = next((c for c in by_name("row_id") if c not in (label, score, *groups)), None)
    taken = {label, score, text, row_id, *groups}
    features = tuple(c for c in columns if c not in taken and _is_numeric(frame[c]))
    return ColumnMapping(label=label, score=score, groups=groups, positive_label=None, text=text,
                         features=features, row_id=row_id)


def _is_numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _looks_like_probability(series: pd.Series) -> bool:
    if not _is_numeric(series):
        return False
    values = series.dropna()
    return len(values) > 0 and values.min() >= 0 and values.max() <= 1 and values.nunique() > 2


def label_values(series: pd.Series) -> list:
    """The distinct non-missing values of a label column, in a stable order."""
    return sorted(series.dropna().unique().tolist(), key=lambda v: (str(type(v)), str(v)))


def guess_positive_label(values: list) -> Any:
    """For two label values, the one that most plausibly means 'positive' (1, True, 'yes', …; else the larger)."""
    for value in values:
        if isinstance(value, (bool, np.bool_)) and value:
            return value
        if str(value).strip().lower() in _TRUE_WORDS:
            return value
    return max(values, key=lambda v: (isinstance(v, (int, float, np.number)), v if not isinstance(v, str) else 0, str(v)))


# ----------------------------------------------------------------------------------------------- validation

def build_predictions(frame: pd.DataFrame, mapping: ColumnMapping, source: str = "upload",
                      file_fingerprint: str = "", limits: GroupLimits | None = None) -> Predictions:
    """Validate ``frame`` under ``mapping``. Raises ``DataError`` listing every blocking problem.

    ``limits`` caps the groups per attribute (``fairviz.core.limits``; the defaults unless given)."""
    limits = limits or DEFAULT_LIMITS
    _check_columns(frame, mapping)
    problems: list[str] = []
    notes: list[str] = []

    score = _numeric_scores(frame[mapping.score], mapping.score, problems)
    y_raw = frame[mapping.label]
    factorized = {c: _factorize(frame[c]) for c in mapping.groups}     # one hash pass per group column

    missing = score.isna() | y_raw.isna()
    for codes, _ in factorized.values():
        missing |= codes < 0
    n_missing = int(missing.sum())
    keep = ~missing.to_numpy()
    if n_missing:
        notes.append(f"{n_missing:,} of {len(frame):,} rows dropped for a missing label, score or group value.")
    if not keep.any():
        problems.append("Every row has a missing label, score or group value: nothing is left to analyse.")
        raise DataError(problems)

    score_values = score.to_numpy(dtype=float)[keep]
    _check_score_range(score_values, mapping.score, problems)
    y = _binary_labels(y_raw[keep], mapping, problems)
    if problems:                       # group checks on rows that are about to change would only add noise
        raise DataError(problems)
    attributes = _attributes({c: (codes[keep], names) for c, (codes, names) in factorized.items()}, mapping,
                             problems, notes)
    if problems:
        raise DataError(problems)

    # Drop rows in groups too small to compare (after validation, so counts are reported).
    small = np.zeros(keep.sum(), dtype=bool)
    for view in attributes.values():
        small |= np.isin(view.codes, np.flatnonzero(view.sizes < MIN_GROUP_SIZE))
    if small.any():
        attributes = {k: _recode(v, ~small) for k, v in attributes.items()}
        y, score_values = y[~small], score_values[~small]
        kept_frame = frame.loc[keep].loc[~small]
        for view in attributes.values():
            if len(view.names) < 2:
                raise DataError(f"Group column '{view.attribute}' has fewer than two groups with at least "
                                f"{MIN_GROUP_SIZE} rows: fairness compares groups, so at least two are needed.")
    else:
        kept_frame = frame.loc[keep]
    too_many = [p for view in attributes.values() if (p := limits.too_many_groups(view.attribute, len(view.names)))]
    if too_many:
        raise DataError(too_many)

    fingerprint = hashlib.blake2b(f"{file_fingerprint}|{mapping.to_dict()}".encode(), digest_size=16).hexdigest()
    return Predictions(y=y, score=score_values, attributes=attributes, frame=kept_frame, mapping=mapping,
                       source=source, fingerprint=fingerprint, notes=tuple(notes), limits=limits)


def load_predictions(path: str | Path, mapping: ColumnMapping | None = None, **mapping_kwargs) -> Predictions:
    """Read and validate a file in one call (the CLI's and the tests' entry point)."""
    frame, digest = read_table(path)
    if mapping is None:
        mapping = guess_mapping(frame)
        if mapping_kwargs:
            mapping = ColumnMapping(**{**mapping.__dict__, **mapping_kwargs})
    return build_predictions(frame, mapping, source=Path(path).name, file_fingerprint=digest)


def _check_columns(frame: pd.DataFrame, mapping: ColumnMapping) -> None:
    needed = {"label": [mapping.label], "score": [mapping.score], "group": list(mapping.groups)}
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
    if mapping.label in mapping.groups or mapping.score in mapping.groups:
        problems.append("A group column is also the label or the score column; choose different columns.")
    if problems:
        raise DataError(problems)


def _column_list(frame: pd.DataFrame, limit: int = 12) -> str:
    cols = [str(c) for c in frame.columns]
    return ", ".join(cols[:limit]) + (f", … ({len(cols)} in all)" if len(cols) > limit else "")


def _numeric_scores(series: pd.Series, name: str, problems: list[str]) -> pd.Series:
    if pd.api.types.is_bool_dtype(series):
        problems.append(f"The score column '{name}' holds true/false values; it needs probabilities in [0, 1].")
        return series.astype(float)
    if pd.api.types.is_numeric_dtype(series):
        return series.astype(float)
    numeric = pd.to_numeric(series, errors="coerce")
    text_mask = numeric.isna() & series.notna() & (series.astype(str).str.strip() != "")
    if text_mask.any():
        examples = ", ".join(repr(v) for v in series[text_mask].astype(str).unique()[:3])
        problems.append(f"The score column '{name}' has {int(text_mask.sum()):,} non-numeric values "
                        f"(e.g. {examples}); scores must be numbers in [0, 1].")
    return numeric


def _check_score_range(score: np.ndarray, name: str, problems: list[str]) -> None:
    infinite = np.isinf(score)
    if infinite.any():
        problems.append(f"The score column '{name}' has {int(infinite.sum()):,} infinite values; scores must be in [0, 1].")
    finite = score[~infinite]
    outside = (finite < 0) | (finite > 1)
    if outside.any():
        hint = " They look like logits or raw scores: convert them to probabilities first." \
            if finite.min() < 0 or finite.max() > 1.5 else ""
        problems.append(f"The score column '{name}' has {int(outside.sum()):,} values outside [0, 1] "
                        f"(range {finite.min():.3g} to {finite.max():.3g}).{hint}")


def _binary_labels(series: pd.Series, mapping: ColumnMapping, problems: list[str]) -> np.ndarray:
    values = label_values(series)
    if len(values) > 2:
        shown = ", ".join(repr(_plain(v)) for v in values[:5])
        problems.append(f"The label column '{mapping.label}' has {len(values)} distinct values ({shown}"
                        f"{', …' if len(values) > 5 else ''}); it must be binary (two values, e.g. 0/1).")
        return np.zeros(len(series), dtype=np.int8)
    positive = mapping.positive_label
    plain = {_plain(v) for v in values}
    if positive is None:
        if plain <= {0, 1} or plain <= {True, False}:
            positive = 1
        elif all(isinstance(v, str) for v in values) and any(str(v).strip().lower() in _TRUE_WORDS for v in values):
            positive = guess_positive_label(values)
        else:
            shown = ", ".join(repr(v) for v in sorted(plain, key=str))
            problems.append(f"The label column '{mapping.label}' has values {shown}, not 0/1: say which value is "
                            "the positive class (the positive-label choice, or --positive-label).")
            return np.zeros(len(series), dtype=np.int8)
    elif not any(_same(positive, v) for v in values):
        problems.append(f"The positive label {positive!r} does not occur in '{mapping.label}' "
                        f"(values: {', '.join(repr(_plain(v)) for v in values)}).")
        return np.zeros(len(series), dtype=np.int8)
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
        return (series.to_numpy() == _coerce_like(positive, series)).astype(np.int8)
    text = series.astype(str).str.strip().str.lower().to_numpy()
    return (text == str(_plain(positive)).strip().lower()).astype(np.int8)


def _factorize(series: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Codes and names of a group column; missing and blank values get code −1. Values that print alike
    (1 and '1', ' a' and 'a') are one group."""
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    names = [str(u).strip() for u in uniques]
    distinct = {name: k for k, name in enumerate(dict.fromkeys(n for n in names if n))}
    remap = np.array([distinct.get(name, -1) for name in names] + [-1], dtype=np.int64)
    return remap[codes], list(distinct)          # codes of −1 index the appended −1


def _attributes(groups: dict[str, tuple[np.ndarray, list[str]]], mapping: ColumnMapping, problems: list[str],
                notes: list[str]) -> dict[str, GroupView]:
    attributes = {}
    for col, (codes, names) in groups.items():
        view = _ordered_view(col, codes, names)
        if len(view.names) < 2:
            problems.append(f"The group column '{col}' has a single value ('{view.names[0]}'): fairness compares "
                            "groups, so it needs at least two.")
        attributes[col] = view
    if mapping.intersect and len(mapping.groups) >= 2:
        a, b = mapping.groups[:2]
        (codes_a, names_a), (codes_b, names_b) = groups[a], groups[b]
        joint, pairs = pd.factorize(codes_a * len(names_b) + codes_b)
        joint_names = [f"{names_a[p // len(names_b)]}{INTERSECTION_SEP}{names_b[p % len(names_b)]}" for p in pairs]
        attributes[f"{a}{INTERSECTION_SEP}{b}"] = _ordered_view(f"{a}{INTERSECTION_SEP}{b}", joint, joint_names)
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


def _ordered_view(attribute: str, codes: np.ndarray, names: list[str]) -> GroupView:
    """A GroupView whose groups are ordered largest first (ties by name); groups with no rows are left out."""
    sizes = np.bincount(codes, minlength=len(names))
    present = np.flatnonzero(sizes)
    order = present[np.lexsort((np.array(names, dtype=object)[present].astype(str), -sizes[present]))]
    remap = np.full(len(names), -1, dtype=np.int64)
    remap[order] = np.arange(order.size)
    return GroupView(attribute, remap[codes].astype(np.int32), tuple(names[k] for k in order))


def _recode(view: GroupView, keep: np.ndarray) -> GroupView:
    return _ordered_view(view.attribute, view.codes[keep], list(view.names))


def _plain(value: Any) -> Any:
    """numpy scalars → Python scalars, so values print and serialise plainly."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _same(a: Any, b: Any) -> bool:
    return _plain(a) == _plain(b) or str(_plain(a)).strip().lower() == str(_plain(b)).strip().lower()


def _coerce_like(value: Any, series: pd.Series) -> Any:
    """A positive label typed in a text box ('1') compared with a numeric or boolean column."""
    if pd.api.types.is_bool_dtype(series):
        return str(value).strip().lower() in _TRUE_WORDS if isinstance(value, str) else bool(value)
    if pd.api.types.is_numeric_dtype(series) and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


@dataclass(frozen=True)
class Sample:
    """A bundled dataset: a file in assets/ with its column mapping and a sensible default threshold."""

    key: str
    title: str
    file: str
    mapping: ColumnMapping
    threshold: float = 0.5
    description: str = ""
    provenance: str = ""
    extra: dict = field(default_factory=dict)


def intersection_view(a: GroupView, b: GroupView) -> GroupView:
    """Groups of rows sharing a value of ``a`` and of ``b`` (empty combinations left out), largest first."""
    combined = a.codes.astype(np.int64) * len(b.names) + b.codes
    present, codes = np.unique(combined, return_inverse=True)
    names = np.array([f"{a.names[c // len(b.names)]}{INTERSECTION_SEP}{b.names[c % len(b.names)]}" for c in present])
    sizes = np.bincount(codes, minlength=present.size)
    order = np.lexsort((names, -sizes))
    remap = np.empty_like(order)
    remap[order] = np.arange(order.size)
    return GroupView(f"{a.attribute}{INTERSECTION_SEP}{b.attribute}", remap[codes].astype(np.int32),
                     tuple(str(n) for n in names[order]))
