"""Forecast fairness by group on uploaded quantile forecasts: CRPS, pinball loss, interval coverage and width per
group with cluster-bootstrap intervals, coverage gaps, and a per-group skill comparison of two models.

Input (CSV or Parquet, read with ``fairviz.data.read_table``): one row per (series, step) and model with
- a series id, a step (lead time) and the observed truth;
- the quantiles, either *wide* (one column per level, named like ``q0.05``, ``q_0.9``, ``quantile_0.5``,
  ``0.95``, ``q05``/``p95`` for percent) or *long* (a level column in (0, 1) and a value column, several rows per
  (series, step));
- one or more group columns; optionally a ``model`` column (several models in one file) and a point forecast.

Steps of one series are correlated, so every interval resamples whole series within each group (a cluster
bootstrap): a metric is the mean over the group's rows, and a resample re-weights the series.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from fairviz.core import stats
from fairviz.data import DataError, GroupView, guess_forecast_roles, read_table
from fairviz.data import quantile_level as parse_level      # role guessing's reading of 'q0.05', 'p95', …
from fairviz.forecast import crps as scores

MIN_SERIES_FOR_CI = 5


@dataclass(frozen=True)
class ForecastMapping:
    series: str
    step: str
    truth: str
    groups: tuple[str, ...] = ()
    model: str | None = None
    point: str | None = None
    level: str | None = None              # long format: the column of levels …
    value: str | None = None              # … and the column of quantile values

    @property
    def long(self) -> bool:
        return self.level is not None


@dataclass(frozen=True)
class QuantileForecasts:
    """One model's validated forecasts: rows are (series, step), quantile columns sorted by level."""
    model: str
    series: np.ndarray                    # (n,) str
    step: np.ndarray                      # (n,) float
    truth: np.ndarray                     # (n,)
    q: np.ndarray                         # (n, c), each row non-decreasing
    levels: np.ndarray                    # (c,) increasing in (0, 1)
    attributes: dict                      # attribute → GroupView (codes per row)
    point: np.ndarray | None = None
    notes: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        return int(self.truth.size)

    @property
    def attribute_names(self) -> list[str]:
        return list(self.attributes)

    def one_series(self, series_id: str) -> "QuantileForecasts":
        rows = np.flatnonzero(self.series == series_id)
        rows = rows[np.argsort(self.step[rows], kind="stable")]
        attrs = {k: GroupView(v.attribute, v.codes[rows], v.names) for k, v in self.attributes.items()}
        return QuantileForecasts(self.model, self.series[rows], self.step[rows], self.truth[rows], self.q[rows],
                                 self.levels, attrs, None if self.point is None else self.point[rows], self.notes)


# ----------------------------------------------------------------------------------------------- reading

def guess_mapping(frame: pd.DataFrame) -> ForecastMapping:
    """Roles from column names (``fairviz.data.roles``; the page lets the user correct them)."""
    return ForecastMapping(**guess_forecast_roles(frame))


def build(frame: pd.DataFrame, mapping: ForecastMapping, default_model: str = "model") -> dict[str, QuantileForecasts]:
    """Validate and split by model. Raises ``DataError`` with one sentence per problem."""
    problems = []
    needed = {"series id": mapping.series, "step": mapping.step, "truth": mapping.truth}
    if mapping.long:
        needed.update({"quantile level": mapping.level, "quantile value": mapping.value})
    for role, column in needed.items():
        if not column:
            problems.append(f"No {role} column is chosen.")
        elif column not in frame.columns:
            problems.append(f"The {role} column '{column}' is not in the file.")
    for column in (*mapping.groups, mapping.model, mapping.point):
        if column and column not in frame.columns:
            problems.append(f"The column '{column}' is not in the file.")
    if not mapping.groups:
        problems.append("Choose at least one group column: forecast fairness compares groups.")
    if problems:
        raise DataError(problems)
    wide = _to_wide(frame, mapping)
    level_cols = [c for c in wide.columns if isinstance(c, float)]
    if len(level_cols) < 2:
        raise DataError("Fewer than two quantile levels were found. Name wide quantile columns like 'q0.05', "
                        "'q_0.95' or 'quantile_0.5' (or q05/p95 for percent), or give a level column with values "
                        "in (0, 1) and a value column (long format).")
    models = [default_model] if not mapping.model else [str(m) for m in pd.unique(wide[mapping.model].dropna())]
    out = {}
    for model in models:
        part = wide if not mapping.model else wide[wide[mapping.model].astype(str) == model]
        out[model] = _validate(part, mapping, model, sorted(level_cols))
    return out


def _to_wide(frame: pd.DataFrame, mapping: ForecastMapping) -> pd.DataFrame:
    if not mapping.long:
        rename = {c: parse_level(c) for c in frame.columns if parse_level(c) is not None
                  and c not in (mapping.series, mapping.step, mapping.truth)}
        levels = list(rename.values())
        if len(set(levels)) < len(levels):
            raise DataError("Two quantile columns name the same level: " +
                            ", ".join(sorted(str(c) for c, v in rename.items() if levels.count(v) > 1)) + ".")
        return frame.rename(columns=rename)
    level = pd.to_numeric(frame[mapping.level], errors="coerce")
    if level.isna().any() or not ((level > 0) & (level < 1)).all():
        bad = frame.loc[level.isna() | (level <= 0) | (level >= 1), mapping.level].astype(str).unique()[:5]
        raise DataError(f"The level column '{mapping.level}' must hold numbers strictly between 0 and 1; "
                        f"found {', '.join(bad)}.")
    keys = [c for c in (mapping.model, mapping.series, mapping.step) if c]
    extra = [c for c in (mapping.truth, *mapping.groups, mapping.point) if c and c not in keys]
    values = frame.assign(_level=level.round(6))
    try:
        wide = values.pivot_table(index=keys, columns="_level", values=mapping.value, aggfunc="first", dropna=False)
    except (ValueError, TypeError) as err:
        raise DataError(f"The long-format quantiles could not be arranged by (series, step): {err}") from None
    wide.columns = [float(c) for c in wide.columns]
    firsts = values.groupby(keys, sort=False, dropna=False)[extra].first() if extra else None
    wide = wide.join(firsts) if firsts is not None else wide
    return wide.reset_index()


def _validate(frame: pd.DataFrame, mapping: ForecastMapping, model: str, level_cols: list[float]) -> QuantileForecasts:
    problems, notes = [], []
    n0 = len(frame)
    numeric = {}
    for column in [mapping.truth, mapping.step, *level_cols] + ([mapping.point] if mapping.point else []):
        raw = frame[column]
        values = pd.to_numeric(raw, errors="coerce")
        bad = values.isna() & raw.notna()
        if bad.any():
            example = raw[bad].astype(str).iloc[0]
            label = f"quantile column for level {column}" if isinstance(column, float) else f"column '{column}'"
            problems.append(f"The {label} has non-numeric values (e.g. '{example}' in {int(bad.sum())} rows).")
        if np.isinf(values.to_numpy(dtype=float, na_value=np.nan)).any():
            problems.append(f"The column '{column}' has infinite values.")
        numeric[column] = values
    if problems:
        raise DataError(problems)
    table = pd.DataFrame({"series": frame[mapping.series].astype(str).to_numpy(),
                          "step": numeric[mapping.step].to_numpy(float),
                          "truth": numeric[mapping.truth].to_numpy(float)})
    q = np.column_stack([numeric[c].to_numpy(float) for c in level_cols])
    group_frame = frame[list(mapping.groups)].reset_index(drop=True)
    missing = table.isna().any(axis=1).to_numpy() | np.isnan(q).any(axis=1) | group_frame.isna().any(axis=1).to_numpy()
    if frame[mapping.series].isna().any():
        missing |= frame[mapping.series].isna().to_numpy()
    if missing.all():
        raise DataError(f"Every row of model '{model}' has a missing series id, step, truth, group or quantile.")
    if missing.any():
        notes.append(f"{int(missing.sum()):,} of {n0:,} rows of model '{model}' had a missing series id, step, "
                     "truth, group or quantile and were dropped.")
    keep = ~missing
    table, q, group_frame = table[keep].reset_index(drop=True), q[keep], group_frame[keep].reset_index(drop=True)
    duplicated = table.duplicated(["series", "step"])
    if duplicated.any():
        first = table[duplicated].iloc[0]
        raise DataError(f"Model '{model}' has {int(duplicated.sum()):,} repeated (series, step) rows, e.g. series "
                        f"'{first['series']}' step {first['step']:g}. Give one row per series and step (or a model "
                        "column when the file holds several models).")
    crossing = scores.crossing_rows(q)
    if crossing.any():
        notes.append(f"{int(crossing.sum()):,} rows of model '{model}' had crossing quantiles (a higher level "
                     "with a lower value); their values were sorted (rearrangement), as the PTN's outputs are.")
        q = np.sort(q, axis=1)
    attributes = {}
    for column in mapping.groups:
        attributes[column] = _group_view(column, group_frame[column].astype(str).to_numpy())
    point = None
    if mapping.point:
        point = numeric[mapping.point].to_numpy(float)[keep]
    return QuantileForecasts(model, table["series"].to_numpy(), table["step"].to_numpy(), table["truth"].to_numpy(),
                             q, np.asarray(level_cols, dtype=float), attributes, point, tuple(notes))


def _group_view(attribute: str, values: np.ndarray) -> GroupView:
    names, codes = np.unique(values, return_inverse=True)
    sizes = np.bincount(codes, minlength=names.size)
    order = np.lexsort((names, -sizes))                  # largest first, ties by name
    remap = np.empty(order.size, dtype=np.int32)
    remap[order] = np.arange(order.size)
    return GroupView(attribute, remap[codes].astype(np.int32), tuple(str(names[i]) for i in order))


def read(source, mapping: ForecastMapping | None = None, name: str | None = None) -> dict[str, QuantileForecasts]:
    """Path or bytes → models (``fairviz.data.read_table`` reads the file and names what is wrong with it)."""
    frame, _ = read_table(source, name)
    return build(frame, mapping or guess_mapping(frame))


# ----------------------------------------------------------------------------------------------- analysis

@dataclass(frozen=True)
class EvalParams:
    bands: tuple[float, ...] = scores.BANDS
    resamples: int = 1000
    level: float = 0.95
    seed: int = 0


@dataclass(frozen=True)
class GroupScores:
    name: str
    n_series: int
    n_rows: int
    crps: float
    pinball: float
    coverage: dict                        # band → share inside (None: band not described by the levels)
    width: dict                           # band → mean width
    ci: dict                              # metric key ("crps", "pinball", "coverage_0.9", "width_0.9") → Interval
    pit_hist: np.ndarray
    crps_by_step: dict                    # step → mean CRPS

    def to_dict(self) -> dict:
        return {"n_series": self.n_series, "n_rows": self.n_rows, "crps": self.crps, "pinball": self.pinball,
                "coverage": {_band_key(b): v for b, v in self.coverage.items()},
                "width": {_band_key(b): v for b, v in self.width.items()},
                "ci": {k: v.to_list() for k, v in self.ci.items()}, "pit_histogram": self.pit_hist.tolist()}


@dataclass(frozen=True)
class CoverageGap:
    """Coverage of group i minus group j for one band (i − j), with a bootstrap interval."""
    band: float
    group_i: str
    group_j: str
    gap: float
    ci: stats.Interval


@dataclass(frozen=True)
class GroupSkill:
    """Model A against model B on the same (series, step) rows of one group: skill = 1 − CRPS_A / CRPS_B."""
    name: str
    n_series: int
    crps_a: float
    crps_b: float
    skill: float
    ci: stats.Interval
    share_series_better: float            # share of series where A's mean CRPS < B's


@dataclass(frozen=True)
class ForecastFairness:
    attribute: str
    model: str
    params: EvalParams
    levels: np.ndarray
    bands: tuple[float, ...]              # the bands the levels describe
    undefined_bands: tuple[float, ...]    # asked for, but outside the levels given
    overall: GroupScores
    groups: list[GroupScores]
    gaps: list[CoverageGap]               # every pair, every band
    compare_model: str | None = None
    skills: list[GroupSkill] = field(default_factory=list)
    skill_overall: GroupSkill | None = None
    warnings: tuple[str, ...] = ()

    def group(self, name: str) -> GroupScores:
        return next(g for g in self.groups if g.name == name)

    def largest_gap(self, band: float) -> CoverageGap | None:
        gaps = [g for g in self.gaps if g.band == band and np.isfinite(g.gap)]
        return max(gaps, key=lambda g: abs(g.gap)) if gaps else None

    def to_dict(self) -> dict:
        out = {"attribute": self.attribute, "model": self.model, "levels": self.levels.tolist(),
               "bands": [_band_key(b) for b in self.bands],
               "undefined_bands": [_band_key(b) for b in self.undefined_bands],
               "resamples": self.params.resamples, "seed": self.params.seed, "ci_level": self.params.level,
               "overall": self.overall.to_dict(), "groups": {g.name: g.to_dict() for g in self.groups},
               "coverage_gaps": [{"band": _band_key(g.band), "group_i": g.group_i, "group_j": g.group_j,
                                  "gap": g.gap, "ci": g.ci.to_list()} for g in self.gaps],
               "warnings": list(self.warnings)}
        if self.compare_model:
            out["comparison"] = {
                "model_a": self.model, "model_b": self.compare_model,
                "overall": _skill_dict(self.skill_overall) if self.skill_overall else None,
                "groups": {s.name: _skill_dict(s) for s in self.skills}}
        return out


def _skill_dict(s: GroupSkill) -> dict:
    return {"n_series": s.n_series, "crps_a": s.crps_a, "crps_b": s.crps_b, "skill": s.skill,
            "ci": s.ci.to_list(), "share_series_better": s.share_series_better}


def _band_key(band: float) -> str:
    return f"{band:g}"


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
            compare: QuantileForecasts | None = None, progress=None) -> ForecastFairness:
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
            key = f"coverage_{_band_key(band)}"
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
    return ForecastFairness(attribute, fc.model, params, fc.levels, bands, undefined, overall, groups, gaps,
                            compare.model if compare is not None else None, skills, overall_skill,
                            tuple(list(fc.notes) + warnings))


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
        metrics[f"coverage_{_band_key(b)}"] = rows.inside[b][mask]
        metrics[f"width_{_band_key(b)}"] = rows.width[b][mask]
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
                         {b: point[f"coverage_{_band_key(b)}"] for b in bands},
                         {b: point[f"width_{_band_key(b)}"] for b in bands}, ci,
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
