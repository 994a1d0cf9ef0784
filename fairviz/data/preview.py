"""The engine's bounded preview of a source: enough rows to guess the column roles, bounded in rows, cells and
text bytes; nested columns (lists, structs, maps, binary) named, never decoded; local Parquet read by Arrow with text
as dictionaries (one huge value repeated on every row stays one value). ``fairviz.data.engine`` calls it."""
from __future__ import annotations

import pandas as pd

from fairviz.data.model import DataError

PREVIEW_ROWS = 10_000
PREVIEW_CELLS = 2_000_000           # a wide file's preview reads fewer rows: rows × plain columns stays below this
PREVIEW_TEXT_BYTES = 64 << 20       # the text a preview decodes, all text columns together
PREVIEW_CHARS, PREVIEW_MIN_CHARS = 1_000, 32      # characters read of each text value (a text column's are long)


def first_line(err: BaseException) -> str:
    """An engine error's first line, cut to 200 characters: what a one-line message quotes."""
    text = str(err).strip()
    return text.splitlines()[0][:200] if text else type(err).__name__


def check_plain(plain: list, unread: list[str], name: str) -> None:
    if not plain:
        raise DataError(f"'{name}' has no column of plain values (numbers or text): {', '.join(unread[:5])} hold "
                        "lists, structs, maps or binary values.")


def preview_chars(rows: int, text_columns: int) -> int:
    """Characters read of each text value: all text columns of the preview together stay within the byte budget."""
    return max(PREVIEW_MIN_CHARS, min(PREVIEW_CHARS, PREVIEW_TEXT_BYTES // max(rows * text_columns, 1)))


def parquet_preview(path: str, name: str, rows: int = PREVIEW_ROWS) -> tuple[pd.DataFrame, list[str]]:
    """The first rows of a Parquet file's plain columns, bounded in bytes: text columns read as dictionaries and cut
    to their first characters before they are decoded; plain-encoded values counted from the footer (their decoded
    size), so that a wide or heavy file gives fewer rows. Returns (frame, the names of the columns not read)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    try:
        reader = pq.ParquetFile(path)
        schema = reader.schema_arrow
        plain = [f.name for f in schema if not arrow_nested(f.type)]
        unread = [f.name for f in schema if arrow_nested(f.type)]
        check_plain(plain, unread, name)
        texts = [f.name for f in schema if f.name in plain and arrow_text(f.type)]
        meta = reader.metadata
        per_row = 0.0
        if meta.num_row_groups and meta.num_rows:
            group = meta.row_group(0)
            for c in range(group.num_columns):
                column = group.column(c)
                if column.path_in_schema in plain:
                    per_row += column.total_uncompressed_size / max(group.num_rows, 1)
        rows = int(max(1, min(rows, PREVIEW_CELLS // len(plain), PREVIEW_TEXT_BYTES // max(per_row, 1))))
        reader = pq.ParquetFile(path, read_dictionary=texts)        # text stays dictionary-encoded as on disk
        batch = next(reader.iter_batches(batch_size=rows, columns=plain, use_threads=False), None)
        if batch is None:
            return schema.empty_table().select(plain).to_pandas(), unread
        chars = preview_chars(batch.num_rows, len(texts))
        columns = []
        for field_, column in zip(batch.schema, batch.columns):
            if pa.types.is_dictionary(column.type) and arrow_text(column.type.value_type):
                column = pa.DictionaryArray.from_arrays(
                    column.indices, pc.utf8_slice_codeunits(column.dictionary, 0, chars)).dictionary_decode()
            elif arrow_text(column.type):
                column = pc.utf8_slice_codeunits(column, 0, chars)
            columns.append(column)
        return pa.Table.from_arrays(columns, names=batch.schema.names).to_pandas(), unread
    except DataError:
        raise
    except Exception as err:  # noqa: BLE001 - pyarrow raises many types for a damaged file
        raise DataError(f"'{name}' could not be read as Parquet ({type(err).__name__}: {first_line(err)}).") \
            from None


def arrow_nested(arrow_type) -> bool:
    import pyarrow as pa
    t = arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type
    return (pa.types.is_nested(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t)
            or pa.types.is_fixed_size_binary(t) or pa.types.is_null(t))


def arrow_text(arrow_type) -> bool:
    import pyarrow as pa
    t = arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type
    return pa.types.is_string(t) or pa.types.is_large_string(t) or getattr(pa.types, "is_string_view", bool)(t)
