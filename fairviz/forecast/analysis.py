"""Forecast fairness by group ([3] ch. 5): CRPS, pinball loss, interval coverage and width per group with
cluster-bootstrap intervals, coverage gaps between groups, and the per-group skill of one model over another.

Steps of one series are correlated, so every interval resamples whole series within each group (a cluster
bootstrap): a metric is the mean over the group's rows, and a resample re-weights the series.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from fairviz.core import stats
from fairviz.data import DataError, GroupView
from fairviz.forecast import crps as scores
from fairviz.forecast.fairness import QuantileForecasts
from fairviz.forecast.results import (MIN_SERIES_FOR_CI, CoverageGap, EvalParams, ForecastAudit, GroupScores,
                                      GroupSkill, band_key)

@dataclass(frozen=True)
class _RowScores:
    crps: np.ndarray
    pinball: np.ndarray
    inside: dict
    width: dict
    pit: np.ndarray


def row_scores(fc: QuantileForecasts, bands) -> _RowScores:
    tau = fc.levels
    return _RowScores(scores.crps_quantiles(fc.q, fc.truth, tau), scores.pinball(fc.q, fc.truth, tau).mean(axis=1),
                      {b: scores.inside(fc.q, fc.truth, tau, b) for b in bands},
                      {b: scores.width(fc.q, tau, b) for b in bands}, scores.pit(fc.q, fc.truth, tau))


def analyse(fc: QuantileForecasts, attribute: str | None = None, params: EvalParams = EvalParams(),
            compare: QuantileForecasts | None = None, progress=None) -> ForecastAudit:
    attribute = attribute or fc.attribute_names[0]
    if attribute not in fc.attributes:
        raise DataError(f"'{attribute}' is not a group column of these forecasts.")
    bands = tuple(b for b in params.bands if scores.band_supported(fc.levels, b))
    undefined = tuple(b for b in params.bands if b not in bands)
    warnings = []
    if undefined:
        warnings.append(f"The levels given ({fc.levels.min():g} … {fc.levels.max():g}) do not describe the "
                        f"{', '.join(f'{100 * b:g}%' for b in undefined)} band(s): their coverage is undefined.")
    rows = row_scores(fc, bands)
    view = fc.attributes[attribute]
    series_codes, series_index = np.unique(fc.series, return_inverse=True)
    rng = np.random.default_rng(params.seed)
    groups, boots = [], {}
    for g, name in enumerate(view.names):
        mask = view.codes == g
        scores_g, boot = _group_scores(name, mask, rows, series_index, fc, bands, params, rng)
        groups.append(scores_g)
        boots[name] = boot
        if scores_g.n_series < MIN_SERIES_FOR_CI:
            warnings.append(f"Group '{name}' has {scores_g.n_series} series: fewer than {MIN_SERIES_FOR_CI}, so "
                            "its intervals are undefined.")
        if progress:
            progress((g + 1) / (len(view.names) + 1), f"group {name}")
    overall, _ = _group_scores("all", np.ones(fc.n, bool), rows, series_index, fc, bands, params, rng)
    gaps = []
    for a, b in combinations(view.names, 2):
        for band in bands:
            key = f"coverage_{band_key(band)}"
            diff = boots[a].get(key, np.full(1, np.nan)) - boots[b].get(key, np.full(1, np.nan))
            gaps.append(CoverageGap(band, a, b, _minus(groups[view.names.index(a)].coverage[band],
                                                       groups[view.names.index(b)].coverage[band]),
                                    stats.percentile_interval(diff, params.level)))
    skills, overall_skill = [], None
    if compare is not None:
        skills, overall_skill, more = _compare(fc, compare, view, params)
        warnings += more
    if progress:
        progress(1.0, "done")
    return ForecastAudit(attribute, fc.model, params, fc.levels, bands, undefined, overall, groups, gaps,
                            compare.model if compare is not None else None, skills, overall_skill,
                            tuple(list(fc.notes) + warnings),
                            float(scores.crps_equal_weights(fc.q, fc.truth, fc.levels).mean()) if fc.n else float("nan"))


def _minus(a, b):
    return float("nan") if a is None or b is None else a - b


def _group_scores(name, mask, rows: _RowScores, series_index, fc, bands, params: EvalParams, rng):
    """Means over the group's rows, and a cluster bootstrap over its series (mean of a resample = Σ w·sums/Σ w·n)."""
    codes = series_index[mask]
    present, local = np.unique(codes, return_inverse=True)
    k = present.size
    counts = np.bincount(local, minlength=k).astype(float)
    metrics = {"crps": rows.crps[mask], "pinball": rows.pinball[mask]}
    for b in bands:
        metrics[f"coverage_{band_key(b)}"] = rows.inside[b][mask]
        metrics[f"width_{band_key(b)}"] = rows.width[b][mask]
    sums = {key: np.bincount(local, weights=values, minlength=k) for key, values in metrics.items()}
    point = {key: float(values.mean()) if values.size else float("nan") for key, values in metrics.items()}
    boot, ci = {}, {}
    if k >= MIN_SERIES_FOR_CI and params.resamples > 0:
        weights = stats.bootstrap_counts(np.ones(k, dtype=np.int64), params.resamples, rng).astype(float)
        rows_b = weights @ counts
        for key in metrics:
            boot[key] = (weights @ sums[key]) / rows_b
            ci[key] = stats.percentile_interval(boot[key], params.level)
    else:
        ci = {key: stats.Interval(float("nan"), float("nan"), params.level, 0) for key in metrics}
    steps = {}
    for step in np.unique(fc.step[mask]):
        at = fc.step[mask] == step
        steps[float(step)] = float(rows.crps[mask][at].mean())
    result = GroupScores(name, int(k), int(mask.sum()), point["crps"], point["pinball"],
                         {b: point[f"coverage_{band_key(b)}"] for b in bands},
                         {b: point[f"width_{band_key(b)}"] for b in bands}, ci,
                         scores.pit_histogram(rows.pit[mask]), steps)
    return result, boot


def _compare(a: QuantileForecasts, b: QuantileForecasts, view: GroupView, params: EvalParams):
    """Per-group skill of A over B on the rows both models forecast (matched on series and step)."""
    warnings = []
    key_a = pd.MultiIndex.from_arrays([a.series, a.step])
    key_b = pd.MultiIndex.from_arrays([b.series, b.step])
    pos_b = key_b.get_indexer(key_a)
    matched = pos_b >= 0
    if not matched.any():
        raise DataError(f"Models '{a.model}' and '{b.model}' share no (series, step) rows, so they cannot be compared.")
    if not matched.all():
        warnings.append(f"{int((~matched).sum()):,} rows of '{a.model}' have no match in '{b.model}' and are left out "
                        "of the comparison.")
    if not np.allclose(a.truth[matched], b.truth[pos_b[matched]], equal_nan=False, rtol=1e-6, atol=1e-9):
        warnings.append(f"The truth differs between '{a.model}' and '{b.model}' on some matched rows; each model is "
                        "scored against its own truth column.")
    crps_a = scores.crps_quantiles(a.q, a.truth, a.levels)[matched]
    crps_b = scores.crps_quantiles(b.q, b.truth, b.levels)[pos_b[matched]]
    codes = view.codes[matched]
    series = a.series[matched]
    rng = np.random.default_rng(params.seed + 1)
    out = [_skill(name, codes == g, series, crps_a, crps_b, params, rng) for g, name in enumerate(view.names)]
    return out, _skill("all", np.ones(codes.size, bool), series, crps_a, crps_b, params, rng), warnings


def _skill(name, mask, series, crps_a, crps_b, params: EvalParams, rng) -> GroupSkill:
    if not mask.any():
        nan = float("nan")
        return GroupSkill(name, 0, nan, nan, nan, stats.Interval(nan, nan, params.level, 0), nan)
    present, local = np.unique(series[mask], return_inverse=True)
    k = present.size
    sum_a = np.bincount(local, weights=crps_a[mask], minlength=k)
    sum_b = np.bincount(local, weights=crps_b[mask], minlength=k)
    mean_a, mean_b = float(crps_a[mask].mean()), float(crps_b[mask].mean())
    skill_value = 1 - mean_a / mean_b if mean_b > 0 else float("nan")
    if k >= MIN_SERIES_FOR_CI and params.resamples > 0:
        weights = stats.bootstrap_counts(np.ones(k, dtype=np.int64), params.resamples, rng).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            boot = 1 - (weights @ sum_a) / (weights @ sum_b)
        ci = stats.percentile_interval(boot, params.level)
    else:
        ci = stats.Interval(float("nan"), float("nan"), params.level, 0)
    return GroupSkill(name, int(k), mean_a, mean_b, skill_value, ci, float((sum_a < sum_b).mean()))



def series_in_group(fc: QuantileForecasts, attribute: str, group: str) -> np.ndarray:
    """The ids of the series with at least one row in ``group`` of ``attribute`` (sorted)."""
    view = fc.attributes[attribute]
    return np.unique(fc.series[view.codes == view.names.index(group)])


def series_crps(fc: QuantileForecasts, series_id: str) -> float:
    """Mean CRPS over the steps of one series."""
    one = fc.one_series(series_id)
    return float(scores.crps_quantiles(one.q, one.truth, one.levels).mean())
