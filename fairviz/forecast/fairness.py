"""Quantile forecasts read for forecast fairness ([3] ch. 5): column roles, wide or long quantiles, validation, one
``QuantileForecasts`` per model (``fairviz.forecast.analysis`` scores them by group).

Input (CSV or Parquet, read with ``fairviz.data.read_table``): one row per (series, step) and model with
- a series id, a step (lead time) and the observed truth;
- the quantiles, either *wide* (one column per level, named like ``q0.05``, ``q_0.9``, ``quantile_0.5``,
  ``0.95``, ``q05``/``p95`` for percent) or *long* (a level column in (0, 1) and a value column, several rows per
  (series, step));
- one or more group columns; optionally a ``model`` column (several models in one file) and a point forecast.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fairviz.data import DataError, GroupView, guess_forecast_roles, read_table
from fairviz.data import quantile_level as parse_level      # role guessing's reading of 'q0.05', 'p95', …
from fairviz.forecast import crps as scores



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




def stack_models(a: pd.DataFrame, b: pd.DataFrame, name_a: str, name_b: str) -> pd.DataFrame:
    """Two single-model files → one file with a model column (named after the files), so they can be compared."""
    if set(a.columns) != set(b.columns):
        missing = sorted(set(a.columns) ^ set(b.columns))[:6]
        raise DataError(f"The two files need the same columns; these are in only one of them: {', '.join(map(str, missing))}.")
    if "model" in a.columns:
        raise DataError("The first file already has a 'model' column: put both models in it instead of a second file.")
    label_a, label_b = Path(name_a).stem, Path(name_b).stem
    if label_a == label_b:
        label_a, label_b = f"{label_a} (A)", f"{label_b} (B)"
    return pd.concat([a.assign(model=label_a), b[a.columns].assign(model=label_b)], ignore_index=True)
