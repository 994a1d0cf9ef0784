"""Drawing a training set of m rows whose (class, group) cells follow a condition P' ([5] §3.2).

Target counts are k = round(m·P'). Each cell is drawn from the training pool's rows of that cell: a seeded
random permutation without replacement while k ≤ available, topped up with replacement beyond (the "hybrid"
rule; ``replace=True`` draws everything with replacement, as the paper's text says). A cell that is asked for
rows but has none cannot be sampled: :class:`EmptyCellError`, or with ``on_empty="drop"`` the cell is set to 0
and reported.
"""
from __future__ import annotations

import numpy as np

from fairviz.conditions.distributions import Condition, TrainCells, cell_counts
from fairviz.data import DataError


class EmptyCellError(DataError):
    """A condition asks for rows of a (class, group) cell that the training data do not have."""


def target_counts(joint: np.ndarray, m: int) -> np.ndarray:
    return np.rint(m * np.asarray(joint, dtype=float)).astype(int)


def resample(y: np.ndarray, z: np.ndarray, condition: Condition, m: int, seed: int, replace: bool = False,
             on_empty: str = "raise", classes=None, groups=None) -> tuple[np.ndarray, TrainCells]:
    """Row indices into the pool (y, z) drawn to follow ``condition``; and the cells drawn."""
    y = np.asarray(y)
    z = np.asarray(z)
    n_classes, n_groups = condition.joint.shape
    if m < 1:
        raise DataError(f"m (rows to draw) must be at least 1, got {m}.")
    k = target_counts(condition.joint, m)
    available = cell_counts(y, z, n_classes, n_groups)
    empty = (k > 0) & (available == 0)
    if empty.any():
        names = [f"({_name(classes, c)}, {_name(groups, g)})" for c, g in zip(*np.nonzero(empty))]
        if on_empty != "drop":
            raise EmptyCellError(
                f"{condition.label}: the training data have no rows in cell(s) {', '.join(names[:6])} but the "
                f"condition asks for {int(k[empty].sum())} of them. Choose another condition or allow dropping "
                "empty cells.")
        k = np.where(empty, 0, k)
    rng = np.random.default_rng(seed)
    order = np.argsort(y * n_groups + z, kind="stable")
    starts = np.concatenate([[0], np.cumsum(available.ravel())])
    parts = []
    for cell in range(n_classes * n_groups):
        want = int(k.flat[cell])
        if want == 0:
            continue
        rows = order[starts[cell]:starts[cell + 1]]
        if replace:
            parts.append(rows[rng.integers(0, rows.size, want)])
            continue
        take = rng.permutation(rows)[:want]
        if want > rows.size:
            take = np.concatenate([take, rows[rng.integers(0, rows.size, want - rows.size)]])
        parts.append(take)
    index = rng.permutation(np.concatenate(parts)) if parts else np.zeros(0, dtype=int)
    return index, TrainCells(condition, k, available, empty)


def _name(names, i: int) -> str:
    return str(names[i]) if names is not None else str(i)
