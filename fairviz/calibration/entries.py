"""What calibration in the mean and top-label calibration share: checks of arrays of entries, integer weights (an
entry of weight w stands for w identical rows) and group codes, each problem a ``DataError`` with one plain sentence;
the per-group run (all rows, then each group with rows) and its result's group lookup; the weighted mean and the JSON
scalars both results write."""
from __future__ import annotations

from typing import Callable, TypeVar

import numpy as np

from fairviz.data import DataError

OVERALL = "overall"
G = TypeVar("G")


def entry_weights(weight, size: int) -> np.ndarray:
    """Rows per entry as floats (ones without weights); whole non-negative numbers only."""
    if weight is None:
        return np.ones(size)
    w = np.asarray(weight, dtype=float)
    if w.shape != (size,):
        raise DataError(f"The weights have {w.size} values for {size} rows.")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or np.any(w != np.round(w)):
        raise DataError("The weights must be whole numbers of rows, zero or more.")
    return w


def finite_values(values, name: str, size: int | None = None) -> np.ndarray:
    """A numeric column with no missing or infinite value."""
    try:
        out = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"The {name} holds values that are not numbers.") from None
    if size is not None and out.shape[0] != size:
        raise DataError(f"The {name} has {out.shape[0]} values for {size} rows.")
    bad = int(np.count_nonzero(~np.isfinite(out)))
    if bad:
        raise DataError(f"The {name} has {bad:,} missing or infinite values.")
    return out


def group_codes(codes, names, size: int, w: np.ndarray) -> tuple[np.ndarray, tuple[str, ...]]:
    """Group codes checked against the names; at least two groups must have rows."""
    codes = np.asarray(codes)
    names = tuple(str(n) for n in names)
    if codes.shape != (size,):
        raise DataError(f"The group codes have {codes.size} values for {size} rows.")
    if codes.size and (codes.min() < 0 or codes.max() >= len(names)):
        raise DataError("A group code points past the list of group names.")
    codes = codes.astype(np.int64)
    sizes = np.bincount(codes, weights=w, minlength=len(names))
    if np.count_nonzero(sizes > 0) < 2:
        raise DataError("Calibration by group needs at least two groups with rows; the data have "
                        f"{int(np.count_nonzero(sizes > 0))}.")
    return codes, names


def per_group(analyse: Callable[[str, np.ndarray], G], codes: np.ndarray, names: tuple[str, ...],
              w: np.ndarray) -> tuple[G, list[G]]:
    """``analyse(name, mask)`` of every row with weight (``OVERALL``), then of each group that has rows, in order."""
    used = w > 0
    overall = analyse(OVERALL, used)
    return overall, [analyse(name, used & (codes == k)) for k, name in present_groups(codes, names, w)]


def present_groups(codes: np.ndarray, names: tuple[str, ...], w: np.ndarray) -> list[tuple[int, str]]:
    """(code, name) of each group with rows, in the names' order."""
    return [(k, name) for k, name in enumerate(names) if w[codes == k].sum() > 0]


class ByGroup:
    """A per-group result (fields ``overall`` and ``groups``, each row with a ``name``): its rows, overall first, and
    one by name."""

    @property
    def all_groups(self) -> tuple:
        return (self.overall, *self.groups)

    def group(self, name: str):
        return next(g for g in self.all_groups if g.name == name)


def weighted_mean(values: np.ndarray, w: np.ndarray) -> float:
    """The mean of ``values`` with ``w`` rows per entry (NaN without rows)."""
    total = w.sum()
    return float(w @ values / total) if total > 0 else float("nan")


def json_attr(obj, name: str):
    """``obj.name`` as a plain JSON value (None for a missing object or a non-finite number)."""
    return None if obj is None else json_scalar(getattr(obj, name))


def json_scalar(value):
    """numpy scalars as Python's; NaN and infinities as None (strict JSON)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value
