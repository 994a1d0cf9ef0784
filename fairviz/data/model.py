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

from fairviz.data.limits import DEFAULT_LIMITS, GroupLimits

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
    weights: np.ndarray | None = field(default=None, repr=False, compare=False)   # rows per entry (weighted data)

    @property
    def sizes(self) -> np.ndarray:
        return _bincount(self.codes, self.weights, len(self.names))

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
    # Weighted data (from fairviz.data.engine's sufficient statistics): entry k stands for weight[k] identical rows
    # (same groups, label and score). None: one entry per row.
    weight: np.ndarray | None = field(default=None, repr=False, compare=False)
    resolution: float = 0.0             # weighted data: 0 = exact scores, else the width of the score cells
    limits: GroupLimits = field(default=DEFAULT_LIMITS, compare=False)   # group-count caps (fairviz.data.limits)

    @property
    def n(self) -> int:
        """Rows represented (the sum of the weights for weighted data)."""
        return int(self.y.size) if self.weight is None else int(self.weight.sum())

    @property
    def weighted(self) -> bool:
        return self.weight is not None

    def rows(self) -> "Predictions":
        """One entry per row: weighted data expanded (``np.repeat``) for the analyses that need rows (knees on all
        points, D*, hover examples, Mann–Whitney). Built once, then kept; unweighted data is returned as is."""
        if self.weight is None:
            return self
        if "__rows__" not in self._intersections:
            w = self.weight
            attributes = {k: GroupView(v.attribute, np.repeat(v.codes, w), v.names) for k, v in self.attributes.items()}
            # the table's columns are the label, score and groups already held above: the rows' frame is only an
            # index (hover labels read "row k" of the expanded, cell-sorted order), so expansion costs no copies
            frame = pd.DataFrame(index=pd.RangeIndex(int(w.sum())))
            self._intersections["__rows__"] = Predictions(
                np.repeat(self.y, w), np.repeat(self.score, w), attributes, frame, self.mapping, self.source,
                self.fingerprint, self.notes, limits=self.limits)
        return self._intersections["__rows__"]

    def with_note(self, note: str, resolution: float | None = None) -> "Predictions":
        return Predictions(self.y, self.score, self.attributes, self.frame, self.mapping, self.source,
                           self.fingerprint, self.notes + (note,), weight=self.weight,
                           resolution=self.resolution if resolution is None else resolution, limits=self.limits)

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
            view = intersection_view(self.attributes[parts[0]], self.attributes[parts[1]], self.weight)
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
        if self.weight is not None:
            return self.rows().with_shuffled_groups(seed)
        rng = np.random.default_rng(seed)
        shuffled = {name: GroupView(view.attribute, rng.permutation(view.codes), view.names)
                    for name, view in self.attributes.items()}
        return Predictions(self.y, self.score, shuffled, self.frame, self.mapping, self.source,
                           f"{self.fingerprint}:shuffled{seed}",
                           self.notes + (f"Group labels randomly permuted (seed {seed}): a null control.",),
                           limits=self.limits)


# ----------------------------------------------------------------------------------------------- reading

# What one upload or CLI read may hold in memory. Checked from metadata *before* anything is decoded (a Parquet
# footer knows its rows, columns and sizes; a CSV its byte size and, from its first megabyte, a row estimate), and
# counted on the columns actually read: pass ``columns`` to read only the mapped ones.
MAX_CELLS = 100_000_000              # rows × columns read (≈ 0.8 GB of float64)
MAX_BYTES = 2 * 1024 ** 3            # estimated in-memory size of the columns read
PREVIEW_ROWS = 10_000                # what the column-mapping form sees before the mapped columns are read
_SAMPLE_BYTES = 1 << 20              # the CSV prefix used to estimate rows per byte


@dataclass(frozen=True)
class TableInfo:
    """What a file holds, from metadata: no row is decoded to know it."""

    name: str
    format: str                      # "parquet" or "csv"
    columns: tuple[str, ...]
    rows: int                        # exact for Parquet, estimated from the first megabyte for CSV
    rows_exact: bool
    file_bytes: int
    column_bytes: dict = field(default_factory=dict)   # column → estimated in-memory bytes (all rows)

    def memory(self, columns: list[str] | tuple[str, ...] | None = None) -> int:
        chosen = self.columns if columns is None else columns
        return int(sum(self.column_bytes.get(c, 8 * self.rows) for c in chosen))

    def check(self, columns: list[str] | tuple[str, ...] | None = None) -> None:
        """Raise a DataError when reading ``columns`` (all when None) would exceed the documented limits."""
        chosen = self.columns if columns is None else tuple(columns)
        about = "" if self.rows_exact else "about "
        if self.rows > MAX_ROWS:
            raise DataError(f"'{self.name}' has {about}{self.rows:,} rows; the limit is {MAX_ROWS:,}. "
                            "Sample it, or aggregate first (the fairviz audit CLI reduces larger files out of core).")
        cells = self.rows * len(chosen)
        what = "its columns" if columns is None else f"the {len(chosen)} chosen columns"
        if cells > MAX_CELLS:
            raise DataError(f"'{self.name}' would expand to {about}{self.rows:,} rows × {len(chosen):,} columns "
                            f"({cells:,} cells) when reading {what}; the limit is {MAX_CELLS:,} cells. "
                            "Read fewer columns (map only the ones you need), or sample the rows.")
        size = self.memory(chosen)
        if size > MAX_BYTES:
            raise DataError(f"'{self.name}' would take about {size / 1024 ** 3:.1f} GB in memory when reading {what}; "
                            f"the limit is {MAX_BYTES / 1024 ** 3:.0f} GB. Read fewer columns, or sample the rows.")


def read_table(source: str | Path | bytes | io.IOBase, name: str | None = None,
               columns: list[str] | tuple[str, ...] | None = None) -> tuple[pd.DataFrame, str]:
    """Read CSV or Parquet from a path or bytes. Returns (frame, fingerprint of the bytes).

    The size is checked from metadata before anything is decoded (``TableInfo.check``), and with ``columns`` only
    those columns are read (a column that is not in the file is reported by the mapping checks, not here)."""
    raw, name, digest = _raw(source, name)
    info = inspect_table(raw, name)
    wanted = None if columns is None else [c for c in dict.fromkeys(columns) if c in info.columns]
    info.check(wanted)
    frame = _parse(raw, name, info, wanted)
    if frame.shape[1] == 0 or frame.shape[0] == 0:
        raise DataError(f"'{name}' has a header but no data rows.")
    if frame.shape[0] > MAX_ROWS:
        raise DataError(f"'{name}' has {frame.shape[0]:,} rows; the limit is {MAX_ROWS:,}. "
                        "Sample it, or aggregate first.")
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame, digest


def read_preview(source: str | Path | bytes | io.IOBase, name: str | None = None,
                 rows: int = PREVIEW_ROWS) -> tuple[pd.DataFrame, str, TableInfo]:
    """The first ``rows`` rows (every column), the file's fingerprint and its metadata: enough for the column
    mapping form, whatever the file's size. Read the mapped columns afterwards with ``read_table(columns=…)``."""
    raw, name, digest = _raw(source, name)
    info = inspect_table(raw, name)
    if info.format == "parquet":
        frame = _parquet_head(raw, name, rows)
    else:
        frame = _parse(raw[:_csv_prefix_end(raw, rows)], name, None, None)
    if frame.shape[1] == 0 or frame.shape[0] == 0:
        raise DataError(f"'{name}' has a header but no data rows.")
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame, digest, info


def inspect_table(raw: bytes, name: str) -> TableInfo:
    """Rows, columns and in-memory size of a CSV or Parquet file from its metadata (nothing decoded)."""
    if _is_parquet(raw, name):
        import pyarrow.parquet as pq
        try:
            meta = pq.ParquetFile(io.BytesIO(raw)).metadata
            schema = meta.schema.to_arrow_schema()
        except Exception as err:  # pyarrow raises many types for a damaged file
            raise DataError(f"'{name}' could not be read as Parquet ({type(err).__name__}).") from None
        rows = int(meta.num_rows)
        encoded = dict.fromkeys(schema.names, 0)
        for r in range(meta.num_row_groups):
            group = meta.row_group(r)
            for c in range(group.num_columns):
                top = group.column(c).path_in_schema.split(".")[0]
                if top in encoded:
                    encoded[top] += group.column(c).total_uncompressed_size
        column_bytes = {f.name: rows * _arrow_width(f.type) + encoded.get(f.name, 0) * (not _fixed(f.type))
                        for f in schema}
        return TableInfo(name, "parquet", tuple(schema.names), rows, True, len(raw), column_bytes)
    if b"\x00" in raw[:4096]:
        raise DataError(f"'{name}' looks like a binary file, not CSV or Parquet.")
    head = raw[:_SAMPLE_BYTES]
    first_line = head.split(b"\n", 1)[0]
    lines = max(head.count(b"\n"), 1)
    rows = max(lines - 1, 1) if len(head) == len(raw) else int(len(raw) / (len(head) / lines))
    text = first_line.decode("utf-8", errors="replace")
    sep = "," if "," in text else next((s for s in ("\t", ";", "|") if s in text), ",")
    names = tuple(c.strip().strip('"') for c in text.rstrip("\r").split(sep))
    per_column = len(raw) / max(len(names), 1)          # text columns: about their bytes; numbers: 8 bytes a row
    column_bytes = {c: int(max(8 * rows, per_column * 1.5)) for c in names}
    return TableInfo(name, "csv", names, rows, len(head) == len(raw), len(raw), column_bytes)


def _raw(source, name: str | None) -> tuple[bytes, str, str]:
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.exists():
            raise DataError(f"File not found: {path}")
        name = name or path.name
        raw = path.read_bytes()
    elif isinstance(source, (bytes, bytearray, memoryview)):
        raw = bytes(source)
    else:
        raw = source.read()
    name = name or "upload"
    if not raw or not raw[:65536].strip() and not raw.strip():
        raise DataError(f"'{name}' is empty: there are no rows to analyse.")
    return raw, name, hashlib.blake2b(raw, digest_size=16).hexdigest()


def _is_parquet(raw: bytes, name: str) -> bool:
    return raw[:4] == b"PAR1" or name.lower().endswith((".parquet", ".pq"))


def _fixed(arrow_type) -> bool:
    try:
        return arrow_type.bit_width > 0
    except ValueError:
        return False


def _arrow_width(arrow_type) -> int:
    """Bytes per row of a column in memory: the fixed width, or 8 (offsets) + the encoded data for variable ones."""
    return max(arrow_type.bit_width // 8, 1) if _fixed(arrow_type) else 8


def _parquet_head(raw: bytes, name: str, rows: int) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        reader = pq.ParquetFile(io.BytesIO(raw))
        batch = next(reader.iter_batches(batch_size=rows), None)
        table = pa.Table.from_batches([batch]) if batch is not None else reader.schema_arrow.empty_table()
        return table.to_pandas()
    except Exception as err:  # noqa: BLE001
        raise DataError(f"'{name}' could not be read as Parquet ({type(err).__name__}).") from None


def _csv_prefix_end(raw: bytes, rows: int) -> int:
    """Byte offset just after the ``rows``-th data line (the whole file when it is shorter)."""
    end = -1
    for _ in range(rows + 1):
        end = raw.find(b"\n", end + 1)
        if end < 0:
            return len(raw)
    return end + 1


def _parse(raw: bytes, name: str, info: TableInfo | None = None, columns: list[str] | None = None) -> pd.DataFrame:
    """Decode the file (only ``columns`` when given). CSV bytes go to pyarrow's parser as bytes, never through one
    Python string of the whole file; odd dialects fall back to pandas' parser on a byte stream."""
    if _is_parquet(raw, name):
        import pyarrow.parquet as pq
        try:
            return _to_pandas(pq.read_table(io.BytesIO(raw), columns=columns))
        except Exception as err:  # pyarrow raises many types for a damaged file
            raise DataError(f"'{name}' could not be read as Parquet ({type(err).__name__}).") from None
    if b"\x00" in raw[:4096]:
        raise DataError(f"'{name}' looks like a binary file, not CSV or Parquet.")
    encoding = "utf-8-sig"
    try:
        raw[:_SAMPLE_BYTES].decode("utf-8")
    except UnicodeDecodeError as err:
        if err.start < min(len(raw), _SAMPLE_BYTES) - 4:      # not merely a character cut at the sample's end
            encoding = "latin-1"
    header = raw[:raw.find(b"\n") if b"\n" in raw else len(raw)].decode(encoding, errors="replace")
    few_commas = _few_commas(header)
    if not few_commas:
        try:                                    # multi-threaded; falls back to pandas' parser on any complaint
            import pyarrow.csv as pacsv
            options = pacsv.ConvertOptions(include_columns=columns) if columns else None
            read = pacsv.ReadOptions(encoding="utf8" if encoding == "utf-8-sig" else "latin1")
            frame = _to_pandas(pacsv.read_csv(io.BytesIO(raw), read_options=read, convert_options=options))
            if frame.columns.size and str(frame.columns[0]).startswith("\ufeff"):
                frame = frame.rename(columns={frame.columns[0]: str(frame.columns[0])[1:]})
            return frame
        except Exception:  # noqa: BLE001 - pyarrow raises several error types for odd files
            pass
    stream = io.TextIOWrapper(io.BytesIO(raw), encoding=encoding, newline="")
    usecols = (lambda c: str(c).strip() in columns) if columns else None
    try:
        return pd.read_csv(stream, sep=None, engine="python", usecols=usecols) if few_commas \
            else pd.read_csv(stream, low_memory=False, usecols=usecols)
    except pd.errors.EmptyDataError:
        raise DataError(f"'{name}' is empty: there are no rows to analyse.") from None
    except (pd.errors.ParserError, csv.Error, UnicodeDecodeError) as err:
        first = str(err).splitlines()[0][:160]
        raise DataError(f"'{name}' could not be parsed as CSV: {first}") from None


def _to_pandas(table) -> pd.DataFrame:
    """Arrow → pandas, releasing each Arrow column as it is converted (peak ≈ one copy, not two)."""
    return table.to_pandas(self_destruct=True, split_blocks=True)


def _few_commas(header: str) -> bool:
    """A header without commas suggests ';' or tab separated text: let pandas sniff the separator."""
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
                      file_fingerprint: str = "", weights: np.ndarray | None = None,
                      limits: GroupLimits | None = None) -> Predictions:
    """Validate ``frame`` under ``mapping``. Raises ``DataError`` listing every blocking problem.

    With ``weights`` (rows per entry: the counts of fairviz.data.engine's table) every message counts rows, and the
    result is weighted data (``Predictions.weight``). ``limits`` caps the groups per attribute
    (``fairviz.data.limits``; the defaults unless given)."""
    limits = limits or DEFAULT_LIMITS
    _check_columns(frame, mapping)
    problems: list[str] = []
    notes: list[str] = []
    w = None if weights is None else np.asarray(weights, dtype=np.int64)
    total = len(frame) if w is None else int(w.sum())

    score = _numeric_scores(frame[mapping.score], mapping.score, problems, w)
    y_raw = frame[mapping.label]
    factorized = {c: _factorize(frame[c]) for c in mapping.groups}     # one hash pass per group column

    missing = score.isna() | y_raw.isna()
    for codes, _ in factorized.values():
        missing |= codes < 0
    keep = ~missing.to_numpy()
    n_missing = _count(~keep, w)
    if n_missing:
        notes.append(f"{n_missing:,} of {total:,} rows dropped for a missing label, score or group value.")
    if not keep.any():
        problems.append("Every row has a missing label, score or group value: nothing is left to analyse.")
        raise DataError(problems)

    score_values = score.to_numpy(dtype=float)[keep]
    w = None if w is None else w[keep]
    _check_score_range(score_values, mapping.score, problems, w)
    y = _binary_labels(y_raw[keep], mapping, problems)
    if problems:                       # group checks on rows that are about to change would only add noise
        raise DataError(problems)
    attributes = _attributes({c: (codes[keep], names) for c, (codes, names) in factorized.items()}, mapping,
                             problems, notes, w)
    if problems:
        raise DataError(problems)

    # Drop rows in groups too small to compare (after validation, so counts are reported).
    small = np.zeros(keep.sum(), dtype=bool)
    for view in attributes.values():
        small |= np.isin(view.codes, np.flatnonzero(view.sizes < MIN_GROUP_SIZE))
    if small.any():
        w = None if w is None else w[~small]
        attributes = {k: _recode(v, ~small, w) for k, v in attributes.items()}
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
                       source=source, fingerprint=fingerprint, notes=tuple(notes), weight=w, limits=limits)


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


def _count(mask: np.ndarray, weights: np.ndarray | None) -> int:
    """Rows where ``mask`` holds (weighted data: the sum of their weights)."""
    mask = np.asarray(mask, dtype=bool)
    return int(mask.sum()) if weights is None else int(weights[mask].sum())


def _bincount(codes: np.ndarray, weights: np.ndarray | None, length: int) -> np.ndarray:
    if weights is None:
        return np.bincount(codes, minlength=length)
    return np.bincount(codes, weights=weights, minlength=length).astype(np.int64)


def _numeric_scores(series: pd.Series, name: str, problems: list[str], weights=None) -> pd.Series:
    if pd.api.types.is_bool_dtype(series):
        problems.append(f"The score column '{name}' holds true/false values; it needs probabilities in [0, 1].")
        return series.astype(float)
    if pd.api.types.is_numeric_dtype(series):
        return series.astype(float)
    numeric = pd.to_numeric(series, errors="coerce")
    text_mask = numeric.isna() & series.notna() & (series.astype(str).str.strip() != "")
    if text_mask.any():
        examples = ", ".join(repr(v) for v in series[text_mask].astype(str).unique()[:3])
        problems.append(f"The score column '{name}' has {_count(text_mask.to_numpy(), weights):,} non-numeric values "
                        f"(e.g. {examples}); scores must be numbers in [0, 1].")
    return numeric


def _check_score_range(score: np.ndarray, name: str, problems: list[str], weights=None) -> None:
    infinite = np.isinf(score)
    if infinite.any():
        problems.append(f"The score column '{name}' has {_count(infinite, weights):,} infinite values; "
                        "scores must be in [0, 1].")
    finite = score[~infinite]
    outside = (finite < 0) | (finite > 1)
    if outside.any():
        outside_rows = _count(outside, None if weights is None else weights[~infinite])
        hint = " They look like logits or raw scores: convert them to probabilities first." \
            if finite.min() < 0 or finite.max() > 1.5 else ""
        problems.append(f"The score column '{name}' has {outside_rows:,} values outside [0, 1] "
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
                notes: list[str], weights: np.ndarray | None = None) -> dict[str, GroupView]:
    attributes = {}
    for col, (codes, names) in groups.items():
        view = _ordered_view(col, codes, names, weights)
        if len(view.names) < 2:
            problems.append(f"The group column '{col}' has a single value ('{view.names[0]}'): fairness compares "
                            "groups, so it needs at least two.")
        attributes[col] = view
    if mapping.intersect and len(mapping.groups) >= 2:
        a, b = mapping.groups[:2]
        (codes_a, names_a), (codes_b, names_b) = groups[a], groups[b]
        joint, pairs = pd.factorize(codes_a * len(names_b) + codes_b)
        joint_names = [f"{names_a[p // len(names_b)]}{INTERSECTION_SEP}{names_b[p % len(names_b)]}" for p in pairs]
        attributes[f"{a}{INTERSECTION_SEP}{b}"] = _ordered_view(f"{a}{INTERSECTION_SEP}{b}", joint, joint_names,
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


def _ordered_view(attribute: str, codes: np.ndarray, names: list[str], weights: np.ndarray | None = None) -> GroupView:
    """A GroupView whose groups are ordered largest first (ties by name); groups with no rows are left out."""
    sizes = _bincount(codes, weights, len(names))
    present = np.flatnonzero(sizes)
    order = present[np.lexsort((np.array(names, dtype=object)[present].astype(str), -sizes[present]))]
    remap = np.full(len(names), -1, dtype=np.int64)
    remap[order] = np.arange(order.size)
    return GroupView(attribute, remap[codes].astype(np.int32), tuple(names[k] for k in order), weights)


def _recode(view: GroupView, keep: np.ndarray, weights: np.ndarray | None = None) -> GroupView:
    return _ordered_view(view.attribute, view.codes[keep], list(view.names), weights)


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
    benefit: str = "positive"           # which prediction helps a person: "negative" for COMPAS (low risk)


def intersection_view(a: GroupView, b: GroupView, weights: np.ndarray | None = None) -> GroupView:
    """Groups of rows sharing a value of ``a`` and of ``b`` (empty combinations left out), largest first."""
    combined = a.codes.astype(np.int64) * len(b.names) + b.codes
    present, codes = np.unique(combined, return_inverse=True)
    names = np.array([f"{a.names[c // len(b.names)]}{INTERSECTION_SEP}{b.names[c % len(b.names)]}" for c in present])
    sizes = _bincount(codes, weights, present.size)
    order = np.lexsort((names, -sizes))
    remap = np.empty_like(order)
    remap[order] = np.arange(order.size)
    return GroupView(f"{a.attribute}{INTERSECTION_SEP}{b.attribute}", remap[codes].astype(np.int32),
                     tuple(str(n) for n in names[order]), weights)
