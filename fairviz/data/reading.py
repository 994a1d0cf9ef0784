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

import hashlib
import io
from dataclasses import replace
from pathlib import Path

import pandas as pd

# the parts, re-exported: callers import the reading names from here
from fairviz.data.csv_reading import _csv_head, _read_csv, sniff_csv  # noqa: F401
from fairviz.data.model import DataError
from fairviz.data.parquet_reading import _inspect_parquet, _parquet_head  # noqa: F401
from fairviz.data.table_info import (  # noqa: F401
    _SAMPLE_BYTES,
    CODE_VALUES,
    MAX_BYTES,
    MAX_CELLS,
    MAX_COLUMNS,
    MAX_HEADER_BYTES,
    MAX_ROWS,
    NA_VALUES,
    PREVIEW_BYTES,
    PREVIEW_CELLS,
    PREVIEW_CHARS,
    PREVIEW_ROWS,
    CsvDialect,
    TableInfo,
    _cut_texts,
    _listed,
    _to_pandas,
    check_names,
)


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


