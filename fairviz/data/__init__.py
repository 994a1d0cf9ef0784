"""Ingest: the data model (``Predictions``, ``ColumnMapping``), reading, role guessing and validation.

Callers import from here; the engine (``fairviz.data.engine``), samples, limits and group views are modules of
this package.
"""
from fairviz.data.model import (
    MAX_ROWS,
    MIN_GROUP_SIZE,
    INTERSECTION_SEP,
    DataError,
    ColumnMapping,
    GroupView,
    Predictions,
    MAX_CELLS,
    MAX_BYTES,
    PREVIEW_ROWS,
    TableInfo,
    read_table,
    read_preview,
    inspect_table,
    guess_mapping,
    label_values,
    guess_positive_label,
    build_predictions,
    load_predictions,
    Sample,
    intersection_view,
)

__all__ = [
    "MAX_ROWS",
    "MIN_GROUP_SIZE",
    "INTERSECTION_SEP",
    "DataError",
    "ColumnMapping",
    "GroupView",
    "Predictions",
    "MAX_CELLS",
    "MAX_BYTES",
    "PREVIEW_ROWS",
    "TableInfo",
    "read_table",
    "read_preview",
    "inspect_table",
    "guess_mapping",
    "label_values",
    "guess_positive_label",
    "build_predictions",
    "load_predictions",
    "Sample",
    "intersection_view",
]
