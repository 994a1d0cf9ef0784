"""The slice metrics of each task, the score the lattice search ranks slices by, and that score's upper bound over a
slice's refinements (what lets the search leave a branch of the lattice unexpanded).

**Score: the excess.** For a count metric (a numerator x over a denominator m: FPR is false positives over
negatives) the excess of a slice is |x − m·r_rest|, the numerator events it holds beyond (or short of) what the rest
of the data's rate would give it: the extra false positives the slice carries. For a mean metric (the mean residual,
the MAE: a per-row value v summed to s over n rows) it is |s − n·μ_rest|. It grows with the effect and with the
slice's size, as SliceLine's score trades error against size (Sagadeeva and Boehm, SIGMOD 2021). With the totals X
and M and p = X/M, r_rest = (X − x)/(M − m), so the excess is M·|x − m·p| / (M − m).

**Bound.** A refinement S′ of parents P₁…P_d holds at most the smallest parent's numerator events
(x′ ≤ min xᵢ) and at most the smallest parent's other denominator rows (m′ − x′ ≤ min (mᵢ − xᵢ)). Over that
region M·(x′ − m′p)/(M − m′) is largest at m′ = x′ = min xᵢ and M·(m′p − x′)/(M − m′) at x′ = 0, m′ = min (mᵢ − xᵢ):

    excess(S′) ≤ max( M·X(1 − p)/(M − X),  M·Y·p/(M − Y) ),   X = min xᵢ, Y = min (mᵢ − xᵢ).

For a mean metric with positive and negative parts s⁺, s⁻ (s = s⁺ − s⁻) and n′ ≤ N_ub = min nᵢ:
excess(S′) ≤ N·max(S⁺ + N_ub·max(−μ, 0), S⁻ + N_ub·max(μ, 0)) / (N − N_ub), S± = min s±ᵢ. Both bounds grow with
the parents' parts, and a grandchild's parts are at most its parent's, so a slice left unexpanded bounds every
slice under it: the top-k by excess is exactly the full lattice's."""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairviz.data.model import DataError

# binary: metric → (numerator cells, denominator cells, title)
SLICE_METRICS = {
    "error_rate": (("fp", "fn"), ("tp", "fp", "fn", "tn"), "error rate"),
    "fpr": (("fp",), ("fp", "tn"), "false positive rate"),
    "fnr": (("fn",), ("fn", "tp"), "false negative rate"),
    "selection_rate": (("tp", "fp"), ("tp", "fp", "fn", "tn"), "selection rate"),
}
MULTICLASS_METRICS = {"error_rate": (("errors",), ("n",), "error rate (predicted class ≠ label)")}
# regression: metric → (the per-row value's sum, title); the value's square sums to residual_sq for both
REGRESSION_METRICS = {"mean_residual": ("residual_sum", "mean residual (prediction − target)"),
                      "mae": ("abs_residual_sum", "mean absolute error")}
TASK_METRICS = {"binary": SLICE_METRICS, "multiclass": MULTICLASS_METRICS, "regression": REGRESSION_METRICS}
DEFAULT_METRIC = {"binary": "fpr", "multiclass": "error_rate", "regression": "mean_residual"}
ALL_METRICS = tuple(dict.fromkeys([*SLICE_METRICS, *MULTICLASS_METRICS, *REGRESSION_METRICS]))


def metric_title(metric: str, task: str = "binary") -> str:
    table = TASK_METRICS.get(task, SLICE_METRICS)
    if metric not in table:
        table = next(t for t in TASK_METRICS.values() if metric in t)
    return table[metric][-1]


def check_metric(metric: str, task: str) -> None:
    if metric not in TASK_METRICS[task]:
        raise DataError(f"The slice metric '{metric}' does not apply to {task} predictions: choose one of "
                        f"{', '.join(TASK_METRICS[task])}.")


def _col(frame, name) -> np.ndarray:
    return np.asarray(frame[name], float)


def _sum(frame, cells) -> np.ndarray:
    return sum(_col(frame, c) for c in cells)


def parts(frame, task: str, metric: str) -> pd.DataFrame:
    """What the bound of a refinement takes the minimum of over its parents."""
    if task == "regression":
        value, absolute = _col(frame, REGRESSION_METRICS[metric][0]), _col(frame, "abs_residual_sum")
        positive = (absolute + value) / 2 if metric == "mean_residual" else absolute
        negative = (absolute - value) / 2 if metric == "mean_residual" else np.zeros_like(absolute)
        return pd.DataFrame({"b_pos": positive, "b_neg": negative, "b_n": _col(frame, "n")})
    num, den, _ = TASK_METRICS[task][metric]
    x = _sum(frame, num)
    return pd.DataFrame({"b_x": x, "b_y": _sum(frame, den) - x})


def excess(frame, total: dict, task: str, metric: str) -> np.ndarray:
    """|slice sum − slice size × the rest's rate or mean|; NaN where the slice or the rest is empty."""
    if task == "regression":
        s, m = _col(frame, REGRESSION_METRICS[metric][0]), _col(frame, "n")
        big_s, big_m = total[REGRESSION_METRICS[metric][0]], total["n"]
    else:
        num, den, _ = TASK_METRICS[task][metric]
        s, m = _sum(frame, num), _sum(frame, den)
        big_s, big_m = sum(total[c] for c in num), sum(total[c] for c in den)
    rest = big_m - m
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.abs(s - m * (big_s - s) / rest)
    return np.where((m > 0) & (rest > 0), out, np.nan)


def bound(mins: pd.DataFrame, total: dict, task: str, metric: str) -> np.ndarray:
    """The largest excess any refinement of parents with these minimum parts can have (module docstring)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if task == "regression":
            big_n = total["n"]
            mu = total[REGRESSION_METRICS[metric][0]] / big_n
            n_ub = mins["b_n"].to_numpy(float)
            top = np.maximum(mins["b_pos"].to_numpy(float) + n_ub * max(-mu, 0.0),
                             mins["b_neg"].to_numpy(float) + n_ub * max(mu, 0.0))
            out = big_n * top / (big_n - n_ub)
            return np.where(big_n - n_ub > 0, out, np.inf)
        num, den, _ = TASK_METRICS[task][metric]
        big_x, big_m = sum(total[c] for c in num), sum(total[c] for c in den)
        if big_m <= 0:
            return np.full(len(mins), np.inf)
        p = big_x / big_m
        x, y = mins["b_x"].to_numpy(float), mins["b_y"].to_numpy(float)
        up = np.where(big_m - x > 0, big_m * x * (1 - p) / (big_m - x), np.inf)
        down = np.where(big_m - y > 0, big_m * y * p / (big_m - y), np.inf)
        return np.maximum(up, down)
