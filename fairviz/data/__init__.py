"""Ingest: the data model, reading, role guessing and validation — the public face of ``fairviz.data``.

Callers import from here. Inside: ``model`` (``Predictions``, ``ColumnMapping``, ``GroupView``, ``Sample``,
``DataError``), ``view`` (``View``: model × attribute × class × τ × benefit × reference, ``Predictions.at`` its
table), ``reading`` (CSV and Parquet within documented limits), ``roles`` (which column plays which role, for every
form that maps columns), ``validation`` (a frame under a mapping → ``Predictions``); and, imported by module,
``engine`` (the reduction to counts on DuckDB or Spark), ``samples``, ``limits`` and ``groups``.
"""
from fairviz.data.model import (
    INTERSECTION_SEP,
    ColumnMapping,
    ScoreColumn,
    DataError,
    NotApplicable,
    GroupView,
    Predictions,
    Sample,
    UnknownName,
    intersection_view,
)
from fairviz.data.reading import (
    MAX_BYTES,
    MAX_CELLS,
    MAX_ROWS,
    PREVIEW_ROWS,
    TableInfo,
    inspect_table,
    read_preview,
    read_table,
)
from fairviz.data.roles import (
    guess_forecast_roles,
    guess_positive_label,
    guess_text_roles,
    guess_training_roles,
    label_values,
    quantile_level,
)
from fairviz.data.tasks import guess_mapping
from fairviz.data.validation import MIN_GROUP_SIZE, build_predictions, load_predictions
from fairviz.data.view import View

__all__ = [
    # the data model
    "DataError",
    "NotApplicable",
    "ColumnMapping",
    "ScoreColumn",
    "GroupView",
    "Predictions",
    "Sample",
    "UnknownName",
    "View",
    "INTERSECTION_SEP",
    "intersection_view",
    # reading
    "MAX_ROWS",
    "MAX_CELLS",
    "MAX_BYTES",
    "PREVIEW_ROWS",
    "TableInfo",
    "read_table",
    "read_preview",
    "inspect_table",
    # role guessing
    "guess_mapping",
    "guess_text_roles",
    "guess_training_roles",
    "guess_forecast_roles",
    "quantile_level",
    "label_values",
    "guess_positive_label",
    # validation
    "MIN_GROUP_SIZE",
    "build_predictions",
    "load_predictions",
]
