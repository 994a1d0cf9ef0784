"""Null distributions of a metric over matrices of n rows drawn from a reference's cells ([3] §4.5): exact
binomial, the exact trinomial sum for 𝓑, the joint-ratio sum (Theorem 4.9), and empirical nulls (enumeration or
Monte Carlo); the Peizer–Pratt approximation; the nulls aggregated for drawing.

- binomial metrics ``(c_i + c_j)/n``: ``k ~ Bin(n, p_{i+j})`` (normal or Peizer–Pratt on request);
- marginal benefit ``𝓑 = (FP − FN)/n``: conditioning on ``m = FP + FN ~ Bin(n, p₊ + p₋)`` gives
  ``FP | m ~ Bin(m, p₊/(p₊ + p₋))``, an exact O(n) sum (equal to [3] Eq. 4.27; [3]'s normal approximation
  Eq. 4.29 is dimensionally wrong, the corrected one is ``Φ((k + ½ − nμ)/√(nσ²))``);
- joint-ratio metrics ``c_i/(c_i + c_j)``: ``Σ_k Bin(k; n, p_{i+j}) · BinCDF(⌊S_obs·k⌋; k, θ)``, conditioned on
  the metric being defined (fairviz's choice: [3]'s sum leaves the undefined case out and does not add up to 1),
  with ``P(undefined) = (1 − p_{i+j})^n`` reported beside it.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps

try:        # boost's binomial kernels without scipy.stats' per-call argument checking (4× faster than bdtr)
    from scipy.special._ufuncs import _binom_cdf, _binom_pmf, _binom_sf
except ImportError:  # pragma: no cover - other scipy versions
    _binom_cdf, _binom_sf, _binom_pmf = sps.binom.cdf, sps.binom.sf, sps.binom.pmf

from fairviz.sample_size.results import NullPlot

TOLERANCE = 1e-9                # float guard for ⌊S·k⌋ and score ties
BERRY_ESSEEN_C0 = 0.56          # upper end of the Berry–Esseen constant (Shevtsova 2010)


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


