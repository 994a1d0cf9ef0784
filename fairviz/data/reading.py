"""Reading a CSV or Parquet file, from a path or bytes, within documented limits.

The size is checked from metadata *before* anything is decoded (a Parquet footer knows its rows, columns and sizes;
a CSV its byte size and, from its first megabyte, a row estimate) and counted on the columns actually read: pass
``columns`` to read only the mapped ones. What cannot be read is a ``DataError`` that names why.
"""
from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fairviz.data.model import DataError

# What one upload or CLI read may hold in memory.
MAX_ROWS = 20_000_000                # beyond this a browser session is not the right tool; the CLI says so too
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
    frame = decode_table(raw, name, info, wanted)
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
        frame = decode_table(raw[:_csv_prefix_end(raw, rows)], name, None, None)
    if frame.shape[1] == 0 or frame.shape[0] == 0:
        raise DataError(f"'{name}' has a header but no data rows.")
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame, digest, info


def inspect_table(raw: bytes, name: str) -> TableInfo:
    """Rows, columns and in-memory size of a CSV or Parquet file from its metadata (nothing decoded)."""
    if is_parquet(raw, name):
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


def is_parquet(raw: bytes, name: str) -> bool:
    """Parquet by its magic bytes or its name (the engine asks too)."""
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


def decode_table(raw: bytes, name: str, info: TableInfo | None = None,
                 columns: list[str] | None = None) -> pd.DataFrame:
    """Decode the file (only ``columns`` when given). CSV bytes go to pyarrow's parser as bytes, never through one
    Python string of the whole file; odd dialects fall back to pandas' parser on a byte stream."""
    if is_parquet(raw, name):
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
