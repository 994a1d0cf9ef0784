"""JSON-safe values: the one place where NaN becomes null and numpy becomes Python."""
from __future__ import annotations

import math

import numpy as np


def clean(value):
    """A JSON-safe copy: NaN/inf → None, numpy scalars and arrays → Python, tuples → lists, objects with
    ``to_list()`` (intervals) → ``[low, high]``, dict keys → strings."""
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if isinstance(value, np.ndarray):
        return [clean(v) for v in value.tolist()]
    if hasattr(value, "to_list") and callable(value.to_list):
        return clean(value.to_list())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


def nan_if_none(value) -> float:
    """The reverse for plotting: None (undefined) → NaN, so a figure leaves a gap instead of drawing 0."""
    return float("nan") if value is None else float(value)
