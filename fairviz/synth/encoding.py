"""Mixed tabular encoding for the Conditional HydraGAN ([3] §3.5): what the generator emits and the critic reads.

- A **continuous** column gets *mode-specific normalisation*, as CTGAN does (Xu et al., NeurIPS 2019): a Bayesian
  Gaussian mixture (at most ``max_modes`` modes, unused ones pruned) is fitted to the column; a value x is encoded
  as its mode k (a one-hot block, which the generator emits as a softmax) and a scalar α = (x − μ_k)/(4σ_k) in
  [−1, 1] (a tanh output). Decoding maps α back through the chosen mode. A value holding ≥ 10% of a column (the
  zeros of capital gains) gets its own point-mass mode, fitted outside the mixture, which decodes to exactly that
  value (CTGAN has no such mode: its zeros come back as small noise). A column whose values are all integers
  decodes to integers.
- A **categorical** column (text, booleans, or numbers with at most ``max_levels_numeric`` distinct values) is a
  one-hot block; the generator emits a softmax vector, which the thesis keeps for training instead of an argmax
  ("to keep information"). Export decodes a block by its argmax.

The encoded matrix is float32, one row per record; ``spans`` says which slice belongs to which column.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

MAX_MODES = 10
MAX_LEVELS_NUMERIC = 12          # a numeric column with at most this many values is treated as categorical
MAX_LEVELS = 100                 # a text column with more distinct values than this cannot be generated
FIT_ROWS = 5000                  # rows used to fit each mixture (a seeded subsample of larger tables)
MODE_WEIGHT_MIN = 0.005          # mixture modes lighter than this are pruned
CLIP = 0.99
POINT_SHARE = 0.1                # a single value holding this share of a column gets its own point-mass mode


@dataclass(frozen=True)
class Span:
    """One slice of the encoded row: ``kind`` is 'scalar' (tanh), 'modes' (softmax) or 'category' (softmax)."""

    column: str
    kind: str
    start: int
    stop: int

    @property
    def size(self) -> int:
        return self.stop - self.start


@dataclass(frozen=True)
class ContinuousColumn:
    name: str
    means: np.ndarray            # (K,)
    stds: np.ndarray             # (K,)
    integer: bool
    low: float
    high: float
    point: np.ndarray            # (K,) bool: the mode is a point mass (e.g. the zeros of capital gains)


@dataclass(frozen=True)
class CategoricalColumn:
    name: str
    levels: tuple                # the values, in a fixed order (sorted as text)


@dataclass(frozen=True)
class TabularEncoder:
    columns: tuple               # ContinuousColumn | CategoricalColumn, in the table's order
    spans: tuple[Span, ...]
    dtypes: dict = field(default_factory=dict)

    @property
    def width(self) -> int:
        return self.spans[-1].stop if self.spans else 0

    def column(self, name: str):
        return next(c for c in self.columns if c.name == name)

    def spans_of(self, name: str) -> list[Span]:
        return [s for s in self.spans if s.column == name]

    def category_span(self, name: str) -> Span:
        return next(s for s in self.spans if s.column == name and s.kind == "category")

    # ------------------------------------------------------------------------------------------- encode / decode

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        out = np.zeros((len(frame), self.width), dtype=np.float32)
        for col in self.columns:
            values = frame[col.name].to_numpy()
            if isinstance(col, CategoricalColumn):
                span = self.category_span(col.name)
                index = _level_index(col, values)
                out[np.arange(len(frame)), span.start + index] = 1.0
            else:
                scalar, modes = self.spans_of(col.name)
                x = values.astype(float)
                mode = _nearest_mode(col, x)
                alpha = (x - col.means[mode]) / (4 * col.stds[mode])
                out[:, scalar.start] = np.clip(alpha, -CLIP, CLIP)
                out[np.arange(len(frame)), modes.start + mode] = 1.0
        return out

    def decode(self, matrix: np.ndarray) -> pd.DataFrame:
        """Encoded (or generated: softmax blocks allowed) rows back to values; blocks decode by argmax."""
        matrix = np.asarray(matrix, dtype=float)
        data = {}
        for col in self.columns:
            if isinstance(col, CategoricalColumn):
                span = self.category_span(col.name)
                index = matrix[:, span.start:span.stop].argmax(axis=1)
                data[col.name] = np.asarray(col.levels, dtype=object)[index]
            else:
                scalar, modes = self.spans_of(col.name)
                mode = matrix[:, modes.start:modes.stop].argmax(axis=1)
                alpha = np.clip(matrix[:, scalar.start], -1.0, 1.0)
                x = np.clip(alpha * 4 * col.stds[mode] + col.means[mode], col.low, col.high)
                x = np.where(col.point[mode], np.clip(col.means[mode], col.low, col.high), x)
                data[col.name] = np.round(x).astype(np.int64) if col.integer else x
        frame = pd.DataFrame(data)
        for name, dtype in self.dtypes.items():
            if isinstance(self.column(name), CategoricalColumn):
                frame[name] = _restore_dtype(frame[name], dtype)
        return frame


def fit_encoder(frame: pd.DataFrame, categorical: set[str] | None = None, seed: int = 0,
                max_modes: int = MAX_MODES, progress=None) -> TabularEncoder:
    """Choose each column's encoding (``categorical`` forces columns to categorical) and fit the mixtures;
    ``progress(fraction, message)`` is called before each column (a mixture fit takes a second or two)."""
    categorical = set(categorical or ())
    rng = np.random.default_rng(seed)
    columns, spans, start = [], [], 0
    for k, name in enumerate(frame.columns):
        if progress is not None:
            progress(k / max(1, frame.shape[1]), f"encoding column '{name}'")
        series = frame[name]
        if name in categorical or is_categorical(series):
            levels = tuple(sorted(pd.unique(series), key=str))
            columns.append(CategoricalColumn(name, levels))
            spans.append(Span(name, "category", start, start + len(levels)))
            start += len(levels)
            continue
        x = series.to_numpy(dtype=float)
        spread = float(np.std(x)) or 1.0
        values, counts = np.unique(x, return_counts=True)
        heavy = values[counts >= POINT_SHARE * x.size] if max_modes > 1 else values[:0]   # point masses
        rest = x[~np.isin(x, heavy)]
        means, stds = _mixture(rest, max_modes - len(heavy), spread, rng) if rest.size else (np.zeros(0),) * 2
        point = np.r_[np.ones(len(heavy), bool), np.zeros(len(means), bool)]
        means, stds = np.r_[heavy, means], np.r_[np.full(len(heavy), 1e-3 * spread), stds]
        order = np.argsort(means)
        integer = bool(np.all(np.isclose(x, np.round(x))))
        columns.append(ContinuousColumn(name, means[order], stds[order], integer, float(x.min()), float(x.max()),
                                        point[order]))
        spans.append(Span(name, "scalar", start, start + 1))
        spans.append(Span(name, "modes", start + 1, start + 1 + len(order)))
        start += 1 + len(order)
    return TabularEncoder(tuple(columns), tuple(spans), {n: frame[n].dtype for n in frame.columns})


def _mixture(x: np.ndarray, max_modes: int, spread: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Means and standard deviations of a Bayesian Gaussian mixture (at most ``max_modes``; light modes pruned)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import BayesianGaussianMixture

    fit_x = x if x.size <= FIT_ROWS else rng.choice(x, FIT_ROWS, replace=False)
    k = int(min(max(1, max_modes), np.unique(fit_x).size))
    if k == 1:
        return np.array([float(x.mean())]), np.array([float(np.std(x)) or spread])
    gmm = BayesianGaussianMixture(
        n_components=k, weight_concentration_prior_type="dirichlet_process", weight_concentration_prior=1e-3,
        max_iter=100, n_init=1, random_state=int(rng.integers(2**31 - 1)))
    with warnings.catch_warnings():       # 100 EM steps are enough to place the modes
        warnings.simplefilter("ignore", ConvergenceWarning)
        gmm.fit(fit_x.reshape(-1, 1))
    keep = gmm.weights_ > MODE_WEIGHT_MIN
    return gmm.means_.ravel()[keep], np.maximum(np.sqrt(gmm.covariances_.ravel()[keep]), 1e-3 * spread)


def is_categorical(series: pd.Series) -> bool:
    if pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series):
        return True
    return series.nunique() <= MAX_LEVELS_NUMERIC


def _nearest_mode(col: ContinuousColumn, x: np.ndarray) -> np.ndarray:
    """The mode with the highest responsibility for each value (equal weights: the closest in σ units); a point-mass
    mode takes exactly its own value and nothing else."""
    z = np.abs(x[:, None] - col.means[None, :]) / col.stds[None, :]
    log_density = -0.5 * z ** 2 - np.log(col.stds)[None, :]
    exact = x[:, None] == col.means[None, :]
    log_density = np.where(col.point[None, :], np.where(exact, np.inf, -np.inf), log_density)
    return log_density.argmax(axis=1)


def _level_index(col: CategoricalColumn, values: np.ndarray) -> np.ndarray:
    lookup = {_key(v): i for i, v in enumerate(col.levels)}
    try:
        return np.array([lookup[_key(v)] for v in values], dtype=np.int64)
    except KeyError as err:
        raise ValueError(f"column '{col.name}' has a value the encoder never saw: {err.args[0]!r}") from None


def _key(value):
    return value.item() if isinstance(value, np.generic) else value


def _restore_dtype(series: pd.Series, dtype) -> pd.Series:
    try:
        return series.astype(dtype)
    except (TypeError, ValueError):
        return series
