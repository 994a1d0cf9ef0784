"""Reading a CSV or Parquet file, from a path or bytes, within documented limits — the one row path of fairviz.

The size is checked from metadata *before* anything is decoded (a Parquet footer knows its rows, columns and sizes,
and a bounded sample of its dictionary columns tells how far they expand; a CSV its byte size and, from its first
megabyte, a row estimate) and counted on the columns actually read: pass ``columns`` to read only the mapped ones.
Previews read a bounded number of rows, cells and bytes. What cannot be read is a ``DataError`` that names why.

How a CSV is read (the rules the engine path follows too, see docs/data-formats.md "Reading rules"):

- the encoding is UTF-8 (a byte-order mark is dropped), UTF-16 with its byte-order mark, else Windows-1252 or
  Latin-1; the delimiter is the one of ``,`` ``;`` tab ``|`` that splits the first lines into the most, consistent,
  fields; a decimal comma is recognised in files not separated by commas;
- column names come from the CSV parser (quotes, commas and quotes inside names are the parser's business), with
  surrounding spaces dropped; duplicate, blank or space-equal names are refused, naming them;
- the texts of ``NA_VALUES`` (and empty fields) are missing values in every column;
- a column of numbers that has two texts for one number (``01`` and ``1``, ``1`` and ``1.0``) is kept as text, so
  type inference never merges distinct group codes.
"""
from __future__ import annotations

import csv
import hashlib
import io
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from fairviz.data.model import DataError

# What one upload or CLI read may hold in memory.
MAX_ROWS = 20_000_000                # beyond this a browser session is not the right tool; the CLI says so too
MAX_CELLS = 100_000_000              # rows × columns read (≈ 0.8 GB of float64)
MAX_BYTES = 2 * 1024 ** 3            # estimated in-memory size of the columns read
MAX_COLUMNS = 10_000                 # wider files are refused: no mapping form or audit needs them
MAX_HEADER_BYTES = 1 << 20           # a longer first line is not a CSV header
PREVIEW_ROWS = 10_000                # what the column-mapping form sees before the mapped columns are read
PREVIEW_CELLS = 2_000_000            # … at most this many cells (a wide file previews fewer rows)
PREVIEW_BYTES = 64 * 1024 ** 2       # … and about this many bytes, read and decoded
PREVIEW_CHARS = 200                  # longer texts are cut in the preview (enough to guess a role)
CODE_VALUES = 10_000                 # numeric columns with at most this many values are checked for merged codes
NA_VALUES = ("", "NA", "N/A", "n/a", "NaN", "nan", "-nan", "-NaN", "NULL", "null", "None", "#N/A")
_SAMPLE_BYTES = 1 << 20              # the CSV prefix used to sniff the dialect and estimate rows per byte
_BLOCK_BYTES = 16 << 20              # the CSV parser's block: a row longer than this is refused
_NESTED = {"list": "list", "large_list": "list", "fixed_size_list": "list", "list_view": "list",
           "large_list_view": "list", "struct": "struct", "map": "map", "dense_union": "union",
           "sparse_union": "union", "binary": "binary", "large_binary": "binary", "fixed_size_binary": "binary",
           "binary_view": "binary"}


@dataclass(frozen=True)
class CsvDialect:
    """How a CSV file is written: what the row path and the engines read it with."""

    encoding: str                    # a Python codec name: utf-8, utf-16, cp1252 or latin-1
    delimiter: str
    decimal: str                     # "." or ","
    names: tuple[str, ...]           # the header's names, as the CSV parser reads them, spaces stripped
    quoted_newlines: bool = False    # a quote in the first megabyte: values may span lines


@dataclass(frozen=True)
class TableInfo:
    """What a file holds, from metadata: no row is decoded to know it (beyond a bounded sample of dictionaries)."""

    name: str
    format: str                      # "parquet" or "csv"
    columns: tuple[str, ...]
    rows: int                        # exact for Parquet, estimated from the first megabyte for CSV
    rows_exact: bool
    file_bytes: int
    column_bytes: dict = field(default_factory=dict)   # column → estimated in-memory bytes (all rows)
    dialect: CsvDialect | None = None                  # CSV only
    notes: tuple[str, ...] = ()      # what a preview left out (rows cut for width, columns not decoded)

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
            heavy = max(chosen, key=lambda c: self.column_bytes.get(c, 0), default=None)
            which = f" ('{heavy}' alone about {self.column_bytes[heavy] / 1024 ** 3:.1f} GB decoded)" \
                if heavy is not None and self.column_bytes.get(heavy, 0) > MAX_BYTES / 2 else ""
            raise DataError(f"'{self.name}' would take about {size / 1024 ** 3:.1f} GB in memory when reading {what}"
                            f"{which}; the limit is {MAX_BYTES / 1024 ** 3:.0f} GB. Read fewer columns, or sample "
                            "the rows.")


def read_table(source: str | Path | bytes | io.IOBase, name: str | None = None,
               columns: list[str] | tuple[str, ...] | None = None) -> tuple[pd.DataFrame, str]:
    """Read CSV or Parquet from a path or bytes. Returns (frame, fingerprint of the bytes).

    The size is checked from metadata before anything is decoded (``TableInfo.check``), and with ``columns`` only
    those columns are read (a column that is not in the file is reported by the mapping checks, not here; none of
    them in the file, or an empty selection, is an error — never "every column")."""
    raw, name, digest = _raw(source, name)
    info = inspect_table(raw, name)
    wanted = None if columns is None else chosen_columns(info, columns)
    info.check(wanted)
    frame = decode_table(raw, name, info, wanted)
    if frame.shape[1] == 0 or frame.shape[0] == 0:
        raise DataError(f"'{name}' has a header but no data rows.")
    if frame.shape[0] > MAX_ROWS:
        raise DataError(f"'{name}' has {frame.shape[0]:,} rows; the limit is {MAX_ROWS:,}. "
                        "Sample it, or aggregate first.")
    return frame, digest


def chosen_columns(info: TableInfo, columns) -> list[str]:
    """The asked columns that the file holds (in the asked order, once each); an empty choice is refused."""
    asked = [str(c).strip() for c in dict.fromkeys(columns)]
    if not asked:
        raise DataError(f"No column of '{info.name}' was chosen: choose the columns to read.")
    wanted = [c for c in asked if c in info.columns]
    if not wanted:
        shown = ", ".join(f"'{c}'" for c in asked[:5])
        raise DataError(f"None of the chosen columns ({shown}) is in '{info.name}' "
                        f"(columns: {_listed(info.columns)}).")
    return wanted


def read_preview(source: str | Path | bytes | io.IOBase, name: str | None = None,
                 rows: int = PREVIEW_ROWS) -> tuple[pd.DataFrame, str, TableInfo]:
    """The first rows, the file's fingerprint and its metadata: enough for the column mapping form, whatever the
    file's size. At most ``rows`` rows, ``PREVIEW_CELLS`` cells and about ``PREVIEW_BYTES`` bytes are read; texts are
    cut at ``PREVIEW_CHARS`` characters; list, struct, map and binary columns are named, not decoded (their cells
    read "(list column, not read)"). What was left out is in the returned info's ``notes``. Read the mapped columns
    afterwards with ``read_table(columns=…)``."""
    raw, name, digest = _raw(source, name)
    info = inspect_table(raw, name)
    limit = max(1, min(rows, PREVIEW_CELLS // max(len(info.columns), 1)))
    notes = []
    if limit < min(rows, info.rows):
        notes.append(f"The preview shows the first {limit:,} rows: '{name}' has {len(info.columns):,} columns "
                     f"(at most {PREVIEW_CELLS:,} cells are previewed).")
    if info.format == "parquet":
        frame = _parquet_head(raw, name, limit, notes)
    else:
        frame = _csv_head(raw, name, info.dialect, limit)
    if frame.shape[1] == 0 or frame.shape[0] == 0:
        raise DataError(f"'{name}' has a header but no data rows.")
    return _cut_texts(frame), digest, replace(info, notes=tuple(notes))


def inspect_table(raw: bytes, name: str) -> TableInfo:
    """Rows, columns and in-memory size of a CSV or Parquet file from its metadata (nothing decoded but a bounded
    sample of dictionary columns)."""
    if is_parquet(raw, name):
        return _inspect_parquet(raw, name)
    dialect = sniff_csv(raw, name)
    head = raw[:_SAMPLE_BYTES]
    lines = max(head.count(b"\n"), 1)
    rows = max(lines - 1, 1) if len(head) == len(raw) else int(len(raw) / (len(head) / lines))
    names = dialect.names
    per_column = len(raw) / max(len(names), 1)          # text columns: about their bytes; numbers: 8 bytes a row
    column_bytes = {c: int(max(8 * rows, per_column * 1.5)) for c in names}
    return TableInfo(name, "csv", names, rows, len(head) == len(raw), len(raw), column_bytes, dialect)


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


def is_parquet(raw: bytes, name: str) -> bool:
    """Parquet by its magic bytes or its name (the engine asks too)."""
    return raw[:4] == b"PAR1" or name.lower().endswith((".parquet", ".pq"))


def check_names(names, name: str) -> tuple[str, ...]:
    """Column names as read (spaces around them dropped); duplicate, blank or space-equal names are refused, since
    a mapping could not say which column it means."""
    stripped = tuple(str(c).strip() for c in names)
    if len(stripped) > MAX_COLUMNS:
        raise DataError(f"'{name}' has {len(stripped):,} columns; the limit is {MAX_COLUMNS:,}. Keep the columns "
                        "the audit needs (label, score, groups, and any text, id or features) and upload that.")
    problems = []
    blank = [k + 1 for k, c in enumerate(stripped) if not c]
    if blank:
        problems.append(f"column{'s' if len(blank) > 1 else ''} {_listed(blank)} ha{'ve' if len(blank) > 1 else 's'}"
                        " no name")
    seen: dict[str, list[int]] = {}
    for k, c in enumerate(stripped):
        if c:
            seen.setdefault(c, []).append(k + 1)
    repeated = [f"'{c}' (columns {', '.join(map(str, at[:5]))})" for c, at in seen.items() if len(at) > 1]
    if repeated:
        problems.append(f"the column name{'s' if len(repeated) > 1 else ''} {_listed(repeated)} "
                        f"{'are' if len(repeated) > 1 else 'is'} used twice")
    if problems:
        raise DataError(f"In '{name}', {' and '.join(problems)}: give every column its own name and upload it again.")
    return stripped


def _listed(items, limit: int = 12) -> str:
    items = [str(i) for i in items]
    return ", ".join(items[:limit]) + (f", … ({len(items):,} in all)" if len(items) > limit else "")


# ----------------------------------------------------------------------------------------------- Parquet

def _parquet_file(raw: bytes, name: str, read_dictionary=None):
    import pyarrow.parquet as pq
    try:
        return pq.ParquetFile(io.BytesIO(raw), read_dictionary=read_dictionary)
    except Exception as err:  # pyarrow raises many types for a damaged file
        raise DataError(f"'{name}' could not be read as Parquet ({type(err).__name__}).") from None


def _kind(arrow_type) -> str | None:
    """'list', 'struct', 'map', 'binary' or 'union' for the columns a preview does not decode; None otherwise."""
    import pyarrow as pa
    if pa.types.is_dictionary(arrow_type):
        return _kind(arrow_type.value_type)
    return _NESTED.get(_type_name(arrow_type))


def _type_name(arrow_type) -> str:
    import pyarrow as pa
    for test, label in ((pa.types.is_list, "list"), (pa.types.is_large_list, "large_list"),
                        (pa.types.is_fixed_size_list, "fixed_size_list"), (pa.types.is_struct, "struct"),
                        (pa.types.is_map, "map"), (pa.types.is_union, "dense_union"),
                        (pa.types.is_binary, "binary"), (pa.types.is_large_binary, "large_binary"),
                        (pa.types.is_fixed_size_binary, "fixed_size_binary")):
        if test(arrow_type):
            return label
    name = str(arrow_type)
    return "list_view" if name.startswith(("list_view", "large_list_view")) else \
        "binary_view" if name == "binary_view" else name


def _plain(arrow_type):
    """A dictionary type's value type (what the column decodes to); other types as they are."""
    import pyarrow as pa
    return arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type


def _is_text(arrow_type) -> bool:
    import pyarrow as pa
    arrow_type = _plain(arrow_type)
    return pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) or \
        str(arrow_type) == "string_view"


def _inspect_parquet(raw: bytes, name: str) -> TableInfo:
    reader = _parquet_file(raw, name)
    try:
        meta = reader.metadata
        schema = reader.schema_arrow
    except Exception as err:  # noqa: BLE001
        raise DataError(f"'{name}' could not be read as Parquet ({type(err).__name__}).") from None
    names = check_names(schema.names, name)
    rows = int(meta.num_rows)
    encoded = dict.fromkeys(schema.names, 0)
    values = dict.fromkeys(schema.names, 0)            # leaf values, nulls included (a list's elements)
    dictionary = set()
    owners = _leaf_owners(schema)
    for r in range(meta.num_row_groups):
        group = meta.row_group(r)
        for c in range(group.num_columns):
            chunk = group.column(c)
            top = owners[c] if c < len(owners) else None
            if top in encoded:
                encoded[top] += chunk.total_uncompressed_size
                values[top] += chunk.num_values
                if chunk.has_dictionary_page:
                    dictionary.add(top)
    column_bytes = {}
    for f in schema:
        if _fixed(_plain(f.type)):
            column_bytes[f.name] = rows * _arrow_width(_plain(f.type))
        elif _kind(f.type) in ("list", "struct", "map", "union"):
            column_bytes[f.name] = 8 * rows + 8 * values[f.name] + encoded[f.name]   # every element a Python object
        else:
            column_bytes[f.name] = 8 * rows + encoded[f.name]
    for column, size in _dictionary_sizes(raw, name, schema, dictionary, rows).items():
        column_bytes[column] = max(column_bytes[column], size)
    return TableInfo(name, "parquet", names, rows, True, len(raw),
                     {n: column_bytes[f.name] for n, f in zip(names, schema)})


def _dictionary_sizes(raw: bytes, name: str, schema, columns: set, rows: int, sample: int = 1024) -> dict:
    """Decoded bytes of dictionary-encoded text columns: the mean length of a bounded sample of rows (decoded as
    indices into the dictionary, never expanded) times the rows. The footer's sizes count a dictionary once, not
    once per row that uses it (a 1 MB string repeated in 10,000 rows is 10 GB decoded)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    chosen = [f.name for f in schema if f.name in columns and (_is_text(f.type) or _kind(f.type) == "binary")]
    if not chosen or rows == 0:
        return {}
    reader = _parquet_file(raw, name, read_dictionary=chosen)
    try:
        batch = next(reader.iter_batches(batch_size=min(sample, rows), columns=chosen), None)
    except Exception as err:  # noqa: BLE001
        raise DataError(f"'{name}' could not be read as Parquet ({type(err).__name__}).") from None
    sizes = {}
    for column in chosen if batch is not None else ():
        array = batch.column(column)
        if not pa.types.is_dictionary(array.type) or len(array) == 0:
            continue
        lengths = pc.binary_length(array.dictionary).cast(pa.int64())
        taken = pc.take(lengths, array.indices)
        mean = pc.mean(pc.fill_null(taken, 0)).as_py() or 0.0
        sizes[column] = int(rows * (mean + 8))
    return sizes


def _leaf_owners(schema) -> list[str]:
    """The top-level column of each Parquet leaf column, in the file's order (names may hold dots, so the leaves'
    dotted paths cannot tell)."""
    def leaves(arrow_type) -> int:
        arrow_type = _plain(arrow_type)
        if arrow_type.num_fields == 0:
            return 1
        return sum(leaves(arrow_type.field(k).type) for k in range(arrow_type.num_fields))
    return [f.name for f in schema for _ in range(leaves(f.type))]


def _fixed(arrow_type) -> bool:
    try:
        return arrow_type.bit_width > 0
    except ValueError:
        return False


def _arrow_width(arrow_type) -> int:
    """Bytes per row of a column in memory: the fixed width, or 8 (offsets) + the encoded data for variable ones."""
    return max(arrow_type.bit_width // 8, 1) if _fixed(arrow_type) else 8


def _parquet_head(raw: bytes, name: str, rows: int, notes: list[str]) -> pd.DataFrame:
    """The first rows in batches, text columns kept as dictionaries (never expanded), list, struct, map and binary
    columns named but not decoded, columns whose first rows alone exceed the byte budget left out; stops at
    ``rows`` rows or ``PREVIEW_BYTES`` bytes."""
    import pyarrow as pa
    schema = _parquet_file(raw, name).schema_arrow
    skipped = {f.name: _kind(f.type) for f in schema if _kind(f.type)}
    per_row = _bytes_per_row(_parquet_file(raw, name), schema)
    heavy = {c for c, b in per_row.items() if b * min(rows, 100) > PREVIEW_BYTES and c not in skipped}
    skipped.update({c: "large" for c in heavy})
    read = [f.name for f in schema if f.name not in skipped]
    texts = [f.name for f in schema if f.name in read and _is_text(f.type)]
    row_bytes = sum(per_row.get(c, 8) for c in read) or 1
    batch_size = max(1, min(rows, 1024, PREVIEW_BYTES // row_bytes))
    reader = _parquet_file(raw, name, read_dictionary=texts)
    batches, taken, size = [], 0, 0
    try:
        for batch in reader.iter_batches(batch_size=batch_size, columns=read) if read else ():
            batches.append(batch.slice(0, rows - taken))
            taken += batches[-1].num_rows
            size += batches[-1].nbytes
            if taken >= rows or size >= PREVIEW_BYTES:
                break
        table = pa.Table.from_batches(batches) if batches else None
    except Exception as err:  # noqa: BLE001
        raise DataError(f"'{name}' could not be read as Parquet ({type(err).__name__}).") from None
    if not read:                                           # nothing decodable: the placeholders alone
        taken = min(rows, reader.metadata.num_rows)
    columns = {}
    for f in schema:
        if f.name in skipped:
            continue
        column = table.column(f.name) if table is not None else pa.chunked_array([], f.type)
        if pa.types.is_dictionary(column.type):           # cut the dictionary's values, then decode the indices
            column = pa.chunked_array([_cut_dictionary(chunk) for chunk in column.chunks],
                                      type=pa.string()) if column.num_chunks else pa.chunked_array([], pa.string())
        columns[f.name] = column
    frame = pa.table(columns).to_pandas() if columns else pd.DataFrame(index=range(taken))
    length = len(frame) if columns else taken
    out = {}
    for f in schema:
        if f.name in skipped:
            kind = skipped[f.name]
            out[f.name] = pd.Series([f"({kind} column, not read)" if kind != "large" else "(too large to preview)"]
                                    * length, dtype=object)
        else:
            out[f.name] = frame[f.name].reset_index(drop=True)
    if skipped:
        notes.append(f"Not decoded for the preview: {_listed(repr(c) for c in skipped)} "
                     "(list, struct, map, binary or very large values).")
    if size >= PREVIEW_BYTES and taken < rows:
        notes.append(f"The preview shows the first {taken:,} rows: they fill the preview's "
                     f"{PREVIEW_BYTES // 1024 ** 2} MB.")
    frame = pd.DataFrame(out)
    frame.columns = check_names(schema.names, name)
    return frame


def _cut_dictionary(chunk):
    """A dictionary array → plain text, each value cut before it is repeated (``_cut_texts`` marks the cut)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    values = chunk.dictionary
    if pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type):
        values = values.cast(pa.string())
    cut = pc.utf8_slice_codeunits(values.cast(pa.large_string()), 0, PREVIEW_CHARS + 1).cast(pa.string())  # '…' later
    return pc.take(cut, chunk.indices)


def _bytes_per_row(reader, schema) -> dict:
    """Uncompressed bytes per row of each top-level column in the first row group (its pages, from the footer)."""
    meta = reader.metadata
    if meta.num_row_groups == 0:
        return {}
    group = meta.row_group(0)
    rows = max(group.num_rows, 1)
    sizes: dict[str, int] = {}
    owners = _leaf_owners(schema)
    for c in range(min(group.num_columns, len(owners))):
        sizes[owners[c]] = sizes.get(owners[c], 0) + group.column(c).total_uncompressed_size
    return {c: s / rows for c, s in sizes.items()}


# ----------------------------------------------------------------------------------------------- CSV

def sniff_csv(raw: bytes, name: str) -> CsvDialect:
    """Encoding, delimiter, decimal mark and column names of a CSV file, from its first megabyte."""
    encoding, start = _encoding(raw, name)
    if encoding == "utf-16":
        text = raw[:2 * _SAMPLE_BYTES].decode("utf-16", errors="replace")
    else:
        text = raw[start:start + _SAMPLE_BYTES].decode(encoding, errors="replace")
    first_break = min((i for i in (text.find("\n"), text.find("\r")) if i >= 0), default=-1)
    whole = len(raw) <= _SAMPLE_BYTES
    if first_break < 0 and not whole or first_break > MAX_HEADER_BYTES:
        raise DataError(f"'{name}' has no line break in its first {MAX_HEADER_BYTES // 1024 ** 2} MB: a CSV file's "
                        "first line is its header of column names, and this one is too long to be one.")
    lines = text if whole else text[:text.rfind("\n") + 1] or text
    delimiter, header, rows = _delimiter(lines)
    names = check_names(header, name)
    return CsvDialect(encoding, delimiter, _decimal(rows, delimiter), names, '"' in text)


def _encoding(raw: bytes, name: str) -> tuple[str, int]:
    """The codec and where the text starts (after a UTF-8 byte-order mark)."""
    if raw[:3] == b"\xef\xbb\xbf":
        return "utf-8", 3
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "utf-16", 0
    if b"\x00" in raw[:4096]:
        raise DataError(f"'{name}' looks like a binary file, not CSV or Parquet.")
    sample = raw[:_SAMPLE_BYTES]
    try:
        sample.decode("utf-8")
        return "utf-8", 0
    except UnicodeDecodeError as err:
        if err.start >= len(sample) - 4 and len(raw) > len(sample):   # merely a character cut at the sample's end
            return "utf-8", 0
    try:
        sample.decode("cp1252")
        return "cp1252", 0
    except UnicodeDecodeError:
        return "latin-1", 0


def _delimiter(text: str) -> tuple[str, list[str], list[list[str]]]:
    """The delimiter that splits the first lines into the most fields, the same number on every line."""
    best = None
    for delimiter in (",", ";", "\t", "|"):
        try:
            rows = []
            for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter):
                rows.append(row)
                if len(rows) > 50:
                    break
        except csv.Error:
            continue
        rows = [r for r in rows if r] or [[]]
        header, body = rows[0], rows[1:]
        steady = sum(len(r) == len(header) for r in body) >= 0.9 * len(body)
        rank = (len(header) > 1 and steady, len(header) > 1, len(header) if steady else 0, len(header))
        if best is None or rank > best[0]:
            best = (rank, delimiter, header, body)
    if best is None:
        return ",", [text.splitlines()[0] if text else ""], []
    return best[1], best[2], best[3]


_DECIMAL_COMMA = re.compile(r"^\s*[+-]?\d+,\d+\s*$")
_INTEGER = re.compile(r"^[-+]?\d+$")
_DECIMAL_POINT = re.compile(r"^\s*[+-]?\d*\.\d+\s*$")


def _decimal(rows: list[list[str]], delimiter: str) -> str:
    """',' when a file not separated by commas writes a column's numbers as 0,25 and no column's as 0.25. Judged
    per column, so a text column holding '1.0' among words (a group code) does not decide for the numbers."""
    if delimiter == ",":
        return "."
    width = max((len(r) for r in rows), default=0)
    comma = point = False
    for k in range(width):
        filled = [r[k].strip() for r in rows if k < len(r) and r[k].strip()]
        if filled and all(_DECIMAL_COMMA.match(c) or _INTEGER.match(c) for c in filled):
            comma = comma or any(_DECIMAL_COMMA.match(c) for c in filled)
        if filled and all(_DECIMAL_POINT.match(c) or _INTEGER.match(c) for c in filled):
            point = point or any(_DECIMAL_POINT.match(c) for c in filled)
    return "," if comma and not point else "."


def _csv_options(dialect: CsvDialect, columns=None, text_columns=(), skip_bad_rows: bool = False,
                 as_dictionary: bool = False):
    import pyarrow as pa
    import pyarrow.csv as pacsv
    read = pacsv.ReadOptions(encoding={"utf-8": "utf8", "utf-16": "utf-16"}.get(dialect.encoding, dialect.encoding),
                             column_names=list(dialect.names), skip_rows_after_names=1, block_size=_BLOCK_BYTES)
    parse = pacsv.ParseOptions(delimiter=dialect.delimiter, newlines_in_values=dialect.quoted_newlines,
                               invalid_row_handler=(lambda row: "skip") if skip_bad_rows else None)
    convert = pacsv.ConvertOptions(include_columns=list(columns) if columns else None,
                                   decimal_point=dialect.decimal, null_values=list(NA_VALUES),
                                   strings_can_be_null=True, quoted_strings_can_be_null=True,
                                   column_types={c: pa.dictionary(pa.int32(), pa.string()) if as_dictionary
                                                 else pa.string() for c in text_columns})
    return read, parse, convert


def _read_csv(raw: bytes, name: str, dialect: CsvDialect, columns=None, skip_bad_rows: bool = False):
    """The CSV as an Arrow table, every value typed by the rules of this module. A column whose later rows do not
    fit the type its first rows suggested is read again as text (validation then names text in a score)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    text_columns: list[str] = []
    for _ in range(len(dialect.names) + 1):
        try:
            table = pacsv.read_csv(io.BytesIO(raw), *_csv_options(dialect, columns, text_columns, skip_bad_rows))
            break
        except pa.ArrowInvalid as err:
            column = _conversion_column(str(err), dialect, columns)
            if column is None or column in text_columns:
                raise DataError(f"'{name}' could not be parsed as CSV: {_parse_message(str(err), dialect)}") from None
            text_columns.append(column)
        except (UnicodeDecodeError, ValueError) as err:
            raise DataError(f"'{name}' could not be decoded as {dialect.encoding}: {str(err)[:120]}") from None
    return _codes_as_text(table, lambda names: pacsv.read_csv(
        io.BytesIO(raw), *_csv_options(dialect, names, names, skip_bad_rows, as_dictionary=True)))


def _conversion_column(message: str, dialect: CsvDialect, columns) -> str | None:
    """The column named by pyarrow's "In CSV column #k: CSV conversion error …", if that is the complaint."""
    found = re.search(r"In CSV column #(\d+): CSV conversion error", message)
    if not found:
        return None
    k = int(found.group(1))
    return dialect.names[k] if k < len(dialect.names) else None


def _parse_message(message: str, dialect: CsvDialect) -> str:
    first = message.splitlines()[0]
    found = re.search(r"Expected (\d+) columns, got (\d+)", first)
    if found:
        return (f"a row has {found.group(2)} fields where the header has {found.group(1)} "
                f"(delimiter {dialect.delimiter!r}; a truncated file, or an unquoted delimiter inside a value?)")
    if "straddling" in first or "block" in first.lower():
        return f"a row is longer than {_BLOCK_BYTES // 1024 ** 2} MB"
    return first[:160]


def _codes_as_text(table, read_text):
    """Numeric columns with few values whose texts outnumber their numbers (01 and 1, 1 and 1.0) → text. The texts
    are read again as dictionaries, so only their distinct values are compared."""
    import pyarrow as pa
    import pyarrow.compute as pc
    numeric = [f.name for f in table.schema if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)]
    suspects = [c for c in numeric if _few_values(table.column(c))]
    if not suspects:
        return table
    texts = read_text(suspects)
    for column in suspects:
        chunks = texts.column(column).chunks
        values = pa.concat_arrays([c.dictionary for c in chunks]) if chunks else pa.array([], pa.string())
        distinct = pc.count_distinct(pc.utf8_trim_whitespace(values)).as_py()
        if distinct > pc.count_distinct(table.column(column)).as_py():
            text = pc.utf8_trim_whitespace(texts.column(column).cast(pa.string()))
            table = table.set_column(table.schema.get_field_index(column), column, text)
    return table


def _few_values(column) -> bool:
    """At most ``CODE_VALUES`` distinct values (a first slice with more says no at a fraction of the cost)."""
    import pyarrow.compute as pc
    head = column.slice(0, 4 * CODE_VALUES)
    return pc.count_distinct(head).as_py() <= CODE_VALUES and pc.count_distinct(column).as_py() <= CODE_VALUES


def _csv_head(raw: bytes, name: str, dialect: CsvDialect, rows: int) -> pd.DataFrame:
    """The first ``rows`` rows, from at most ``PREVIEW_BYTES`` bytes of the file (a row cut at the end is left out)."""
    end = _csv_prefix_end(raw, rows, PREVIEW_BYTES)
    table = _read_csv(raw[:end], name, dialect, skip_bad_rows=end < len(raw))
    return _to_pandas(table.slice(0, rows))


def _csv_prefix_end(raw: bytes, rows: int, max_bytes: int | None = None) -> int:
    """Byte offset just after the ``rows``-th data line, at most ``max_bytes`` (the whole file when shorter)."""
    limit = len(raw) if max_bytes is None else min(len(raw), max_bytes)
    end = -1
    for _ in range(rows + 1):
        end = raw.find(b"\n", end + 1, limit)
        if end < 0:
            cut = raw.rfind(b"\n", 0, limit)
            return limit if limit == len(raw) or cut < 0 else cut + 1
    return end + 1


def decode_table(raw: bytes, name: str, info: TableInfo | None = None,
                 columns: list[str] | None = None) -> pd.DataFrame:
    """Decode the file (only ``columns`` when given). CSV bytes go to pyarrow's parser as bytes, never through one
    Python string of the whole file, with the dialect this module sniffs."""
    if is_parquet(raw, name):
        import pyarrow.parquet as pq
        try:
            frame = _to_pandas(pq.read_table(io.BytesIO(raw), columns=columns))
        except Exception as err:  # pyarrow raises many types for a damaged file
            raise DataError(f"'{name}' could not be read as Parquet ({type(err).__name__}).") from None
        frame.columns = [str(c).strip() for c in frame.columns]
        return frame
    dialect = info.dialect if info is not None and info.dialect is not None else sniff_csv(raw, name)
    return _to_pandas(_read_csv(raw, name, dialect, columns))


def _to_pandas(table) -> pd.DataFrame:
    """Arrow → pandas, releasing each Arrow column as it is converted (peak ≈ one copy, not two)."""
    return table.to_pandas(self_destruct=True, split_blocks=True)


def _cut_texts(frame: pd.DataFrame) -> pd.DataFrame:
    """Texts longer than ``PREVIEW_CHARS`` cut (with '…'): a preview shows what a column holds, not whole documents."""
    for column in frame.columns:
        series = frame[column]
        if series.dtype == object or pd.api.types.is_string_dtype(series):
            lengths = series.astype("string").str.len()
            if (lengths > PREVIEW_CHARS).any():
                frame[column] = series.where(~(lengths > PREVIEW_CHARS).fillna(False),
                                             series.astype("string").str.slice(0, PREVIEW_CHARS) + "…")
    return frame
