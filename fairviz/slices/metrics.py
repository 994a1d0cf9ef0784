"""The slice metrics of each task, the score the pruned lattice search ranks slices by, and that score's upper
bound over a slice's refinements (what lets the search leave a branch of the lattice unexpanded).

**Score: SliceLine's** (Sagadeeva and Boehm, SIGMOD 2021). A slice S of |S| rows with error sum e_S, in data of N
rows with mean error ē, scores

    sc(S) = α·(e_S / (|S|·ē) − 1) − (1 − α)·(N / |S| − 1),        α = 0.95,

the relative error above the average, less a penalty that grows as the slice shrinks: a large slice that is a little
worse can outrank a tiny one that is much worse. The rows and errors are the metric's: for a count metric its
denominator rows and numerator events (FPR: the negatives and the false positives; errors count 1 each); for a
regression the rows and Σ|prediction − target|. The score looks for slices where the model is WORSE (a higher
rate); the tests of the slices it evaluates stay two-sided. Only slices with sc > 0 enter the top-k, as in SliceLine.

**Bound.** A refinement of parents P₁…P_d has at most the fewest rows of its parents (|S′| ≤ min |Pᵢ|) and at
most their smallest error sum (e′ ≤ min e_Pᵢ), and no fewer rows than errors for a count metric (or than the
support floor for a regression). At a fixed error sum the score is monotone in |S′| (its derivative has the sign of
(1 − α)N − α·e/ē), and it grows with the error sum, so the largest score any refinement can reach is the larger of
the score at the two ends of the feasible rows with e′ = min e_Pᵢ. A grandchild's rows and errors are at most its
parent's, so a slice left unexpanded bounds every slice under it: the top-k by score is exactly the full
lattice's."""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairviz.data.model import DataError
from fairviz.data.tasks import spec_of
from fairviz.slices.methods import METHODS, MeanMetric, every_metric, method_of

ALPHA = 0.95            # SliceLine's weight of the error term against the size term (the paper's default)
ALL_METRICS = every_metric()


def default_metric(task) -> str:
    """The metric a slice search compares when none is asked for: the task's error metric."""
    return spec_of(task).error_metric


def metric_title(metric: str, task=None) -> str:
    """The metric's title in the task's words (None, or a task without it: the first task that has it)."""
    if task is not None and metric in method_of(task).metrics:
        return method_of(task).metrics[metric].title
    return next(m.metrics[metric] for m in METHODS.values() if metric in m.metrics).title


def check_metric(metric: str, task) -> None:
    metrics = method_of(task).metrics
    if metric not in metrics:
        raise DataError(f"The slice metric '{metric}' does not apply to {task} predictions: choose one of "
                        f"{', '.join(metrics)}.")


def metric_of(task, metric: str):
    """The slice metric ``metric`` of ``task`` (a ``CountMetric`` or a ``MeanMetric``)."""
    check_metric(metric, task)
    return method_of(task).metrics[metric]


def _col(frame, name) -> np.ndarray:
    return np.asarray(frame[name], float)


def _sum(frame, cells) -> np.ndarray:
    return sum(_col(frame, c) for c in cells)


def _rows_and_errors(frame, task: str, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """A slice's rows and error sum as the score reads them: the metric's denominator rows and numerator events
    (count metrics), or the rows and the error sum (a mean metric: Σ|residual|)."""
    m = metric_of(task, metric)
    if isinstance(m, MeanMetric):
        return _col(frame, "n"), _col(frame, m.errors)
    return _sum(frame, m.denominator), _sum(frame, m.numerator)


def parts(frame, task: str, metric: str) -> pd.DataFrame:
    """What the bound of a refinement takes the minimum of over its parents: their rows and error sums."""
    rows, errors = _rows_and_errors(frame, task, metric)
    return pd.DataFrame({"b_rows": rows, "b_errors": errors})


def _score(errors, rows, mean_error: float, all_rows: float, alpha: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = alpha * (errors / (rows * mean_error) - 1) - (1 - alpha) * (all_rows / rows - 1)
    return np.where(rows > 0, out, -np.inf)


def _totals(total: dict, task: str, metric: str) -> tuple[float, float]:
    rows, errors = _rows_and_errors(pd.DataFrame([total]), task, metric)
    return float(rows[0]), float(errors[0])


def score(frame, total: dict, task: str, metric: str, alpha: float = ALPHA) -> np.ndarray:
    """SliceLine's score of each slice; −inf where it has no rows or the data have no errors."""
    all_rows, all_errors = _totals(total, task, metric)
    rows, errors = _rows_and_errors(frame, task, metric)
    if not (all_rows > 0 and all_errors > 0):
        return np.full(len(rows), -np.inf)
    return _score(errors, rows, all_errors / all_rows, all_rows, alpha)


def bound(mins: pd.DataFrame, total: dict, task: str, metric: str, floor: float, alpha: float = ALPHA) -> np.ndarray:
    """The largest score a refinement of parents with these minimum rows and error sums can have (module docstring):
    the score at a fixed error sum is monotone in the rows, so the largest is at an end of the feasible rows."""
    all_rows, all_errors = _totals(total, task, metric)
    if not (all_rows > 0 and all_errors > 0):
        return np.full(len(mins), -np.inf)
    mean_error = all_errors / all_rows
    rows, errors = mins["b_rows"].to_numpy(float), mins["b_errors"].to_numpy(float)
    if isinstance(metric_of(task, metric), MeanMetric):
        fewest = np.minimum(rows, floor)            # an error may be any size: the fewest rows a tested slice has
    else:
        errors = np.minimum(errors, rows)           # an error counts 1: no refinement has more errors than rows
        fewest = errors                             # ... nor fewer rows than errors
    at_fewest = _score(errors, np.maximum(fewest, 1e-300), mean_error, all_rows, alpha)
    at_most = _score(errors, rows, mean_error, all_rows, alpha)
    return np.maximum(np.where(fewest > 0, at_fewest, -np.inf), at_most)
