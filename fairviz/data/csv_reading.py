"""Reading CSV: the one dialect sniffer (encoding, delimiter, decimal comma, names), pyarrow's parser options, its
messages made plain, and numeric codes kept as text."""
from __future__ import annotations

import csv
import io
import re

import pandas as pd

from fairviz.data.model import DataError
from fairviz.data.table_info import (
    _BLOCK_BYTES,
    _SAMPLE_BYTES,
    CODE_VALUES,
    MAX_HEADER_BYTES,
    NA_VALUES,
    PREVIEW_BYTES,
    CsvDialect,
    _to_pandas,
    check_names,
)


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
