"""Validation: a frame under a column mapping → ``Predictions``, or a ``DataError`` with one sentence per problem.
The task's spec validates (``fairviz.data.tasks``: ``TaskSpec.validate``); what every task shares is here (the
mapped columns are in the frame, the roles do not overlap) and in ``fairviz.data.cleaning``.

Rows with a missing label, score or group value are dropped and counted, never lost silently; groups too small to
compare are dropped and named. Missing is the same on every path (``fairviz.data.reading.NA_VALUES``): an empty
value, NA, N/A, NaN, null, None or #N/A (any case) — read from a file or already in a frame; any other text in the
score column is refused, naming the column and examples.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from fairviz.data.cleaning import MIN_GROUP_SIZE
from fairviz.data.limits import DEFAULT_LIMITS, GroupLimits
from fairviz.data.model import ColumnMapping, DataError, Predictions
from fairviz.data.reading import read_table
from fairviz.data.tasks import guess_mapping, spec_of, task_names

__all__ = ["MIN_GROUP_SIZE", "build_predictions", "check_columns", "load_predictions"]


def build_predictions(frame: pd.DataFrame, mapping: ColumnMapping, source: str = "upload",
                      file_fingerprint: str = "", weights: np.ndarray | None = None,
                      limits: GroupLimits | None = None, converted: bool = False) -> Predictions:
    """Validate ``frame`` under ``mapping``. Raises ``DataError`` listing every blocking problem.

    With ``weights`` (rows per entry: the counts of fairviz.data.engine's table) every message counts rows, and the
    result is weighted data (``Predictions.weight``). ``limits`` caps the groups per attribute
    (``fairviz.data.limits``; the defaults unless given). The score is converted to the probability of the positive
    label (the mapping's scale and direction, ``fairviz.data.scales``) unless ``converted`` (the engine's SQL did it),
    and its direction is checked (``fairviz.data.checks``)."""
    limits = limits or DEFAULT_LIMITS
    check_columns(frame, mapping)
    spec = spec_of(mapping)
    if spec.validate is None:
        raise DataError(f"Predictions of the task '{spec.name}' cannot be validated: its spec has no validate.")
    return spec.validate(frame, mapping, source, file_fingerprint, weights, limits, converted)


def load_predictions(path: str | Path, mapping: ColumnMapping | None = None, **mapping_kwargs) -> Predictions:
    """Read and validate a file in one call (the CLI's and the tests' entry point)."""
    frame, digest = read_table(path)
    if mapping is None:
        mapping = guess_mapping(frame)
        if mapping_kwargs:
            mapping = ColumnMapping(**{**mapping.__dict__, **mapping_kwargs})
    return build_predictions(frame, mapping, source=Path(path).name, file_fingerprint=digest)


def check_columns(frame: pd.DataFrame, mapping: ColumnMapping) -> None:
    """Every mapped column is in ``frame`` and the roles do not overlap (the engine checks a schema with it too)."""
    if mapping.task not in task_names():
        raise DataError(f"The task '{mapping.task}' is not one of {', '.join(task_names())}.")
    words = spec_of(mapping).words
    needed = {words.get("label", "label"): [mapping.label],
              words.get("score", "score"): [c for c in (mapping.score, *(m.column for m in mapping.more_scores)) if c],
              "class probability": [c for m in mapping.models() for c in m.class_scores],
              "quantile": list(mapping.quantiles),
              "predicted class": [m.predicted for m in mapping.models() if m.predicted],
              "group": list(mapping.groups)}
    if mapping.text:
        needed["text"] = [mapping.text]
    needed["feature"] = list(mapping.features)
    if mapping.row_id:
        needed["id"] = [mapping.row_id]
    problems = [f"The {role} column '{col}' is not in the file (columns: {_column_list(frame)})."
                for role, cols in needed.items() for col in cols if col not in frame.columns]
    if not mapping.groups:
        problems.append("No group column was chosen: pick at least one column that says which group a row is in.")
    if mapping.label == mapping.score:
        problems.append(f"The label and the score are the same column ('{mapping.label}'); choose two columns.")
    if mapping.label in (m.column for m in mapping.more_scores):
        problems.append(f"The label column '{mapping.label}' is also mapped as a model's score; choose two columns.")
    if mapping.label in (c for m in mapping.models() for c in (*m.class_scores, m.predicted)):
        problems.append(f"The label column '{mapping.label}' is also mapped as a class's probability or the predicted "
                        "class; choose different columns.")
    if mapping.label in mapping.groups or (mapping.score and mapping.score in mapping.groups):
        problems.append("A group column is also the label or the score column; choose different columns.")
    if problems:
        raise DataError(problems)


def _column_list(frame: pd.DataFrame, limit: int = 12) -> str:
    cols = [str(c) for c in frame.columns]
    return ", ".join(cols[:limit]) + (f", … ({len(cols)} in all)" if len(cols) > limit else "")
