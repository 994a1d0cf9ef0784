"""How a CSV file is written, from its first megabyte: encoding, delimiter, decimal comma and the header's names.

The engines (DuckDB, Spark) read the whole file with these options, so that ``fairviz audit`` reads what the app's
upload reads: Excel's "CSV UTF-8" (a byte-order mark), UTF-16, Latin-1, ``;``/tab/``|`` separated files with decimal
commas, and names that hold commas or quotes (parsed by the ``csv`` module, never split by hand).
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from fairviz.data import reading
from fairviz.data.model import DataError

SAMPLE_BYTES = 1 << 20              # what the sniffing reads of a file
_DECIMAL_COMMA = re.compile(r"^\s*[-+]?\d*,\d+\s*$")
_NUMBER_COMMA = re.compile(r"^\s*[-+]?(\d+|\d*,\d+)\s*$")          # an integer or a decimal-comma number


@dataclass(frozen=True)
class CsvFormat:
    """The options an engine needs to read the file as the row path does."""

    encoding: str                   # "utf-8", "utf-16", "cp1252" or "latin-1" (Python's names; DuckDB reads no
                                    # cp1252, so the DuckDB runner transcodes such a file to UTF-8 first)
    delimiter: str
    decimal_comma: bool             # numbers are written 0,5 (only with a delimiter other than ',')
    names: tuple[str, ...]          # the header as the csv module parses it (byte-order mark removed)
    decimal_columns: tuple[int, ...] = ()   # positions of the columns whose sample values are decimal-comma numbers

    @property
    def spark_encoding(self) -> str:
        return {"utf-8": "UTF-8", "utf-16": "UTF-16", "cp1252": "windows-1252", "latin-1": "ISO-8859-1"}[self.encoding]


def sniff_csv(path: str, name: str | None = None) -> CsvFormat:
    """The format of the CSV file at ``path`` from its first megabyte; a DataError names what cannot be read."""
    name = name or path
    with open(path, "rb") as handle:
        head = handle.read(SAMPLE_BYTES)
    return sniff_bytes(head, name, complete=len(head) < SAMPLE_BYTES)


def sniff_bytes(head: bytes, name: str, complete: bool = False) -> CsvFormat:
    """The format of CSV bytes (``head``: the file's start; ``complete``: the whole file), by the row path's rules
    (``fairviz.data.reading.sniff_csv``: one set of rules for the app and every engine); the engines add the
    positions of the decimal-comma columns, which they convert themselves."""
    if not head.strip():
        raise DataError(f"'{name}' is empty: there are no rows to analyse.")
    # one byte past the sample tells the row path's sniffer that the file goes on (its last line may be cut)
    dialect = reading.sniff_csv(head if complete else head[:SAMPLE_BYTES] + b" ", name)
    if not dialect.names:
        raise DataError(f"'{name}' is empty: there are no rows to analyse.")
    decimal_columns = ()
    if dialect.decimal == ",":
        text = head.decode(dialect.encoding, errors="replace").lstrip("\ufeff")
        lines = text.splitlines()[:200] if complete else text.splitlines()[:-1][:200]
        rows = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=dialect.delimiter))[1:]
        decimal_columns = tuple(k for k in range(len(dialect.names))
                                if _decimal_comma([r[k] for r in rows if k < len(r)]))
    return CsvFormat(dialect.encoding, dialect.delimiter, bool(decimal_columns), dialect.names, decimal_columns)


def _decimal_comma(values: list[str]) -> bool:
    filled = [v for v in values if v.strip()]
    return any(_DECIMAL_COMMA.match(v) for v in filled) and all(_NUMBER_COMMA.match(v) for v in filled)
