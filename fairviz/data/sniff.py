"""How a CSV file is written, from its first megabyte: encoding, delimiter, decimal comma and the header's names.

The engines (DuckDB, Spark) read the whole file with these options, so that ``fairviz audit`` reads what the app's
upload reads: Excel's "CSV UTF-8" (a byte-order mark), UTF-16, Latin-1, ``;``/tab/``|`` separated files with decimal
commas, and names that hold commas or quotes (parsed by the ``csv`` module, never split by hand).
"""
from __future__ import annotations

import codecs
import csv
import io
import re
from dataclasses import dataclass

from fairviz.data.model import DataError

SAMPLE_BYTES = 1 << 20              # what the sniffing reads of a file
MAX_HEADER_BYTES = 1 << 20          # a header line longer than this is refused (no engine reads it in bounded memory)
DELIMITERS = (",", ";", "\t", "|")
_DECIMAL_COMMA = re.compile(r"^\s*[-+]?\d*,\d+\s*$")
_NUMBER_COMMA = re.compile(r"^\s*[-+]?(\d+|\d*,\d+)\s*$")          # an integer or a decimal-comma number


@dataclass(frozen=True)
class CsvFormat:
    """The options an engine needs to read the file as the row path does."""

    encoding: str                   # "utf-8", "utf-16" or "latin-1" (what DuckDB and Python both call them)
    delimiter: str
    decimal_comma: bool             # numbers are written 0,5 (only with a delimiter other than ',')
    names: tuple[str, ...]          # the header as the csv module parses it (byte-order mark removed)
    decimal_columns: tuple[int, ...] = ()   # positions of the columns whose sample values are decimal-comma numbers

    @property
    def spark_encoding(self) -> str:
        return {"utf-8": "UTF-8", "utf-16": "UTF-16", "latin-1": "ISO-8859-1"}[self.encoding]


def sniff_csv(path: str, name: str | None = None) -> CsvFormat:
    """The format of the CSV file at ``path`` from its first megabyte; a DataError names what cannot be read."""
    name = name or path
    with open(path, "rb") as handle:
        head = handle.read(SAMPLE_BYTES)
    return sniff_bytes(head, name, complete=len(head) < SAMPLE_BYTES)


def sniff_bytes(head: bytes, name: str, complete: bool = False) -> CsvFormat:
    """The format of CSV bytes (``head``: the file's start; ``complete``: the whole file)."""
    encoding, text = _decode(head, name)
    first_end = text.find("\n")
    if first_end < 0 and not complete or len(text[:first_end].encode("utf-8", "replace")) > MAX_HEADER_BYTES:
        raise DataError(f"'{name}' has a header line longer than {MAX_HEADER_BYTES // (1 << 20)} MB: "
                        "it is not a CSV file with one column name per field.")
    lines = text.splitlines()
    if not complete and len(lines) > 1:
        lines = lines[:-1]                                    # the last line may be cut by the sample's end
    if not lines or not lines[0].strip():
        raise DataError(f"'{name}' is empty: there are no rows to analyse.")
    delimiter = _delimiter(lines)
    rows = list(csv.reader(io.StringIO("\n".join(lines[:200])), delimiter=delimiter))
    names = tuple(rows[0]) if rows else ()
    decimal_columns = ()
    if delimiter != ",":
        decimal_columns = tuple(k for k in range(len(names)) if _decimal_comma([r[k] for r in rows[1:] if k < len(r)]))
    return CsvFormat(encoding, delimiter, bool(decimal_columns), names, decimal_columns)


def _decode(head: bytes, name: str) -> tuple[str, str]:
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16", head[:len(head) - len(head) % 2].decode("utf-16", errors="replace")
    if b"\x00" in head[:4096]:
        raise DataError(f"'{name}' looks like a binary file, not CSV or Parquet.")
    body = head[3:] if head.startswith(codecs.BOM_UTF8) else head
    try:
        return "utf-8", body.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.start >= len(body) - 4:                        # a character cut at the sample's end
            return "utf-8", body[:err.start].decode("utf-8")
    return "latin-1", body.decode("latin-1")


def _delimiter(lines: list[str]) -> str:
    """The delimiter that splits the first lines into the same number of fields (more than one), quotes respected."""
    sample = lines[:50]
    best, best_fields = ",", 1
    for delimiter in DELIMITERS:
        counts = {len(r) for r in csv.reader(io.StringIO("\n".join(sample)), delimiter=delimiter) if r}
        if len(counts) == 1 and (fields := counts.pop()) > best_fields:
            best, best_fields = delimiter, fields
    return best


def _decimal_comma(values: list[str]) -> bool:
    filled = [v for v in values if v.strip()]
    return any(_DECIMAL_COMMA.match(v) for v in filled) and all(_NUMBER_COMMA.match(v) for v in filled)
