"""Sample-size-induced bias (seed 002 ch. 4): the MATCH test, Cross-Prior Smoothing, jaggedness and holes.

A small group's metric swings with a single row, and many metrics have *holes* (undefined values). MATCH asks
whether an observed score is what the reference's error pattern would give at the group's own size: with the
reference's cell probabilities ``p_ref``, a group of n rows has ``CM ~ Multinomial(n, p_ref)``, and the observed
score's place in that distribution, ``P(S ≤ S_obs)``, is its percentile. Exact forms (seed §4.5):

- binomial metrics ``(c_i + c_j)/n``: ``k ~ Bin(n, p_{i+j})`` (normal or Peizer–Pratt on request);
- marginal benefit ``𝓑 = (FP − FN)/n``: conditioning on ``m = FP + FN ~ Bin(n, p₊ + p₋)`` gives
  ``FP | m ~ Bin(m, p₊/(p₊ + p₋))``, an exact O(n) sum (equal to the seed's Eq. 4.27; the seed's normal
  approximation Eq. 4.29 is dimensionally wrong, the corrected one is ``Φ((k + ½ − nμ)/√(nσ²))``);
- joint-ratio metrics ``c_i/(c_i + c_j)``: ``Σ_k Bin(k; n, p_{i+j}) · BinCDF(⌊S_obs·k⌋; k, θ)``, conditioned on
  the metric being defined (A4), with ``P(undefined) = (1 − p_{i+j})^n`` reported beside it;
- MCC, F1 and PT: exact enumeration of all C(n+3, 3) matrices for small n, else seeded Monte Carlo;
- OFI against the reference: seeded Monte Carlo of both the group and the reference redrawn from ``p_ref``
  at their own sizes (so the reference's own noise counts too).

p-values are two-sided, ``min(1, 2·min(P(S ≤ s), P(S ≥ s)))`` (A3), and Benjamini–Hochberg adjusts them
across every group and metric of the table.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np
from scipy import stats as sps
from scipy.special import gammaln

try:        # boost's binomial kernels without scipy.stats' per-call argument checking (4× faster than bdtr)
    from scipy.special._ufuncs import _binom_cdf, _binom_pmf, _binom_sf
except ImportError:  # pragma: no cover - other scipy versions
    _binom_cdf, _binom_sf, _binom_pmf = sps.binom.cdf, sps.binom.sf, sps.binom.pmf

from fairviz.core import stats
from fairviz.core.confusion_metrics import CELL_ORDER, METRICS as CM_METRICS, Cells, probabilities
from fairviz.core.counts import ConfusionCounts
from fairviz.data import Predictions
from fairviz.core.wording import fmt, fmt_p
from fairviz.data.groups import group_counts

MATCH_METRICS = ("acc", "prev", "ppr", "tpr", "fnr", "tnr", "fpr", "ppv", "fdr", "npv", "for", "benefit",
                 "mcc", "f1", "pt", "ofi")
METRIC_LABELS = {**{k: m.label for k, m in CM_METRICS.items()}, "ofi": "OFI vs reference"}
ENUMERATION_LIMIT = 60          # exact enumeration of every matrix up to this n (C(63, 3) = 39,711 matrices)
CURVE_LIMIT = 150               # expected-error curves enumerate up to n = 150 (585,276 matrices)
TOLERANCE = 1e-9                # float guard for ⌊S·k⌋ and score ties
BERRY_ESSEEN_C0 = 0.56          # upper end of the Berry–Esseen constant (Shevtsova 2010)
Progress = Callable[[float, str], None]


# ----------------------------------------------------------------------------------------------- combinatorics

def configuration_count(n: int) -> int:
    """|𝓜(n)| = C(n + 3, 3): the number of confusion matrices of n rows (Theorem 4.1)."""
    return math.comb(n + 3, 3)


def cell_value_count(x: int, n: int) -> int:
    """How often one cell equals x across 𝓜(n): the triangular number (n − x + 1)(n − x + 2)/2 (Theorem 4.2)."""
    return (n - x + 1) * (n - x + 2) // 2


@lru_cache(maxsize=8)
def configurations(n: int) -> Cells:
    """Every confusion matrix of n rows (read-only arrays; C(n + 3, 3) of them)."""
    if n < 0 or n > 400:
        raise ValueError(f"enumeration is limited to 0 ≤ n ≤ 400 (got {n})")
    r = np.arange(n + 1, dtype=np.int32)
    tp, fn, fp = np.meshgrid(r, r, r, indexing="ij", copy=False)
    keep = (tp + fn + fp) <= n
    tp, fn, fp = tp[keep], fn[keep], fp[keep]
    cells = Cells(tp, fn, fp, (n - tp - fn - fp).astype(np.int32))
    for array in cells:
        array.setflags(write=False)
    return cells


def multinomial_log_weights(cells: Cells, p: np.ndarray) -> np.ndarray:
    """log P(CM) under Multinomial(n, p) for each matrix (Eq. 4.13, corrected); p in ``CELL_ORDER``."""
    n = cells.tp[0] + cells.fn[0] + cells.fp[0] + cells.tn[0] if cells.tp.size else 0
    out = np.full(cells.tp.shape, gammaln(n + 1))
    for counts, prob in zip(cells, p):
        counts = np.asarray(counts, float)
        out -= gammaln(counts + 1)
        if prob > 0:
            out += counts * np.log(prob)
        else:
            out[counts > 0] = -np.inf
    return out


def hole_counts(n: int, metrics: Sequence[str] = tuple(CM_METRICS)) -> dict[str, int]:
    """How many of the C(n + 3, 3) matrices of size n leave each metric undefined (by enumeration)."""
    cells = configurations(n)
    return {m: int(np.count_nonzero(~np.isfinite(CM_METRICS[m](cells)))) for m in metrics}


def seed_hole_count(metric: str, n: int) -> str:
    """Theorem 4.3 as printed, for display next to the enumerated count (its PT bound fails from n = 4)."""
    family = CM_METRICS[metric].family
    if family in ("binomial", "benefit"):
        return "0"
    if family == "jrm":
        return str(n + 1)
    if metric == "f1":
        return "1"
    if metric == "mcc":
        return str(4 * n)
    if n >= 3:
        upper = math.exp(0.5772156649) * n * math.log(math.log(n)) + 0.6483 * n / math.log(math.log(n))
        return f"≥ {2 * n + 2}, < {upper:.1f}"
    return f"≥ {2 * n + 2}"


def te_pair_holes(n1: int, n2: int) -> tuple[int, int]:
    """(correct, as printed) counts of matrix pairs (CM₁ of n1 rows, CM₂ of n2 rows) with TE undefined.

    TE needs FP₁ > 0 and FP₂ > 0. Pairs with FP₁ = 0 or FP₂ = 0: C(n1+2,2)·N(n2) + N(n1)·C(n2+2,2) − both; the
    seed's C(n1+2,2) + C(n2+2,2) − 1 counts single matrices, not pairs.
    """
    z1, z2 = math.comb(n1 + 2, 2), math.comb(n2 + 2, 2)
    correct = z1 * configuration_count(n2) + configuration_count(n1) * z2 - z1 * z2
    return correct, z1 + z2 - 1


def undefined_probability(metric: str, n: int, p: np.ndarray) -> float | None:
    """P(metric undefined) for a matrix of n rows drawn from cell probabilities p; None where no closed form."""
    p = dict(zip(CELL_ORDER, np.asarray(p, float)))
    spec = CM_METRICS.get(metric)
    if metric == "ofi" or spec is None or spec.family in ("binomial", "benefit"):
        return 0.0
    if spec.family == "jrm":
        return float(max(1 - p[spec.cells[0]] - p[spec.cells[1]], 0.0) ** n)
    if metric == "f1":
        return float(p["tn"] ** n)
    if metric == "mcc":           # any empty margin; two margins are empty together only when one cell has all rows
        margins = [p["fp"] + p["tn"], p["tp"] + p["fn"], p["fn"] + p["tn"], p["tp"] + p["fp"]]
        return float(min(max(sum(m ** n for m in margins) - sum(v ** n for v in p.values()), 0.0), 1.0))
    return None


# ----------------------------------------------------------------------------------------------- null distributions

def binom_cdf(k, n, p) -> np.ndarray:
    """P(X ≤ k), X ~ Bin(n, p), broadcasting; k below 0 gives 0, k ≥ n gives 1."""
    k, n = np.broadcast_arrays(np.floor(np.asarray(k, float)), np.asarray(n, float))
    inside = (k >= 0) & (k < n)
    out = np.where(k >= n, 1.0, 0.0)
    out[inside] = _binom_cdf(k[inside], n[inside], p)
    return out


def binom_sf(k, n, p) -> np.ndarray:
    """P(X > k), X ~ Bin(n, p), broadcasting."""
    k, n = np.broadcast_arrays(np.floor(np.asarray(k, float)), np.asarray(n, float))
    inside = (k >= 0) & (k < n)
    out = np.where(k < 0, 1.0, 0.0)
    out[inside] = _binom_sf(k[inside], n[inside], p)
    return out


def binom_pmf(k, n: int, p: float) -> np.ndarray:
    return _binom_pmf(np.asarray(k, float), float(n), p)


def _window(n: int, p: float, width: float = 12.0, pad: int = 30) -> np.ndarray:
    """Counts k of Bin(n, p) outside which the mass is negligible (< 1e-20)."""
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    sd = math.sqrt(n * p * (1 - p))
    lo = max(0, math.floor(n * p - width * sd - pad))
    hi = min(n, math.ceil(n * p + width * sd + pad))
    return np.arange(lo, hi + 1, dtype=np.int64)


def _trimmed(k: np.ndarray, n: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """Bin(n, p) weights on k, without the far-tail points whose weight is below 1e-20 of the largest one."""
    weights = binom_pmf(k, n, p)
    keep = weights > 1e-20 * max(weights.max(initial=0.0), 1e-300)
    if not keep.any():
        return k, weights
    lo, hi = np.flatnonzero(keep)[[0, -1]]
    return k[lo:hi + 1], weights[lo:hi + 1]


class Null:
    """The distribution of a metric S over matrices of n rows drawn from the reference (defined outcomes only)."""

    undefined: float = 0.0
    method: str = ""
    lattice: bool = True

    def cdf(self, s: np.ndarray) -> np.ndarray:          # P(S ≤ s | defined)
        raise NotImplementedError

    def sf(self, s: np.ndarray) -> np.ndarray:           # P(S ≥ s | defined)
        raise NotImplementedError

    def bounds(self) -> tuple[float, float]:
        """Values outside which the null has (almost) no mass, for the plot."""
        raise NotImplementedError


class BinomialNull(Null):
    method = "exact binomial"

    def __init__(self, n: int, p: float):
        self.n, self.p = n, float(min(max(p, 0.0), 1.0))

    def _k(self, s, up: bool) -> np.ndarray:
        x = np.atleast_1d(np.asarray(s, float)) * self.n
        return np.ceil(x - TOLERANCE) if up else np.floor(x + TOLERANCE)

    def cdf(self, s):
        return binom_cdf(self._k(s, False), self.n, self.p)

    def sf(self, s):
        return binom_sf(self._k(s, True) - 1, self.n, self.p)

    def normal_cdf(self, s) -> np.ndarray:
        mu, sd = self.n * self.p, math.sqrt(self.n * self.p * (1 - self.p))
        return sps.norm.cdf((self._k(s, False) + 0.5 - mu) / sd)

    def normal_sf(self, s) -> np.ndarray:
        mu, sd = self.n * self.p, math.sqrt(self.n * self.p * (1 - self.p))
        return sps.norm.sf((self._k(s, True) - 0.5 - mu) / sd)

    def normal_valid(self) -> bool:
        return self.n * self.p >= 5 and self.n * (1 - self.p) >= 5

    def berry_esseen(self) -> float:
        p, q = self.p, 1 - self.p
        return BERRY_ESSEEN_C0 * (p * q * (p * p + q * q)) / ((p * q) ** 1.5 * math.sqrt(self.n))

    def bounds(self):
        k = _window(self.n, self.p, width=6.0, pad=3)
        return k[0] / self.n, k[-1] / self.n

    def support(self) -> np.ndarray:
        return _window(self.n, self.p, width=8.0, pad=5) / self.n


def peizer_pratt_cdf(x: int, n: int, p: float) -> float | None:
    """Peizer & Pratt (1968) approximation of P(X ≤ x), X ~ Bin(n, p), with the 1/50 refinement (Eq. 4.46–4.47).

    Valid (error < 0.1%) for min(x + 1, n − x) ≥ 2; returns None outside that range or at p ∈ {0, 1}.
    """
    q = 1 - p
    if min(x + 1, n - x) < 2 or not 0 < p < 1:
        return None
    s, f = x + 0.5, n - x - 0.5
    d = x + 2 / 3 - (n + 1 / 3) * p + 0.02 * (q / (x + 1) - p / (n - x) + (q - 0.5) / (n + 1))
    gap = s - n * p
    if abs(gap) < 1e-12:
        return float(sps.norm.cdf(d / math.sqrt((n + 1 / 6) * p * q)))
    deviance = 2 * (s * math.log(s / (n * p)) + f * math.log(f / (n * q)))
    z = abs(d) / math.sqrt((n + 1 / 6) * p * q) * math.sqrt(n * p * q) / abs(gap) * math.sqrt(max(deviance, 0.0))
    # the sign is d's: near x + ½ ≈ np the two terms can disagree (x = 1, n = 51, p = 0.03), and only d's is right
    return float(sps.norm.cdf(math.copysign(z, d)))


class BenefitNull(Null):
    """𝓑 = (FP − FN)/n with m = FP + FN ~ Bin(n, p₊ + p₋) and FP | m ~ Bin(m, p₊/(p₊ + p₋)): exact in O(n)."""

    method = "exact trinomial"

    def __init__(self, n: int, p_plus: float, p_minus: float):
        self.n, self.p_plus, self.p_minus = n, float(p_plus), float(p_minus)
        self.q = min(self.p_plus + self.p_minus, 1.0)
        self.theta = self.p_plus / self.q if self.q > 0 else 0.5
        self.m, self.weights = _trimmed(_window(n, self.q), n, self.q)

    def _sum(self, s, upper: bool) -> np.ndarray:
        s = np.atleast_1d(np.asarray(s, float))
        k = np.ceil(s * self.n - TOLERANCE) if upper else np.floor(s * self.n + TOLERANCE)
        m = self.m[None, :]
        if upper:       # S ≥ k ⇔ FP ≥ ⌈(k + m)/2⌉
            inner = binom_sf(np.ceil((k[:, None] + m) / 2) - 1, m, self.theta)
        else:           # S ≤ k ⇔ FP ≤ ⌊(k + m)/2⌋
            inner = binom_cdf(np.floor((k[:, None] + m) / 2), m, self.theta)
        return np.clip(inner @ self.weights, 0.0, 1.0)

    def cdf(self, s):
        return self._sum(s, upper=False)

    def sf(self, s):
        return self._sum(s, upper=True)

    def moments(self) -> tuple[float, float]:
        """(μ, σ²) of one summand X ∈ {+1, −1, 0}: 𝓑 has mean μ and variance σ²/n."""
        mu = self.p_plus - self.p_minus
        return mu, self.p_plus + self.p_minus - mu * mu

    def normal_cdf(self, s):
        mu, var = self.moments()
        k = np.floor(np.atleast_1d(np.asarray(s, float)) * self.n + TOLERANCE)
        return sps.norm.cdf((k + 0.5 - self.n * mu) / math.sqrt(self.n * var)) if var > 0 else (k >= 0) * 1.0

    def normal_sf(self, s):
        mu, var = self.moments()
        k = np.ceil(np.atleast_1d(np.asarray(s, float)) * self.n - TOLERANCE)
        return sps.norm.sf((k - 0.5 - self.n * mu) / math.sqrt(self.n * var)) if var > 0 else (k <= 0) * 1.0

    def berry_esseen(self) -> float:
        mu, var = self.moments()
        p0 = 1 - self.p_plus - self.p_minus
        gamma = self.p_plus * abs(1 - mu) ** 3 + self.p_minus * abs(-1 - mu) ** 3 + p0 * abs(mu) ** 3
        return BERRY_ESSEEN_C0 * gamma / (var ** 1.5 * math.sqrt(self.n)) if var > 0 else float("nan")

    def pmf(self) -> tuple[np.ndarray, np.ndarray]:
        """(values k/n, P(S = k)) over the lattice where the mass is not negligible."""
        mu, var = self.moments()
        half = 10 * math.sqrt(self.n * var) + 10
        k = np.arange(max(-self.n, math.floor(self.n * mu - half)), min(self.n, math.ceil(self.n * mu + half)) + 1)
        cum = self.cdf(np.append(k[0] - 1, k) / self.n)
        return k / self.n, np.clip(np.diff(cum), 0, None)

    def bounds(self):
        mu, var = self.moments()
        half = 6 * math.sqrt(var / self.n) + 3 / self.n
        return max(-1.0, mu - half), min(1.0, mu + half)


class JRMNull(Null):
    """S = c_i/(c_i + c_j): Σ_k Bin(k; n, p_{i+j}) · BinCDF(⌊S·k⌋; k, θ), θ = p_i/p_{i+j} (Theorem 4.9)."""

    method = "exact joint-ratio"
    lattice = False

    def __init__(self, n: int, p_pair: float, theta: float, condition: bool = True):
        self.n, self.p_pair, self.theta, self.condition = n, float(p_pair), float(theta), condition
        k = _window(n, self.p_pair)
        self.k, self.weights = _trimmed(k[k >= 1], n, self.p_pair)
        self.undefined = float((1 - self.p_pair) ** n)
        self.defined = 1.0 - self.undefined
        if not condition:
            self.method = "exact joint-ratio (seed-literal, not conditioned)"

    def _sum(self, s, upper: bool) -> np.ndarray:
        s = np.atleast_1d(np.asarray(s, float))
        k = self.k[None, :]
        if upper:
            inner = binom_sf(np.ceil(s[:, None] * k - TOLERANCE) - 1, k, self.theta)
        else:
            inner = binom_cdf(np.floor(s[:, None] * k + TOLERANCE), k, self.theta)
        total = inner @ self.weights
        if self.condition and self.defined > 0:
            total = total / self.defined
        return np.clip(total, 0.0, 1.0)

    def cdf(self, s):
        return self._sum(s, upper=False)

    def sf(self, s):
        return self._sum(s, upper=True)

    def bounds(self):
        mean_k = max(self.n * self.p_pair, 1.0)
        half = 6 * math.sqrt(self.theta * (1 - self.theta) / mean_k) + 1 / mean_k
        return max(0.0, self.theta - half), min(1.0, self.theta + half)


class EmpiricalNull(Null):
    """A null given by weighted values: exact enumeration (weights = probabilities) or Monte Carlo draws.

    p-values are direct weighted counts (O(R), no sort); the sorted view for plots and vector CDFs is built
    only when asked for."""

    lattice = False

    def __init__(self, values: np.ndarray, weights: np.ndarray | None, method: str, undefined: float | None = None):
        values = np.asarray(values, float)
        weights = np.full(values.size, 1.0 / max(values.size, 1)) if weights is None else np.asarray(weights, float)
        defined = np.isfinite(values)
        self.method = method
        self.draws = values.size if method == "Monte Carlo" else 0
        self.size = int(defined.sum())                  # defined draws (or defined matrices when enumerating)
        total = weights.sum()
        self.undefined = float(weights[~defined].sum() / total) if undefined is None else float(undefined)
        mass = weights[defined]
        self._values = values[defined]
        self._mass = mass / mass.sum() if mass.sum() > 0 else mass
        self._sorted = None

    def _view(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if self._sorted is None:
            order = np.argsort(self._values, kind="stable")
            values, mass = self._values[order], self._mass[order]
            self._sorted = (values, mass, np.cumsum(mass), np.cumsum(mass[::-1])[::-1])
        return self._sorted

    @property
    def values(self) -> np.ndarray:
        return self._view()[0]

    @property
    def mass(self) -> np.ndarray:
        return self._view()[1]

    def cdf(self, s):
        s = np.atleast_1d(np.asarray(s, float))
        if not self.size:
            return np.full(s.shape, np.nan)
        values, _, cum, _ = self._view()
        idx = np.searchsorted(values, s + TOLERANCE, side="right")
        return np.where(idx > 0, cum[np.maximum(idx - 1, 0)], 0.0)

    def sf(self, s):
        s = np.atleast_1d(np.asarray(s, float))
        if not self.size:
            return np.full(s.shape, np.nan)
        values, _, _, upper = self._view()
        idx = np.searchsorted(values, s - TOLERANCE, side="left")
        return np.where(idx < values.size, upper[np.minimum(idx, values.size - 1)], 0.0)

    def share_at_most(self, s: float) -> float:
        """P(S ≤ s | defined) as a plain weighted share (the percentile; no Monte Carlo correction)."""
        return float(self._mass[self._values <= s + TOLERANCE].sum())

    def p_values(self, s: float) -> tuple[float, float]:
        """One-sided tails at s; Monte Carlo ones carry the +1 correction ((1 + #extreme)/(1 + draws))."""
        lower = self.share_at_most(s)
        upper = float(self._mass[self._values >= s - TOLERANCE].sum())
        if self.draws:
            r = self.size
            lower, upper = (1 + lower * r) / (1 + r), (1 + upper * r) / (1 + r)
        return lower, upper

    def bounds(self):
        if not self.size:
            return 0.0, 1.0
        values, _, cum, _ = self._view()
        lo = values[min(np.searchsorted(cum, 1e-4), values.size - 1)]
        hi = values[min(np.searchsorted(cum, 1 - 1e-4), values.size - 1)]
        return float(lo), float(hi)


@dataclass(frozen=True)
class NullPlot:
    """A null distribution aggregated for drawing: probability mass at (or in bins around) each value."""

    values: np.ndarray
    mass: np.ndarray
    width: float
    binned: bool


def plot_data(null: Null, max_points: int = 150) -> NullPlot:
    """At most ``max_points`` bars: the exact lattice when it is small, else bins from the exact CDF."""
    if isinstance(null, EmpiricalNull):
        distinct, index = np.unique(np.round(null.values, 12), return_inverse=True)
        if distinct.size <= max_points:
            width = float(np.min(np.diff(distinct))) if distinct.size > 1 else 0.02
            return NullPlot(distinct, np.bincount(index, weights=null.mass), width, False)
        lo, hi = null.bounds()
        edges = np.linspace(lo, hi, max_points + 1)
        mass, _ = np.histogram(np.clip(null.values, lo, hi), bins=edges, weights=null.mass)
        return NullPlot((edges[:-1] + edges[1:]) / 2, mass, float(edges[1] - edges[0]), True)
    if isinstance(null, BinomialNull):
        values = null.support()
        if values.size <= max_points:
            return NullPlot(values, binom_pmf(np.rint(values * null.n), null.n, null.p), 1 / null.n, False)
    if isinstance(null, BenefitNull):
        lo, hi = null.bounds()
        if (hi - lo) * null.n <= max_points:
            k = np.arange(math.floor(lo * null.n), math.ceil(hi * null.n) + 1)
            cum = null.cdf(np.append(k[0] - 1, k) / null.n)
            return NullPlot(k / null.n, np.clip(np.diff(cum), 0, None), 1 / null.n, False)
    lo, hi = null.bounds()
    if hi <= lo:
        hi = lo + 1e-6
    edges = np.linspace(lo, hi, max_points + 1)
    cum = null.cdf(edges)
    mass = np.clip(np.diff(cum), 0, None)
    mass[0] += cum[0]                      # the lower tail beyond the plotted range goes to the first bar
    return NullPlot((edges[:-1] + edges[1:]) / 2, mass, float(edges[1] - edges[0]), True)


# ----------------------------------------------------------------------------------------------- MATCH

@dataclass(frozen=True)
class MatchParams:
    reference: str = "complement"       # "complement" (all rows minus the group), "population", or a group's name
    method: str = "exact"               # "exact", "normal" or "peizer_pratt" (approximations used only where valid)
    metrics: tuple[str, ...] = MATCH_METRICS
    draws: int = 10_000                 # Monte Carlo draws (MCC, F1, PT above the enumeration limit; OFI)
    seed: int = 0
    alpha: float = 0.05
    condition_on_defined: bool = True   # A4: JRM probabilities among defined outcomes (False: the seed's literal sum)
    enumeration_limit: int = ENUMERATION_LIMIT


@dataclass(frozen=True)
class MatchResult:
    group: str
    metric: str
    n: int
    score: float | None                 # the group's observed metric
    reference_score: float | None       # the reference's own metric (its expected value at large n)
    cdf: float | None                   # P(S ≤ score | defined) at the group's size under the reference
    p_lower: float | None
    p_upper: float | None
    p_value: float | None               # two-sided
    undefined_probability: float | None # P(metric undefined) for a group of n rows under the reference
    method: str
    error_bound: float | None = None    # Berry–Esseen bound on |F − Φ| for a normal approximation
    note: str = ""
    p_adjusted: float | None = None     # Benjamini–Hochberg across the table

    def to_dict(self) -> dict:
        return {"score": self.score, "reference_score": self.reference_score, "cdf": self.cdf,
                "p_lower": self.p_lower, "p_upper": self.p_upper, "p_value": self.p_value,
                "p_adjusted": self.p_adjusted, "undefined_probability": self.undefined_probability,
                "method": self.method, "n": self.n, "note": self.note or None}


def monte_carlo_draws(n: int, reference: ConfusionCounts, params: MatchParams, stream: int = 0) -> Cells:
    """``params.draws`` matrices of n rows from the reference's cells. The generator is seeded by (seed, stream, n,
    reference counts), so the same question always gets the same draws: the plotted null and the table agree.
    A small cache lets MCC, F1 and PT of one group share the draws."""
    key = (int(params.seed), stream, int(n), int(params.draws),
           *(int(round(getattr(reference, f))) for f in CELL_ORDER))
    return _draws(key)


@lru_cache(maxsize=4)
def _draws(key: tuple) -> Cells:
    seed, stream, n, draws, *cells = key
    rng = np.random.default_rng([seed, stream, n, *cells])
    counts = np.array(cells, dtype=float)
    sample = Cells.from_draws(rng.multinomial(n, counts / counts.sum(), size=draws))
    for array in sample:
        array.setflags(write=False)
    return sample


def null_distribution(metric: str, n: int, reference: ConfusionCounts, params: MatchParams = MatchParams()) -> Null:
    """The exact (or Monte Carlo) distribution of ``metric`` for n rows drawn from the reference's cells.

    For ``"ofi"`` it is OFI(group, reference) with both redrawn from the reference at their own sizes."""
    if metric == "ofi":
        own, ref = monte_carlo_draws(n, reference, params, 1), monte_carlo_draws(reference.n, reference, params, 2)
        return EmpiricalNull((own.fp - own.fn) / n - (ref.fp - ref.fn) / reference.n, None, "Monte Carlo", 0.0)
    p = dict(zip(CELL_ORDER, probabilities(reference)))
    spec = CM_METRICS[metric]
    if spec.family == "binomial":
        return BinomialNull(n, p[spec.cells[0]] + p[spec.cells[1]])
    if spec.family == "benefit":
        return BenefitNull(n, p["fp"], p["fn"])
    if spec.family == "jrm":
        pair = p[spec.cells[0]] + p[spec.cells[1]]
        return JRMNull(n, pair, p[spec.cells[0]] / pair if pair > 0 else 0.0, params.condition_on_defined)
    probs = np.array([p[c] for c in CELL_ORDER])
    exact_undefined = undefined_probability(metric, n, probs)
    if n <= params.enumeration_limit:
        cells = configurations(n)
        weights = np.exp(multinomial_log_weights(cells, probs))
        return EmpiricalNull(spec(cells), weights, "exact enumeration", exact_undefined)
    return EmpiricalNull(spec(monte_carlo_draws(n, reference, params)), None, "Monte Carlo", exact_undefined)


def match(counts: ConfusionCounts, reference: ConfusionCounts, metric: str, params: MatchParams = MatchParams(),
          group: str = "") -> MatchResult:
    """MATCH for one group and one metric against a reference's confusion counts (integers)."""
    n = int(counts.n)
    if metric == "ofi":
        return _match_ofi(counts, reference, params, group)
    spec = CM_METRICS[metric]
    score = _scalar(spec(Cells.of(counts)))
    ref_score = _scalar(spec(Cells.of(reference)))
    null = null_distribution(metric, n, reference, params)
    undefined = null.undefined
    if score is None:
        return MatchResult(group, metric, n, None, ref_score, None, None, None, None, undefined, null.method,
                           note=f"undefined for this group: {spec.undefined_when}")
    if (spec.family == "jrm" and null.defined <= 0) or (isinstance(null, EmpiricalNull) and not null.size):
        return MatchResult(group, metric, n, score, ref_score, None, None, None, None, undefined, null.method,
                           note="the reference never defines this metric at this size")
    method, bound = null.method, None
    lower, upper = _exact_tails(null, score)
    exact_lower = lower
    if params.method == "normal" and hasattr(null, "normal_cdf"):
        if not isinstance(null, BinomialNull) or null.normal_valid():
            lower, upper = float(null.normal_cdf(score)[0]), float(null.normal_sf(score)[0])
            method, bound = "normal (continuity-corrected)", null.berry_esseen()
        else:
            method += " (normal not valid: n·p or n·q below 5)"
    elif params.method == "peizer_pratt" and isinstance(null, BinomialNull):
        k = int(round(score * n))
        pp_lower, pp_upper = peizer_pratt_cdf(k, n, null.p), peizer_pratt_cdf(k - 1, n, null.p)
        if pp_lower is not None and pp_upper is not None:
            lower, upper, method = pp_lower, 1.0 - pp_upper, "Peizer–Pratt"
        else:
            method += " (Peizer–Pratt needs min(x + 1, n − x) ≥ 2)"
    cdf = null.share_at_most(score) if isinstance(null, EmpiricalNull) else exact_lower
    p_two = min(1.0, 2 * min(lower, upper))
    return MatchResult(group, metric, n, score, ref_score, cdf, lower, upper, p_two, undefined, method, bound)


def _exact_tails(null: Null, score: float) -> tuple[float, float]:
    if isinstance(null, EmpiricalNull):
        return null.p_values(score)
    return float(null.cdf(score)[0]), float(null.sf(score)[0])


def _match_ofi(counts, reference, params, group) -> MatchResult:
    """OFI(group, reference) = 𝓑_group − 𝓑_reference against both redrawn from the reference at their sizes."""
    n = int(counts.n)
    score = (counts.fp - counts.fn) / n - (reference.fp - reference.fn) / reference.n
    null = null_distribution("ofi", n, reference, params)
    lower, upper = null.p_values(score)
    return MatchResult(group, "ofi", n, float(score), 0.0, null.share_at_most(score), lower, upper,
                       min(1.0, 2 * min(lower, upper)), 0.0, "Monte Carlo (two-sample)")


def _scalar(values: np.ndarray) -> float | None:
    v = float(np.ravel(values)[0])
    return v if math.isfinite(v) else None


@dataclass(frozen=True)
class MatchAudit:
    attribute: str
    params: MatchParams
    names: tuple[str, ...]
    counts: dict                     # group → ConfusionCounts (benefit orientation)
    references: dict                 # group → ConfusionCounts it was compared with (None: it is the reference)
    results: list[MatchResult]
    reference_label: str

    def get(self, group: str, metric: str) -> MatchResult | None:
        return next((r for r in self.results if r.group == group and r.metric == metric), None)

    def significant(self) -> list[MatchResult]:
        return [r for r in self.results if r.p_adjusted is not None and r.p_adjusted < self.params.alpha]


def reference_counts(names: Sequence[str], counts: Sequence[ConfusionCounts],
                     reference: str) -> tuple[dict, str]:
    """The reference each group is compared with: the complement, the whole population, or one named group."""
    total = ConfusionCounts(*(sum(getattr(c, f) for c in counts) for f in CELL_ORDER))
    if reference == "complement":
        refs = {name: ConfusionCounts(*(getattr(total, f) - getattr(c, f) for f in CELL_ORDER))
                for name, c in zip(names, counts)}
        return refs, "all other rows"
    if reference == "population":
        return {name: total for name in names}, "the whole population"
    if reference not in names:
        raise ValueError(f"the reference group '{reference}' is not one of the groups ({', '.join(names)})")
    ref = counts[list(names).index(reference)]
    return {name: (None if name == reference else ref) for name in names}, f"group '{reference}'"


def match_groups(attribute: str, names: Sequence[str], counts: Sequence[ConfusionCounts],
                 params: MatchParams = MatchParams(), progress: Progress | None = None) -> MatchAudit:
    """MATCH for every group × metric, with Benjamini–Hochberg across the whole table."""
    report = progress or (lambda *_: None)
    names = tuple(names)
    refs, label = reference_counts(names, counts, params.reference)
    unknown = [m for m in params.metrics if m not in MATCH_METRICS]
    if unknown:
        raise ValueError(f"unknown MATCH metric(s): {', '.join(unknown)}")
    results = []
    for g, (name, own) in enumerate(zip(names, counts)):
        report(g / max(len(names), 1), f"MATCH for {name}")
        ref = refs[name]
        if ref is None or ref.n == 0 or own.n == 0:
            why = "it is the reference" if ref is None else "the reference is empty" if own.n else "the group is empty"
            results += [MatchResult(name, m, int(own.n), None, None, None, None, None, None, None, "—", note=why)
                        for m in params.metrics]
            continue
        for metric in params.metrics:
            results.append(match(own, ref, metric, params, name))
    adjusted = stats.benjamini_hochberg([np.nan if r.p_value is None else r.p_value for r in results])
    results = [replace(r, p_adjusted=None if not np.isfinite(a) else float(a)) for r, a in zip(results, adjusted)]
    report(1.0, "Done")
    return MatchAudit(attribute, params, names, dict(zip(names, counts)), refs, results, label)


def analyse(pred: Predictions, attribute: str | None = None, threshold: float = 0.5, benefit: str = "positive",
            params: MatchParams = MatchParams(), progress: Progress | None = None) -> MatchAudit:
    view = pred.groups(attribute)
    counts = group_counts(pred, view, threshold, benefit)
    return match_groups(view.attribute, view.names, counts, params, progress)


def verdict(result: MatchResult, alpha: float = 0.05, reference: str = "the reference") -> str:
    """Words a meeting understands: never a bare pass/fail."""
    label = METRIC_LABELS.get(result.metric, result.metric)
    if result.score is None:
        chance = "" if result.undefined_probability is None else (
            f" (a group of {result.n:,} drawn from {reference} would leave it undefined with probability "
            f"{result.undefined_probability:.3g})")
        return f"{label} is undefined here: {result.note or 'no value'}{chance}."
    if result.p_value is None:
        return f"{label} = {fmt(result.score)} cannot be tested: {result.note}."
    p = result.p_adjusted if result.p_adjusted is not None else result.p_value
    share = f"{100 * result.cdf:.1f}%" if result.cdf is not None else "—"
    if result.metric == "ofi":
        base = (f"OFI against {reference} = {fmt(result.score)} at n = {result.n:,}; redrawing both from {reference}'s "
                f"error pattern gives at most this in {share} of draws.")
    else:
        base = (f"{label} = {fmt(result.score)} at n = {result.n:,} vs {fmt(result.reference_score)} for {reference}; "
                f"{share} of same-size groups drawn from {reference} score at most this.")
    adjusted = f"adjusted p {fmt_p(p)}" if result.p_adjusted is not None else f"p {fmt_p(p)}"
    if p < alpha:
        direction = "higher" if result.p_upper is not None and result.p_upper <= result.p_lower else "lower"
        return f"{base} Unlikely to be sampling noise at n = {result.n:,}: {direction} than {reference} ({adjusted})."
    return f"{base} Not distinguishable from sampling noise at n = {result.n:,} ({adjusted})."


# ----------------------------------------------------------------------------------------------- CPS

def cps_cells(cells: Cells, reference_probs: np.ndarray, lam: float = 5.0) -> Cells:
    """Algorithm 1 vectorised: α = CM + λ·p_ref, CM_smooth = α/Σα · n (real-valued, same total)."""
    if lam < 0:
        raise ValueError("the prior scale λ must be ≥ 0")
    n = cells.n
    alpha = [np.asarray(c, float) + lam * p for c, p in zip(cells, reference_probs)]
    total = sum(alpha)
    return Cells(*(divide_or_zero(a * n, total) for a in alpha))


def divide_or_zero(a, b):
    out = np.zeros(np.broadcast(a, b).shape)
    np.divide(a, b, out=out, where=np.asarray(b) != 0)
    return out


def cps(counts: ConfusionCounts, reference: ConfusionCounts, lam: float = 5.0) -> ConfusionCounts:
    """Cross-Prior Smoothing of one group's counts towards a reference (λ = 5 by default; λ = 0: unchanged)."""
    smooth = cps_cells(Cells.of(counts), probabilities(reference), lam)
    return ConfusionCounts(*(float(np.ravel(getattr(smooth, f))[0]) for f in CELL_ORDER))


@dataclass(frozen=True)
class CPSRow:
    group: str
    n: int
    raw: ConfusionCounts
    smoothed: ConfusionCounts
    raw_metrics: dict                # metric → float | None
    smoothed_metrics: dict


def cps_groups(names: Sequence[str], counts: Sequence[ConfusionCounts], lam: float = 5.0,
               reference: str = "complement", metrics: Sequence[str] = tuple(CM_METRICS)) -> list[CPSRow]:
    refs, _ = reference_counts(names, counts, reference)
    rows = []
    for name, own in zip(names, counts):
        ref = refs[name]
        smooth = own if ref is None or ref.n == 0 else cps(own, ref, lam)
        raw_cells, smooth_cells = Cells.of(own), Cells.of(smooth)
        rows.append(CPSRow(name, int(own.n), own, smooth,
                           {m: _scalar(CM_METRICS[m](raw_cells)) for m in metrics},
                           {m: _scalar(CM_METRICS[m](smooth_cells)) for m in metrics}))
    return rows


@dataclass(frozen=True)
class ErrorCurves:
    """Exact expected squared error of a small sample's metric vs the full group's value, per sample size."""

    metric: str
    sizes: np.ndarray
    target: float                    # the full group's metric
    mse: dict                        # estimator label → array over sizes (mean over defined outcomes)
    defined_mass: dict               # estimator label → P(defined) over sizes


def expected_errors(counts: ConfusionCounts, reference: ConfusionCounts, metrics: Sequence[str],
                    sizes: Sequence[int], lams: Sequence[float] = (5.0,),
                    epsilons: Sequence[float] = (1.0,)) -> dict[str, ErrorCurves]:
    """Enumerate every matrix of n rows (n ≤ 150), weighted by the group's own multinomial, and average the
    squared error of the raw metric, additive ε-smoothing and CPS(λ) against the full group's metric."""
    sizes = np.array(sorted({int(s) for s in sizes}), dtype=int)
    if sizes.size == 0 or sizes[0] < 1 or sizes[-1] > CURVE_LIMIT:
        raise ValueError(f"sample sizes must lie in 1…{CURVE_LIMIT}")
    p_group, p_ref = probabilities(counts), probabilities(reference)
    targets = {m: _scalar(CM_METRICS[m](Cells.of(counts))) for m in metrics}
    labels = ["raw"] + [f"ε = {e:g}" for e in epsilons] + [f"CPS λ = {lam:g}" for lam in lams]
    mse = {m: {label: np.full(sizes.size, np.nan) for label in labels} for m in metrics}
    mass = {m: {label: np.full(sizes.size, np.nan) for label in labels} for m in metrics}
    for s, n in enumerate(sizes):
        cells = configurations(int(n))
        weights = np.exp(multinomial_log_weights(cells, p_group))
        variants = {"raw": cells}
        variants.update({f"ε = {e:g}": Cells(*(np.asarray(c, float) + e for c in cells)) for e in epsilons})
        variants.update({f"CPS λ = {lam:g}": cps_cells(cells, p_ref, lam) for lam in lams})
        for label, variant in variants.items():
            for m in metrics:
                if targets[m] is None:
                    continue
                values = CM_METRICS[m](variant)
                ok = np.isfinite(values)
                defined = weights[ok].sum()
                mass[m][label][s] = defined
                if defined > 0:
                    mse[m][label][s] = float(weights[ok] @ (values[ok] - targets[m]) ** 2 / defined)
    return {m: ErrorCurves(m, sizes, targets[m] if targets[m] is not None else float("nan"), mse[m], mass[m])
            for m in metrics}


# ----------------------------------------------------------------------------------------------- jaggedness

LEVELS = (1, 10, 25, 50, 75, 90, 99)


@dataclass(frozen=True)
class Jaggedness:
    """Percentile bands of a metric over random subsamples (without replacement) of a group, per size (Fig. 4.1)."""

    metric: str
    sizes: np.ndarray
    quantiles: dict                  # level (percent) → array over sizes (NaN where too few defined draws)
    undefined_share: np.ndarray      # share of draws where the metric is undefined, per size
    full_value: float | None         # the whole group's metric
    draws: int
    seed: int


def jaggedness(counts: ConfusionCounts, metric: str, sizes: Sequence[int], draws: int = 1000,
               seed: int = 0) -> Jaggedness:
    group_n = int(counts.n)
    sizes = np.array([s for s in sorted({int(s) for s in sizes}) if 1 <= s <= group_n], dtype=int)
    if sizes.size == 0:
        raise ValueError(f"no subsample size fits in a group of {group_n} rows")
    rng = np.random.default_rng(seed)
    colours = np.array([int(getattr(counts, f)) for f in CELL_ORDER], dtype=np.int64)
    spec = CM_METRICS[metric]
    quantiles = {level: np.full(sizes.size, np.nan) for level in LEVELS}
    undefined = np.zeros(sizes.size)
    for s, n in enumerate(sizes):
        sample = Cells.from_draws(rng.multivariate_hypergeometric(colours, int(n), size=draws, method="marginals"))
        values = spec(sample)
        ok = np.isfinite(values)
        undefined[s] = 1 - ok.mean()
        if ok.sum() >= 10:
            for level, q in zip(LEVELS, np.percentile(values[ok], LEVELS)):
                quantiles[level][s] = q
    return Jaggedness(metric, sizes, quantiles, undefined, _scalar(spec(Cells.of(counts))), draws, seed)


__all__ = ["MATCH_METRICS", "MatchParams", "MatchResult", "MatchAudit", "match", "match_groups", "analyse",
           "null_distribution", "verdict", "cps", "cps_groups", "expected_errors", "jaggedness", "hole_counts",
           "configuration_count", "cell_value_count", "te_pair_holes", "undefined_probability", "peizer_pratt_cdf"]
