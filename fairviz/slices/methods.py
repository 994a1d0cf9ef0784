"""What the slice search reads and computes for each task, declared once per task (``SliceMethod``, keyed by the
registry's names): the per-slice sums, how a row adds to them (from a ``Predictions``, or as SQL on the engine), the
slice metrics and the descriptive columns of a slice. The search (``counts``, ``sql``, ``metrics``, ``analysis``)
asks this record and the task's spec (``fairviz.data.tasks``) and never compares task names: a fourth task's slices
are one more entry in ``METHODS``.

A metric is a rate of counted events (``CountMetric``: Fisher's exact test, SliceLine's error count) or the mean of a
per-row value (``MeanMetric``: Welch's t-test from the sums and sums of squares)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from fairviz.data.model import DataError
from fairviz.data.tasks import BINARY, MULTICLASS, REGRESSION

ECE_BINS = 10                   # equal-width score bins of the per-slice expected calibration error
GAPS = tuple(f"gap{b}" for b in range(ECE_BINS))      # Σ (label − score) over a slice's rows in score bin b


@dataclass(frozen=True)
class CountMetric:
    """A rate: the events summed in ``numerator`` over the rows summed in ``denominator`` (an event counts 1)."""

    numerator: tuple[str, ...]
    denominator: tuple[str, ...]
    title: str


@dataclass(frozen=True)
class MeanMetric:
    """The mean of a per-row value: its sum ``column``, its square's sum ``square``; SliceLine's score ranks by the
    non-negative error sum ``errors``."""

    column: str
    title: str
    square: str = "residual_sq"
    errors: str = "abs_residual_sum"


@dataclass(frozen=True)
class SliceMethod:
    """One task's slices. ``counts``: the per-slice sums (``n`` first); ``metrics``: the slice metrics, by key;
    ``row_counts(pred, threshold)``: each entry's contribution to the counts; ``row_sql(y, s, dialect, threshold,
    label, predicted)``: the engine's per-row columns, each count's summand and the condition of a usable row;
    ``describe(out, table)``: the slice's descriptive columns; ``derived(frame)``: the counts the query leaves to be
    computed from its sums. ``usable``: what a row needs (the note on rows left out), ``empty``: the error when no
    row has it; ``reads_score``/``reads_predicted``: the columns the engine reads (a predicted class compared with the
    label as text); ``condition``: how the method sentence says where a count metric is taken."""

    counts: tuple[str, ...]
    metrics: dict[str, CountMetric | MeanMetric]
    row_counts: Callable[..., dict]
    row_sql: Callable[..., tuple[str, dict[str, str], str]]
    describe: Callable[[pd.DataFrame, pd.DataFrame], None]
    usable: str
    empty: str
    derived: Callable[[pd.DataFrame], pd.DataFrame] | None = None
    reads_score: bool = True
    reads_predicted: bool = False
    condition: str = ""


def rate(numerator, denominator) -> np.ndarray:
    out = np.full(np.shape(numerator), np.nan)
    np.divide(numerator, denominator, out=out, where=np.asarray(denominator) > 0)
    return out


def summed(frame_or_dict, cells) -> np.ndarray:
    return sum(np.asarray(frame_or_dict[c], float) for c in cells)


def _weight(pred) -> np.ndarray:
    return np.ones(len(pred.y)) if pred.weight is None else np.asarray(pred.weight, float)


# ---- a decision at τ: the confusion cells, and the calibration sums per score bin

CONFUSION_METRICS = {
    "error_rate": CountMetric(("fp", "fn"), ("tp", "fp", "fn", "tn"), "error rate"),
    "fpr": CountMetric(("fp",), ("fp", "tn"), "false positive rate"),
    "fnr": CountMetric(("fn",), ("fn", "tp"), "false negative rate"),
    "selection_rate": CountMetric(("tp", "fp"), ("tp", "fp", "fn", "tn"), "selection rate"),
}


def _confusion_rows(pred, threshold: float) -> dict:
    weight, score = _weight(pred), np.asarray(pred.score, float)
    y = np.asarray(pred.y, float)
    d = (score >= threshold).astype(float)
    out = {"n": weight, "tp": weight * y * d, "fp": weight * (1 - y) * d, "fn": weight * y * (1 - d),
           "tn": weight * (1 - y) * (1 - d), "score_sum": weight * score, "label_sum": weight * y}
    score_bin = np.minimum(np.floor(score * ECE_BINS), ECE_BINS - 1)
    for b, name in enumerate(GAPS):
        out[name] = np.where(score_bin == b, weight * (y - score), 0.0)
    return out


def _confusion_sql(y: str, s: str, dialect, threshold: float, label: str = "", predicted: str = ""):
    ok = f"{y} IN (0, 1) AND {s} IS NOT NULL AND NOT {dialect.is_nan(s)} AND {s} >= 0 AND {s} <= 1"
    columns = (f"CASE WHEN {y} = 1 THEN 1 ELSE 0 END AS y,\n"
               f"         CASE WHEN {s} >= {float(threshold)!r} THEN 1 ELSE 0 END AS d,\n"
               f"         CASE WHEN {ok} THEN {s} ELSE 0 END AS s,\n"
               f"         CASE WHEN {ok} THEN LEAST(FLOOR({s} * {ECE_BINS}), {ECE_BINS - 1}) ELSE -1 END AS bin")
    # n, Σ label and Σ score follow from these (``_confusion_derived``): fewer sums, a faster query
    sums = {"tp": "ok * y * d", "fp": "ok * (1 - y) * d", "fn": "ok * y * (1 - d)", "tn": "ok * (1 - y) * (1 - d)"}
    sums.update({gap: f"CASE WHEN bin = {b} THEN y - s ELSE 0 END" for b, gap in enumerate(GAPS)})
    return columns, sums, ok


def _confusion_derived(frame: pd.DataFrame) -> pd.DataFrame:
    """n, Σ label and Σ score from the query's cells: n = tp + fp + fn + tn, Σ label = tp + fn,
    Σ score = Σ label − Σ_b Σ (label − score)."""
    frame = frame.copy()
    cells = {c: pd.to_numeric(frame[c]).astype(float).fillna(0.0) for c in ("tp", "fp", "fn", "tn", *GAPS)}
    frame["n"] = cells["tp"] + cells["fp"] + cells["fn"] + cells["tn"]
    frame["label_sum"] = cells["tp"] + cells["fn"]
    frame["score_sum"] = frame["label_sum"] - sum(cells[g] for g in GAPS)
    return frame


def _describe_confusion(out: pd.DataFrame, t: pd.DataFrame) -> None:
    n = t["n"].to_numpy(float)
    for name, metric in CONFUSION_METRICS.items():
        out[name] = rate(summed(t, metric.numerator), summed(t, metric.denominator))
    out["mean_residual"] = rate(t["label_sum"].to_numpy(float) - t["score_sum"].to_numpy(float), n)
    # calibration in the large, |mean label − mean score| (a one-bin ECE; the key is kept)
    out["calibration_gap"] = np.abs(out["mean_residual"])
    # the expected calibration error over equal-width score bins: Σ_b |Σ_{rows in b} (label − score)| / n
    out["ece"] = rate(sum(np.abs(t[g].to_numpy(float)) for g in GAPS), n)


# ---- a numeric target: the residual r = prediction − target, its sum, square and absolute value

RESIDUAL_METRICS = {"mean_residual": MeanMetric("residual_sum", "mean residual (prediction − target)"),
                    "mae": MeanMetric("abs_residual_sum", "mean absolute error")}


def _residual_rows(pred, threshold: float) -> dict:
    weight = _weight(pred)
    residual = np.asarray(pred.score, float) - np.asarray(pred.y, float)
    return {"n": weight, "residual_sum": weight * residual, "residual_sq": weight * residual ** 2,
            "abs_residual_sum": weight * np.abs(residual)}


def _residual_sql(y: str, s: str, dialect, threshold: float, label: str = "", predicted: str = ""):
    # x − x = 0 is false for NULL, NaN and ±inf alike (on DuckDB and Spark)
    ok = f"{y} - {y} = 0 AND {s} - {s} = 0"
    columns = f"CASE WHEN {ok} THEN {s} - {y} ELSE 0 END AS r"
    sums = {"n": "ok", "residual_sum": "r", "residual_sq": "r * r", "abs_residual_sum": "ABS(r)"}
    return columns, sums, ok


def _describe_residuals(out: pd.DataFrame, t: pd.DataFrame) -> None:
    n = t["n"].to_numpy(float)
    residual, absolute, square = (t[c].to_numpy(float) for c in ("residual_sum", "abs_residual_sum", "residual_sq"))
    out["mean_residual"], out["mae"], out["rmse"] = rate(residual, n), rate(absolute, n), np.sqrt(rate(square, n))


# ---- a predicted class: right or wrong, and its confidence

CLASS_ERROR_METRICS = {"error_rate": CountMetric(("errors",), ("n",), "error rate (predicted class ≠ label)")}


def _class_rows(pred, threshold: float) -> dict:
    if pred.predicted is None:
        raise DataError("Multiclass slices need the predicted class (map a predicted-class column or the "
                        "class probabilities).")
    weight, score = _weight(pred), np.asarray(pred.score, float)
    correct = (np.asarray(pred.predicted) == np.asarray(pred.y)).astype(float)
    return {"n": weight, "errors": weight * (1 - correct), "score_sum": weight * np.nan_to_num(score),
            "correct_sum": weight * correct}


def _class_sql(y: str, s: str, dialect, threshold: float, label: str = "", predicted: str = ""):
    """A row is right when its label and predicted class read the same as text; its confidence (``s``, when mapped)
    is summed where it is a finite number."""
    ok = f"{label} IS NOT NULL AND {predicted} IS NOT NULL"
    right = f"CAST({label} AS {dialect.text}) = CAST({predicted} AS {dialect.text})"
    confidence = f"CASE WHEN {s} - {s} = 0 THEN {s} ELSE 0 END" if s else "0"
    columns = (f"CASE WHEN {ok} AND {right} THEN 1 ELSE 0 END AS c,\n"
               f"         CASE WHEN {ok} THEN {confidence} ELSE 0 END AS s")
    sums = {"n": "ok", "errors": "ok * (1 - c)", "score_sum": "s", "correct_sum": "c"}
    return columns, sums, ok


def _describe_class_errors(out: pd.DataFrame, t: pd.DataFrame) -> None:
    n = t["n"].to_numpy(float)
    out["error_rate"] = rate(summed(t, ("errors",)), n)
    out["mean_confidence"] = rate(t["score_sum"].to_numpy(float), n)
    out["calibration_gap"] = np.abs(out["mean_confidence"] - rate(t["correct_sum"].to_numpy(float), n))


METHODS: dict[str, SliceMethod] = {
    BINARY.name: SliceMethod(
        counts=("n", "tp", "fp", "fn", "tn", "score_sum", "label_sum", *GAPS), metrics=CONFUSION_METRICS,
        row_counts=_confusion_rows, row_sql=_confusion_sql, describe=_describe_confusion,
        derived=_confusion_derived, usable="a 0/1 label or a score in [0, 1]",
        empty="No row has a 0/1 label and a score in [0, 1]: check the label and score columns.",
        condition="at τ = {tau:g}, "),
    REGRESSION.name: SliceMethod(
        counts=("n", "residual_sum", "residual_sq", "abs_residual_sum"), metrics=RESIDUAL_METRICS,
        row_counts=_residual_rows, row_sql=_residual_sql, describe=_describe_residuals,
        usable="a finite target and prediction",
        empty="No row has a numeric target and prediction: check the label and score columns."),
    MULTICLASS.name: SliceMethod(
        counts=("n", "errors", "score_sum", "correct_sum"), metrics=CLASS_ERROR_METRICS,
        row_counts=_class_rows, row_sql=_class_sql, describe=_describe_class_errors,
        usable="a label and a predicted class",
        empty="No row has a label and a predicted class: check the label and predicted columns.",
        reads_score=False, reads_predicted=True, condition="(predicted class ≠ label), "),
}


def method_of(task) -> SliceMethod:
    """The slice method of ``task`` (a name, or anything with a ``task``); a DataError when its slices are not
    searched."""
    name = task if isinstance(task, str) else getattr(task, "name", None) or getattr(task, "task")
    if name not in METHODS:
        raise DataError(f"Slices cover {', '.join(METHODS)} predictions (got {name}).")
    return METHODS[name]


def every_metric() -> tuple[str, ...]:
    """Every task's slice metrics, each once, in the registry's order."""
    return tuple(dict.fromkeys(m for method in METHODS.values() for m in method.metrics))
