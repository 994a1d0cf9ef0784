"""What a file holds and the limits a read keeps: ``TableInfo`` (from metadata, before anything is decoded),
``CsvDialect``, the reading limits, and the small helpers the Parquet and CSV readers share."""
from __future__ import annotations

from dataclasses import dataclass, field

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
