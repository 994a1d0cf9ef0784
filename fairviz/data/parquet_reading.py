"""Reading Parquet within the limits: its metadata (``TableInfo``, dictionary expansion sampled) and a bounded head."""
from __future__ import annotations

import io

import pandas as pd

from fairviz.data.model import DataError
from fairviz.data.table_info import _NESTED, PREVIEW_BYTES, PREVIEW_CHARS, TableInfo, _listed, check_names


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
