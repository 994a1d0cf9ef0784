"""Two models on the same rows, by paired errors: per group, does the second model err less (a numeric target's MAE
and MSE; a model of classes' error rate, the share of rows whose predicted class is not the label) or less
one-sidedly (bias, mean ŷ − y), and does it narrow the gap between a group and the reference group?

Each difference is a mean of per-row paired differences, so its test is the paired t-test on those rows: for a
group's MAE, d = |ŷ_b − y| − |ŷ_a − y| and MAE_b − MAE_a = mean(d); for bias d = ŷ_b − ŷ_a; for MSE the squared
errors'; for the error rate d = [pred_b ≠ y] − [pred_a ≠ y] (its paired t-test is McNemar's test on the rows where
the two models disagree, in its normal form). A gap's change, (metric_g − metric_ref)_b − (metric_g − metric_ref)_a = mean_g(d) − mean_ref(d), compares
two independent groups' d: Welch's t-test. Both are exact in a single pass over the rows (no resampling, so 1M rows
cost milliseconds) and rest on the normal approximation of a mean; a group under ``SMALL`` rows says so. Entries may
stand for several identical rows (the engine's counts): the sums are weighted by them. Benjamini–Hochberg adjusts
every p-value of the comparison together.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import stats as sps

from fairviz.compare.results import CompareParams, Difference, two_models
from fairviz.core import stats
from fairviz.core.serialize import clean
from fairviz.data.model import DataError, Predictions
from fairviz.data.tasks import spec_of, task_names

ERROR_METRICS = ("mae", "bias", "mse")
GAP_METRICS = {"mae": "mae_gap", "bias": "bias_gap", "error_rate": "error_rate_gap"}
LOWER_IS_BETTER = {"mae": True, "mse": True, "error_rate": True}   # bias and the gaps: closer to 0 is better
SMALL = 30                      # below this many rows a t-interval leans on normality more than on the data
ALL = "All rows"
PAIRED_T, WELCH_T = "paired t-test on the rows", "Welch's t-test on the rows' paired differences"


@dataclass(frozen=True)
class ErrorComparison:
    attribute: str
    reference: str
    model_a: str
    model_b: str
    params: CompareParams
    group_sizes: dict[str, int]
    table: pd.DataFrame                   # one row per model × group (the first rows: every row)
    differences: tuple[Difference, ...]
    units: str | None = None
    notes: tuple[str, ...] = ()
    fingerprint: str = ""
    task: str = ""                        # the compared data's task (the JSON says which)

    @property
    def name(self) -> str:
        return f"{self.model_a}_vs_{self.model_b}"

    def difference(self, metric: str, group: str | None = None) -> Difference:
        for d in self.differences:
            if d.metric == metric and d.group == group:
                return d
        raise KeyError(f"no {metric} difference for {group!r}")

    def to_dict(self, readings: list[str] = ()) -> dict:
        return clean({
            "task": self.task, "model_a": self.model_a, "model_b": self.model_b,
            "direction": "model_b minus model_a", "attribute": self.attribute, "reference": self.reference,
            "alpha": self.params.alpha, "tests": len(self.differences), "units": self.units,
            "multiple_testing": "Benjamini–Hochberg over every difference below",
            "differences": {d.key: d.to_dict() for d in self.differences},
            "table": self.table.to_dict(orient="records"), "readings": list(readings), "notes": list(self.notes)})


def compare_errors(joint: Predictions, attribute: str, reference: str | None = None, model_a: str | None = None,
                   model_b: str | None = None, params: CompareParams = CompareParams(),
                   units: str | None = None) -> ErrorComparison:
    """Model b against model a on ``joint``'s entries (``Predictions.joint()``) of a numeric target or of classes."""
    if not by_errors(joint):
        served = " or ".join(spec_of(name).title for name in task_names() if by_errors(name))
        raise DataError(f"This comparison reads the errors of {served} predictions.")
    joint = joint.joint()
    model_a, model_b = two_models(joint.model_names, model_a, model_b)
    view = joint.groups(attribute)
    weight = np.ones(joint.y.size) if joint.weight is None else np.asarray(joint.weight, float)
    sizes = np.bincount(view.codes, weights=weight, minlength=len(view.names))
    if reference is None or reference not in view.names:
        reference = view.names[int(np.argmax(sizes))]
    per_row = row_errors(joint, model_a, model_b)
    y = np.asarray(joint.y, float)
    members = [(ALL, np.ones(y.size, bool))] + [(g, view.codes == k) for k, g in enumerate(view.names)]
    differences = []
    for metric, (loss_a, loss_b) in per_row.items():
        for group, mask in members:
            differences.append(_paired(metric, None if group == ALL else group, loss_a[mask], loss_b[mask],
                                       weight[mask], params.level))
    ref_mask = view.codes == view.names.index(reference)
    for metric, gap in ((m, g) for m, g in GAP_METRICS.items() if m in per_row):
        loss_a, loss_b = per_row[metric]
        d = loss_b - loss_a
        for k, group in enumerate(view.names):
            if group != reference:
                mask = view.codes == k
                differences.append(_gap_change(gap, group, reference, loss_a, loss_b, d, mask, ref_mask, weight,
                                               params.level))
    adjusted = stats.benjamini_hochberg([d.p_value for d in differences])
    differences = tuple(replace(d, p_adjusted=float(p)) for d, p in zip(differences, adjusted))
    group_sizes = {g: int(round(n)) for g, n in zip(view.names, sizes)}
    table = _table(per_row, members, weight, (model_a, model_b))
    small = [g for g, n in group_sizes.items() if n < SMALL]
    notes = (f"Under {SMALL} rows ({', '.join(small)}) a t-interval rests on the errors being near normal more than "
             "on the data.",) if small else ()
    return ErrorComparison(view.attribute, reference, model_a, model_b, params, group_sizes, table, differences,
                           units, notes, joint.fingerprint, joint.task)


def by_errors(task) -> bool:
    """Whether two models of ``task`` (a name, a spec or predictions) are compared by their paired errors: a numeric
    target's, or a model of classes' (its predicted class right or wrong); else metric by metric."""
    spec = spec_of(task)
    return spec.numeric_target or spec.per_class


def row_errors(joint: Predictions, model_a: str, model_b: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each error metric's per-row values of the two models: a numeric target's absolute, signed and squared errors,
    or 1 where a model's predicted class is not the label."""
    y = np.asarray(joint.y, float)
    if spec_of(joint).per_class:
        wrong = [(joint.class_outputs[m][0] != joint.y).astype(float) for m in (model_a, model_b)]
        return {"error_rate": tuple(wrong)}
    a, b = (np.asarray(joint.scores[m], float) for m in (model_a, model_b))
    return {"mae": (np.abs(a - y), np.abs(b - y)), "bias": (a - y, b - y), "mse": ((a - y) ** 2, (b - y) ** 2)}


def weighted_mean_var(values: np.ndarray, weight: np.ndarray) -> tuple[float, float, float]:
    """(mean, sample variance, rows) of ``values`` where entry k stands for ``weight[k]`` identical rows."""
    n = float(weight.sum())
    if n <= 0:
        return float("nan"), float("nan"), 0.0
    mean = float(np.dot(weight, values) / n)
    var = float(np.dot(weight, (values - mean) ** 2) / (n - 1)) if n > 1 else float("nan")
    return mean, var, n


def _paired(metric: str, group: str | None, loss_a, loss_b, weight, level: float) -> Difference:
    value_a, _, n = weighted_mean_var(loss_a, weight)
    value_b, _, _ = weighted_mean_var(loss_b, weight)
    mean, var, _ = weighted_mean_var(loss_b - loss_a, weight)
    se = np.sqrt(var / n) if n > 1 else float("nan")
    low, high, p = _t_interval(mean, se, n - 1, level)
    return Difference(metric, group, None, value_a, value_b, value_b - value_a, stats.Interval(low, high, level),
                      p, PAIRED_T, int(round(n)))


def _gap_change(gap: str, group: str, reference: str, loss_a, loss_b, d, mask, ref_mask, weight,
                level: float) -> Difference:
    """The change of (metric_group − metric_reference) from model a to model b, by Welch's test on the d's."""
    mean_g, var_g, n_g = weighted_mean_var(d[mask], weight[mask])
    mean_r, var_r, n_r = weighted_mean_var(d[ref_mask], weight[ref_mask])
    gap_a = weighted_mean_var(loss_a[mask], weight[mask])[0] - weighted_mean_var(loss_a[ref_mask], weight[ref_mask])[0]
    gap_b = weighted_mean_var(loss_b[mask], weight[mask])[0] - weighted_mean_var(loss_b[ref_mask], weight[ref_mask])[0]
    u_g, u_r = var_g / n_g if n_g > 1 else np.nan, var_r / n_r if n_r > 1 else np.nan
    se = np.sqrt(u_g + u_r)
    df = (u_g + u_r) ** 2 / (u_g ** 2 / (n_g - 1) + u_r ** 2 / (n_r - 1)) if se > 0 else float("nan")
    low, high, p = _t_interval(mean_g - mean_r, se, df, level)
    return Difference(gap, group, reference, gap_a, gap_b, gap_b - gap_a, stats.Interval(low, high, level), p,
                      WELCH_T, int(round(n_g + n_r)))


def _t_interval(mean: float, se: float, df: float, level: float) -> tuple[float, float, float]:
    """The t interval of ``mean`` and the two-sided p of "no difference"; a zero spread with a zero mean is p = 1
    (the two models agree on every row), with a non-zero mean p = 0."""
    if not (np.isfinite(se) and np.isfinite(df)) or df <= 0:
        return float("nan"), float("nan"), float("nan")
    if se == 0:
        return mean, mean, 1.0 if mean == 0 else 0.0
    half = sps.t.ppf(0.5 + level / 2, df) * se
    return mean - half, mean + half, float(2 * sps.t.sf(abs(mean) / se, df))


def _table(per_row: dict, members, weight, models: tuple[str, str]) -> pd.DataFrame:
    rows = []
    for side, model in enumerate(models):
        for group, mask in members:
            row = {"model": model, "group": group, "n": int(round(weight[mask].sum()))}
            for metric, losses in per_row.items():
                row[metric] = weighted_mean_var(losses[side][mask], weight[mask])[0]
            if "mse" in row:
                row["rmse"] = float(np.sqrt(row["mse"]))
            rows.append(row)
    return pd.DataFrame(rows)
