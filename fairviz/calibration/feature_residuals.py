"""Predictive residual analysis over features ([2] §3): bias conditional on X rather than on p̂.

- Graphical (§3.2): Pearson residuals r = (y − p̂)/sqrt(p̂(1 − p̂)) against a feature, as binned means with
  confidence intervals, per group and overall. E[r | x] ≠ 0 in a region means the model is biased there.
  Note the sign: r > 0 means more positives than predicted (under-prediction), the opposite of [1]'s
  residual D = p̂ − y.
- Model-based (§3.3): fit r on the features (numeric features as restricted cubic splines, categorical ones as
  indicators; the group attribute can be one of them). Wald tests with heteroskedasticity-robust (HC1)
  covariance say which terms explain the residuals; cross-validated R² of that model and of gradient-boosted
  trees says how much better than the baseline (predicting the mean residual) the features do. Any reliable
  gain is evidence of structure the model missed — the boosting connection the lecture makes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from fairviz.calibration.reliability import pearson_residuals, rcs_basis
from fairviz.data import DataError, Predictions

MAX_LEVELS = 20               # categorical features: the most frequent levels, the rest pooled as "other"
MODEL_ROWS = 20_000           # the cross-validated models run on at most this many rows (seeded sample)
SPLINE_KNOTS = 4


@dataclass(frozen=True)
class BinnedResiduals:
    """Mean Pearson residual per bin of a feature (numeric: quantile bins; categorical: levels)."""
    label: np.ndarray          # bin label (interval or level)
    x: np.ndarray              # numeric: mean feature value in the bin; categorical: position 0…k−1
    n: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray


@dataclass(frozen=True)
class FeatureResiduals:
    feature: str
    kind: str                  # "numeric" or "categorical"
    attribute: str
    groups: dict               # group name → BinnedResiduals, plus "overall"
    large: int                 # rows with |r| > 3 (the lecture's 5.544 case)
    n_clipped: int


@dataclass(frozen=True)
class TermTest:
    term: str
    df: int
    statistic: float           # robust Wald χ²
    p: float


@dataclass(frozen=True)
class ResidualModel:
    features: tuple[str, ...]
    n: int
    terms: list[TermTest]
    overall: TermTest          # all terms at once
    r2: float                  # in-sample R² of the linear-spline model
    cv_r2_linear: float        # cross-validated R² (1 − MSE/MSE of the mean): > 0 beats the baseline
    cv_r2_linear_sd: float
    cv_r2_boosting: float
    cv_r2_boosting_sd: float
    sampled: bool
    notes: tuple[str, ...] = ()

    def rows(self) -> list[dict]:
        """Each term's robust Wald test, then all terms at once."""
        return [{"term": t.term, "df": t.df, "statistic": t.statistic, "p": t.p} for t in [*self.terms, self.overall]]


def feature_kind(series: pd.Series) -> str:
    numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    return "numeric" if numeric and series.nunique() > 10 else "categorical"


def residuals_by_feature(pred: Predictions, attribute: str | None, feature: str, n_bins: int = 10,
                         level: float = 0.95) -> FeatureResiduals:
    if feature not in pred.frame.columns:
        raise DataError(f"The feature '{feature}' is not in the file.")
    view = pred.groups(attribute)
    series = pred.frame[feature].reset_index(drop=True)
    r = pearson_residuals(pred.y, pred.score)
    kind = feature_kind(series)
    ok = series.notna().to_numpy()
    if not ok.any():
        raise DataError(f"The feature '{feature}' has no values.")
    if kind == "numeric":
        values = series.to_numpy(dtype=float)
        edges = np.unique(np.quantile(values[ok], np.linspace(0, 1, n_bins + 1)))
        if edges.size < 2:
            edges = np.array([values[ok].min(), values[ok].max() + 1e-12])
        codes = np.full(values.size, -1)
        codes[ok] = np.clip(np.searchsorted(edges, values[ok], side="right") - 1, 0, edges.size - 2)
        labels = np.array([f"[{_short(a)}, {_short(b)}{']' if i == edges.size - 2 else ')'}"
                           for i, (a, b) in enumerate(zip(edges[:-1], edges[1:]))])
        positions = None
    else:
        text = series.astype(str).where(ok, "")
        top = text[ok].value_counts().index[:MAX_LEVELS]
        text = text.where(text.isin(top) | ~ok, "other")
        levels = [*top] + (["other"] if (text == "other").any() and "other" not in top else [])
        lookup = {v: i for i, v in enumerate(levels)}
        codes = np.array([lookup.get(v, -1) if o else -1 for v, o in zip(text, ok)])
        labels = np.array(levels)
        values = None
        positions = np.arange(len(levels), dtype=float)
    groups = {}
    for g, name in [*enumerate(view.names), (None, "overall")]:
        rows = ok if g is None else ok & (view.codes == g)
        groups[name] = _binned(r[rows], codes[rows], labels, values[rows] if values is not None else None,
                               positions, level)
    n_clipped = int(np.count_nonzero((pred.score < 1e-6) | (pred.score > 1 - 1e-6)))
    return FeatureResiduals(feature, kind, view.attribute, groups, int(np.count_nonzero(np.abs(r) > 3)), n_clipped)


def _binned(r, codes, labels, values, positions, level) -> BinnedResiduals:
    k = labels.size
    n = np.bincount(codes, minlength=k)[:k]
    sums = np.bincount(codes, weights=r, minlength=k)[:k]
    sq = np.bincount(codes, weights=r * r, minlength=k)[:k]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums / n
        var = (sq - n * mean ** 2) / (n - 1)
        half = sps.t.ppf(0.5 + level / 2, np.maximum(n - 1, 1)) * np.sqrt(np.maximum(var, 0) / n)
        x = (np.bincount(codes, weights=values, minlength=k)[:k] / n) if values is not None else positions
    small = n < 2
    return BinnedResiduals(labels, x, n, np.where(n > 0, mean, np.nan), np.where(small, np.nan, mean - half),
                           np.where(small, np.nan, mean + half))


def _short(value: float) -> str:
    return f"{value:.3g}"


# ----------------------------------------------------------------------------------------------- model-based

def _design(frame: pd.DataFrame, features: list[str]) -> tuple[np.ndarray, list[tuple[str, slice]], list[str]]:
    """[1, term columns…] and the columns of each term. Numeric: restricted cubic spline; else indicators."""
    blocks, terms, notes = [np.ones((len(frame), 1))], [], []
    col = 1
    for name in features:
        series = frame[name]
        if feature_kind(series) == "numeric":
            x = series.to_numpy(dtype=float)
            knots = np.unique(np.quantile(x, [0.05, 0.35, 0.65, 0.95]))
            block = rcs_basis(x, knots) if knots.size >= 3 else x[:, None]
            block = (block - block.mean(0)) / np.where(block.std(0) > 0, block.std(0), 1.0)
        else:
            text = series.astype(str)
            top = text.value_counts().index[:MAX_LEVELS]
            text = text.where(text.isin(top), "other")
            dummies = pd.get_dummies(text, drop_first=True, dtype=float)
            if dummies.shape[1] == 0:
                notes.append(f"'{name}' has a single value and was left out.")
                continue
            block = dummies.to_numpy()
        blocks.append(block)
        terms.append((name, slice(col, col + block.shape[1])))
        col += block.shape[1]
    return np.hstack(blocks), terms, notes


def residual_model(pred: Predictions, features: list[str], seed: int = 0,
                   folds: int = 5, max_rows: int = MODEL_ROWS) -> ResidualModel:
    """Regress Pearson residuals on the features; test each term; compare CV error with the mean baseline."""
    import statsmodels.api as sm

    if not features:
        raise DataError("Choose at least one feature for the model-based residual analysis.")
    missing = [f for f in features if f not in pred.frame.columns]
    if missing:
        raise DataError(f"Not in the file: {', '.join(missing)}.")
    frame = pred.frame.reset_index(drop=True)[list(features)].copy()
    r = pearson_residuals(pred.y, pred.score)
    keep = frame.notna().all(axis=1).to_numpy()
    notes = []
    if (~keep).any():
        notes.append(f"{int((~keep).sum()):,} rows with a missing feature value were left out.")
    frame, r = frame.loc[keep].reset_index(drop=True), r[keep]
    if len(frame) < 30:
        raise DataError(f"Not enough rows with every chosen feature (n = {len(frame)}): at least 30 are needed.")
    X, terms, design_notes = _design(frame, list(frame.columns))
    notes += design_notes
    if not terms:
        raise DataError("None of the chosen features varies: nothing to test.")
    fit = sm.OLS(r, X).fit(cov_type="HC1")
    tests = [_wald(fit, name, cols) for name, cols in terms]
    overall = _wald(fit, "all features", slice(1, X.shape[1]))

    rng = np.random.default_rng(seed)
    sampled = len(frame) > max_rows
    idx = rng.permutation(len(frame))[:max_rows] if sampled else rng.permutation(len(frame))
    if sampled:
        notes.append(f"The cross-validated models used a random {max_rows:,} of {len(frame):,} rows (seed {seed}).")
    lin, boost = _cv_r2(X[idx], r[idx], frame.iloc[idx], folds, seed)
    return ResidualModel(tuple(frame.columns), int(len(frame)), tests, overall, float(fit.rsquared),
                         float(np.mean(lin)), float(np.std(lin)), float(np.mean(boost)), float(np.std(boost)),
                         sampled, tuple(notes))


def _wald(fit, name: str, cols: slice) -> TermTest:
    k = fit.params.size
    idx = np.arange(k)[cols]
    R = np.zeros((idx.size, k))
    R[np.arange(idx.size), idx] = 1
    beta, cov = R @ fit.params, R @ fit.cov_params() @ R.T
    stat = float(beta @ np.linalg.pinv(cov) @ beta)
    return TermTest(name, int(idx.size), stat, float(sps.chi2.sf(stat, idx.size)))


def _cv_r2(X, r, frame, folds, seed) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold R² against predicting the training folds' mean, for the spline OLS and for boosted trees."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    codes = np.column_stack([_codes(frame[c]) for c in frame.columns])
    categorical = [feature_kind(frame[c]) == "categorical" for c in frame.columns]
    fold = np.arange(len(r)) % folds
    lin, boost = [], []
    for k in range(folds):
        train, test = fold != k, fold == k
        baseline = np.mean((r[test] - r[train].mean()) ** 2)
        beta = np.linalg.lstsq(X[train], r[train], rcond=None)[0]
        lin.append(1 - np.mean((r[test] - X[test] @ beta) ** 2) / baseline)
        model = HistGradientBoostingRegressor(max_iter=100, learning_rate=0.1, max_leaf_nodes=15,
                                              categorical_features=categorical, random_state=seed)
        model.fit(codes[train], r[train])
        boost.append(1 - np.mean((r[test] - model.predict(codes[test])) ** 2) / baseline)
    return np.array(lin), np.array(boost)


def _codes(series: pd.Series) -> np.ndarray:
    if feature_kind(series) == "numeric":
        return series.to_numpy(dtype=float)
    text = series.astype(str)
    top = text.value_counts().index[:MAX_LEVELS]
    return pd.Categorical(text.where(text.isin(top), "other")).codes.astype(float)
