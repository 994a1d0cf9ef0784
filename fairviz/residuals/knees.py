"""Knee points of a sorted-residual curve ([1] §7.1): Q(p) = d₍⌈np⌉₎ over all n points
of a group → LOWESS (span 0.1, 3 robustness iterations) → Kneedle (S = 1).

Up to ``MAX_POINTS`` rows per group the curve is every order statistic, at p_j = j/n (j = 1 … n), as the paper
smooths it. Above, it is Q on ``MAX_POINTS`` evenly spaced percentiles p_j = j/m (the same formula with m < n;
at m = n the two are one). Either way the x values are evenly spaced, which makes both steps exact and fast:

- ``lowess_uniform`` is statsmodels' ``lowess`` (same windows, tricube and bisquare weights, the same special
  cases) for evenly spaced x. Inside the curve every window has the same shape, so the weighted sums are
  convolutions (FFT, O(n log n) per curve); the k/2 points at each end, whose windows are fixed and radii vary,
  are summed directly. It smooths a batch of curves at once (the bootstrap re-detects knees in every resample).
- ``kneedle`` is ``kneed.KneeLocator(..., interp_method="interp1d", online=False)`` with the same floating-point
  steps, vectorised over the batch instead of kneed's loop over points.
Both are tested against statsmodels and kneed.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.fft import irfft, next_fast_len, rfft

from fairviz.core.stats import WORKERS

MAX_POINTS = 20_000        # all n points per group up to this many rows; above, Q on this many percentiles
BOOT_POINTS = 2_000        # curve of each bootstrap resample (F_h/F_v intervals only; point estimates use MAX_POINTS)
LOWESS_FRAC = 0.1
LOWESS_ITERATIONS = 3
SENSITIVITY = 1.0
MIN_N = 50
RELIABLE_N = 1000          # [1] App. B: below this per group, knees come with a warning
BATCH = 32                 # curves smoothed together (bounds the FFT buffers: BATCH × 2n complex numbers)
ILL_CONDITIONED = 100      # a window whose weighted mean offset² exceeds this × its weighted x variance is fit directly


@dataclass(frozen=True)
class Knee:
    side: str               # "left" (end of the steep lower tail) or "right" (start of the steep upper tail)
    percentile: float       # q, a fraction in (0, 1]
    residual: float         # r = the raw (unsmoothed) quantile at q
    boundary: bool = False  # knee at the first or last point of the curve: kept, but flagged

    def to_dict(self) -> dict:
        return {"side": self.side, "percentile": self.percentile, "residual": self.residual,
                "boundary": self.boundary}


@dataclass(frozen=True)
class KneeParams:
    max_points: int = MAX_POINTS
    frac: float = LOWESS_FRAC
    iterations: int = LOWESS_ITERATIONS
    sensitivity: float = SENSITIVITY
    min_n: int = MIN_N
    # The end-to-end bootstrap of F_h/F_v re-detects knees on Q at ``boot_points`` percentiles: LOWESS costs grow with
    # the square of the curve size (its end windows), and the resamples' curves come from a 2,048-value support
    # anyway. Measured on 1M rows × 5 groups, 200 resamples: every 2.5/97.5% bound of the knees' percentile and
    # residual within 0.001 of the 20,000-point curves', 15× faster (benchmarks/bench_engine.py, engine2 note).
    boot_points: int = BOOT_POINTS


# ----------------------------------------------------------------------------------------------- the curve

def curve_size(n: int, max_points: int = MAX_POINTS) -> int:
    """Points on the knee curve of n rows: all of them up to ``max_points``, else ``max_points``."""
    return int(min(n, max_points))


def percentiles(m: int) -> np.ndarray:
    """p_j = j/m, j = 1 … m."""
    return np.arange(1, m + 1) / m


def quantile_curve(sorted_values: np.ndarray, m: int) -> np.ndarray:
    """Q(p_j) = d₍⌈n·j/m⌉₎ at p_j = j/m (integer arithmetic, no rounding); with m = n it is the sorted sample.
    Works on the last axis of a batch."""
    n = sorted_values.shape[-1]
    j = np.arange(1, m + 1, dtype=np.int64)
    return sorted_values[..., (n * j + m - 1) // m - 1]


def quantiles_from_counts(support: np.ndarray, counts: np.ndarray, m: int) -> np.ndarray:
    """``quantile_curve`` of samples given as count vectors over a sorted support (rows of ``counts``), without
    expanding them: the bootstrap's resamples are count vectors already."""
    return quantiles_of_cumulative(support, np.cumsum(counts, axis=1), m)


def quantiles_of_cumulative(support: np.ndarray, cum: np.ndarray, m: int) -> np.ndarray:
    """``quantiles_from_counts`` from cumulative counts (rows of ``cum``)."""
    j = np.arange(1, m + 1, dtype=np.int64)
    out = np.empty((cum.shape[0], m))
    for b, c in enumerate(cum):
        rank = (int(c[-1]) * j + m - 1) // m                    # 1-based order statistic ⌈n·j/m⌉
        out[b] = support[np.minimum(np.searchsorted(c, rank, side="left"), support.size - 1)]
    return out


# ----------------------------------------------------------------------------------------------- LOWESS

@dataclass(frozen=True)
class _Plan:
    """statsmodels' LOWESS neighbourhoods on m evenly spaced points x_j = (j + 1)/m."""
    m: int
    k: int                  # points per window: int(frac·m), at least 2
    c: int                  # an interior point i has the window [i − c, i − c + k)
    step: float             # x spacing
    kernel: np.ndarray      # tricube weight of offset −c … k − 1 − c inside the curve

    @property
    def interior(self) -> slice:
        return slice(self.c, self.m - self.k + self.c + 1)


def _plan(m: int, frac: float) -> _Plan:
    k = min(max(int(frac * m + 1e-10), 2), m)
    c = k // 2                       # statsmodels centres the window; on even k the extra point is on the left
    radius = max(c, k - 1 - c)
    offsets = np.arange(-c, k - c)
    return _Plan(m, k, c, 1.0 / m, _tricube(np.abs(offsets) / radius))


def _tricube(dist: np.ndarray) -> np.ndarray:
    inner = 1.0 - dist * dist * dist
    return inner * inner * inner


def lowess_uniform(curves: np.ndarray, frac: float = LOWESS_FRAC, iterations: int = LOWESS_ITERATIONS) -> np.ndarray:
    """``statsmodels.nonparametric.lowess(y, x, frac, it=iterations)`` of each row of ``curves`` (B, m) against
    evenly spaced x (any evenly spaced x gives the same fit)."""
    curves = np.atleast_2d(np.asarray(curves, dtype=float))
    plan, tools = _setup(curves.shape[1], float(frac))
    out = np.empty_like(curves)
    for start in range(0, curves.shape[0], BATCH):
        out[start:start + BATCH] = _lowess(curves[start:start + BATCH], plan, tools, iterations)
    return out


def _lowess(y: np.ndarray, plan: "_Plan", tools: "_Tools", iterations: int) -> np.ndarray:
    robust = np.ones_like(y)
    for step in range(iterations + 1):
        fitted = _fit(y, robust, plan, tools)
        if step < iterations:
            robust = _bisquare_weights(y, fitted)
    return fitted


@lru_cache(maxsize=2)
def _setup(m: int, frac: float) -> tuple[_Plan, "_Tools"]:
    """Kept for the last two curve sizes: above the cutoff every group and pooled pair has the same size (at most
    2 × 32 MB for 20,000 points)."""
    plan = _plan(m, frac)
    return plan, _Tools(plan)


class _Tools:
    """What every pass of a LOWESS call reuses: the kernels' FFTs and the ends' weight matrices (read-only)."""

    def __init__(self, plan: _Plan):
        m, k, c = plan.m, plan.k, plan.c
        self.nfft = next_fast_len(m + k - 1)
        offsets = np.arange(-c, k - c) * plan.step
        kernels = (plan.kernel, plan.kernel * offsets, plan.kernel * offsets ** 2)
        self.kernel_fft = [rfft(kern[::-1], self.nfft) for kern in kernels]
        j = np.arange(k)
        # the ends: the first c points share the window [0, k), the last k − 1 − c points [m − k, m); there the
        # radius is the distance to the window's far end (statsmodels' rule), so the weights are not a kernel
        self.left_rows = np.arange(c)
        self.right_rows = np.arange(m - k + c + 1, m)
        self.ends = []
        for rows, origin in ((self.left_rows, 0), (self.right_rows, m - k)):
            position = rows - origin
            radius = np.maximum(position, k - 1 - position)
            weights = _tricube(np.abs(j[None, :] - position[:, None]) / radius[:, None]) if rows.size else \
                np.zeros((0, k))
            weights = weights.T.copy()
            weights.setflags(write=False)
            self.ends.append((rows, origin, position.astype(float), weights))
        for spectrum in self.kernel_fft:
            spectrum.setflags(write=False)
        positive = [plan.kernel[plan.kernel > 0]] + [w[w > 0] for *_, w in self.ends if w.size]
        self.least_kernel = float(min(part.min() for part in positive))
        self._plan = plan

    def window_weights(self, points: np.ndarray) -> np.ndarray:
        """The tricube weights of the windows of ``points`` over their k points, one row per point."""
        plan = self._plan
        out = np.broadcast_to(plan.kernel, (points.size, plan.k)).copy()
        for rows, _, _, weights in self.ends:
            at = np.searchsorted(rows, points)
            inside = (at < rows.size) & (rows[np.minimum(at, rows.size - 1)] == points) if rows.size else \
                np.zeros(points.size, bool)
            out[inside] = weights.T[at[inside]]
        return out


def _fit(y: np.ndarray, robust: np.ndarray, plan: _Plan, tools: _Tools) -> np.ndarray:
    """One weighted local-linear pass: the fit at every point from the robustness weights of the last pass."""
    m, k = plan.m, plan.k
    sums = np.empty((5,) + y.shape)          # S0, S1, S2, T0, T1 in the local coordinate u = x_j − x_i
    ry = robust * y
    # inside the curve every window has the same shape: each sum is a correlation with a fixed kernel (FFT)
    inner = plan.interior
    spectra = (rfft(robust, tools.nfft, axis=1, workers=WORKERS), rfft(ry, tools.nfft, axis=1, workers=WORKERS))
    for slot, (signal, kernel) in enumerate(((0, 0), (0, 1), (0, 2), (1, 0), (1, 1))):
        full = irfft(spectra[signal] * tools.kernel_fft[kernel][None, :], tools.nfft, axis=1, workers=WORKERS)
        sums[slot][:, inner] = full[:, k - 1:m]
    # the ends: one matrix product per end gives Σ w·r·jᵖ and Σ w·r·y·jᵖ, shifted to u = (j − i)·step
    b = y.shape[0]
    j = np.arange(k, dtype=float)
    for rows, origin, position, weights in tools.ends:
        if not rows.size:
            continue
        r, t = robust[:, origin:origin + k], ry[:, origin:origin + k]
        p = (np.concatenate([r, r * j, r * j * j, t, t * j]) @ weights).reshape(5, b, -1)
        h = plan.step
        sums[0][:, rows] = p[0]
        sums[1][:, rows] = h * (p[1] - position * p[0])
        sums[2][:, rows] = h * h * (p[2] - 2 * position * p[1] + position ** 2 * p[0])
        sums[3][:, rows] = p[3]
        sums[4][:, rows] = h * (p[4] - position * p[3])
    s0, s1, s2, t0, t1 = sums
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_u = s1 / s0
        spread = np.maximum(s2 / s0 - mean_u ** 2, 1e-12)
        fitted = t0 / s0 - mean_u * (t1 / s0 - mean_u * t0 / s0) / spread
        # Where these one-pass moments lose digits, fit the window directly as statsmodels does: FFT sums carry an
        # absolute error near 1e-13 of the kernel's mass (almost all robustness weight gone), and s2/s0 − mean² cancels
        # where the weight sits far off the point (a few points left at a window's edge: an extrapolation, 0.03 off
        # on t₁-distributed curves at it = 1 before)
        direct = (s0 < 1e-7 * plan.kernel.sum()) | ~(mean_u ** 2 <= ILL_CONDITIONED * spread)
    rows, points = np.nonzero(direct)
    if rows.size:
        fitted[rows, points] = _direct_fit(y, robust, plan, tools, rows, points)
    # statsmodels skips the regression (keeps y) where fewer than two points carry weight
    ok = _weighted_points(robust, plan, tools) >= 2
    return np.where(ok, fitted, y)


def _direct_fit(y: np.ndarray, robust: np.ndarray, plan: _Plan, tools: "_Tools", rows: np.ndarray,
                points: np.ndarray) -> np.ndarray:
    """statsmodels' local-linear fit of the windows of (rows, points), term by term: the weighted mean of x first,
    then the weighted variance about it (two passes, floored at 1e-12 as statsmodels does):
    ŷ_i = ȳ + (x_i − x̄)·Σ w (x − x̄) y / Σ w (x − x̄)²."""
    out = np.empty(rows.size)
    offsets = np.arange(plan.k, dtype=float)
    for start in range(0, rows.size, 512):                                          # bounded copies
        b, i = rows[start:start + 512], points[start:start + 512]
        left = np.clip(i - plan.c, 0, plan.m - plan.k)
        window = left[:, None] + np.arange(plan.k)[None, :]
        weights = tools.window_weights(i)
        weights *= robust[b[:, None], window]
        values = y[b[:, None], window]
        with np.errstate(invalid="ignore", divide="ignore"):
            weights /= weights.sum(axis=1, keepdims=True)
            centre = weights @ offsets                                              # x̄, in steps from the left end
            deviation = offsets[None, :] - centre[:, None]
            weighted = weights * deviation
            spread = np.maximum(np.einsum("ij,ij->i", weighted, deviation) * plan.step ** 2, 1e-12)
            slope = np.einsum("ij,ij->i", weighted, values) * plan.step / spread
            out[start:start + 512] = (np.einsum("ij,ij->i", weights, values)
                                      + (i - left - centre) * plan.step * slope)
    return out


def _weighted_points(robust: np.ndarray, plan: _Plan, tools: "_Tools") -> np.ndarray:
    """Points of each window whose regression weight, tricube × robustness, exceeds 1e-12 (statsmodels' test
    ``weights[j] > 1e-12``, on the product: a robustness weight of 1e-9 near the window's edge counts for nothing).

    Counted from the robustness weights alone where that settles the answer: a point with r > 1e-12 / (the smallest
    positive tricube weight) always counts, one with r ≤ 1e-12 never does. Only windows left in between (fewer than
    two sure points, at least two possible ones: heavy tails whose robustness iterations zero most of a window) are
    counted product by product. Counts of 2 and more are exact only as "at least 2", which is all the fit reads."""
    m, k, c = plan.m, plan.k, plan.c
    left = np.clip(np.arange(m) - c, 0, m - k)

    def in_window(flags: np.ndarray) -> np.ndarray:
        cum = np.zeros((flags.shape[0], m + 1))
        np.cumsum(flags, axis=1, out=cum[:, 1:])
        return cum[:, left + k] - cum[:, left]

    possible = in_window(robust > 1e-12)
    # the tricube weight is 0 at distance = radius: at most two points of a window, hence the − 2
    sure = in_window(robust > 1e-12 / tools.least_kernel) - 2
    count = np.where(sure >= 2, sure, possible)
    b, i = np.nonzero((sure < 2) & (possible >= 2))
    for start in range(0, b.size, 1024):                                            # bounded copies
        rows, points = b[start:start + 1024], i[start:start + 1024]
        windows = robust[rows[:, None], left[points][:, None] + np.arange(k)[None, :]]
        count[rows, points] = np.sum(windows * tools.window_weights(points) > 1e-12, axis=1)
    return count


def _bisquare_weights(y: np.ndarray, fitted: np.ndarray) -> np.ndarray:
    """statsmodels' robustness weights: bisquare of |residual| / (6 × median |residual|); when the median is 0,
    weight 1 for the points fitted exactly and 0 for the others."""
    resid = np.abs(y - fitted)
    median = np.median(resid, axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = np.where(median > 0, resid / (6.0 * median), (resid > 0).astype(float))
    u = np.minimum(u, 1.0)
    return (1.0 - u ** 2) ** 2


# ----------------------------------------------------------------------------------------------- Kneedle

def kneedle(x: np.ndarray, smooth: np.ndarray, sensitivity: float = SENSITIVITY) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the concave (left) and convex (right) knee of each increasing row of ``smooth`` (B, m) over
    ``x``, −1 where kneed finds none: ``KneeLocator(x, row, S, curve, "increasing", "interp1d", online=False)``."""
    smooth = np.atleast_2d(np.asarray(smooth, dtype=float))
    x = np.asarray(x, dtype=float)
    m = x.size
    xn = (x - x.min()) / (x.max() - x.min())
    lo, hi = smooth.min(axis=1, keepdims=True), smooth.max(axis=1, keepdims=True)
    flat = ~np.isfinite(smooth).all(axis=1) | ((hi - lo)[:, 0] <= 1e-12)
    with np.errstate(invalid="ignore", divide="ignore"):
        yn = (smooth - lo) / (hi - lo)
    concave = _first_knee(yn - xn[None, :], xn, sensitivity)
    mirrored_x = np.flip(1 - xn)
    convex = _first_knee(np.flip(yn.max(axis=1, keepdims=True) - yn, axis=1) - mirrored_x[None, :], mirrored_x,
                         sensitivity)
    convex = np.where(convex >= 0, m - 1 - convex, -1)           # kneed reads the mirrored curve backwards
    return np.where(flat, -1, concave), np.where(flat, -1, convex)


def _first_knee(diff: np.ndarray, xn: np.ndarray, sensitivity: float) -> np.ndarray:
    """kneed's offline scan of the difference curve: from each local maximum on, a knee is declared at that maximum
    when the curve drops below (maximum − S × mean x step), until a local minimum switches detection off."""
    b, m = diff.shape
    prev = diff[:, np.r_[0, 0:m - 1]]
    nxt = diff[:, np.r_[1:m, m - 1]]
    is_max = (diff >= prev) & (diff >= nxt)            # argrelextrema(np.greater_equal), mode "clip"
    is_min = (diff <= prev) & (diff <= nxt)
    index = np.arange(m)
    last = np.maximum.accumulate(np.where(is_max | is_min, index[None, :], -1), axis=1)
    rows = np.arange(b)[:, None]
    safe = np.maximum(last, 0)
    active = (last >= 0) & is_max[rows, safe] & ~is_min[rows, safe]
    threshold = diff[rows, safe] - sensitivity * np.abs(np.diff(xn).mean())
    hit = active[:, :-1] & (diff[:, 1:] < threshold[:, :-1])
    found = hit.any(axis=1)
    first = np.argmax(hit, axis=1)
    return np.where(found, last[np.arange(b), first], -1)


# ----------------------------------------------------------------------------------------------- knees

def detect_knees(residuals: np.ndarray, settings: KneeParams = KneeParams(),
                 sorted_input: bool = False) -> tuple[Knee | None, Knee | None]:
    """The two knees (left, right) of one residual sample; ``None`` where there is none (too few rows, a flat
    curve, or Kneedle finds none)."""
    d = np.asarray(residuals, dtype=float)
    d = d if sorted_input else np.sort(d, kind="stable")
    if d.size < settings.min_n or d[-1] == d[0]:
        return None, None
    m = curve_size(d.size, settings.max_points)
    raw = quantile_curve(d, m)
    found = detect_knees_batch(raw[None, :], settings)[0]
    return _as_knees(found, m)


def detect_knees_weighted(sorted_values: np.ndarray, weights: np.ndarray, settings: KneeParams = KneeParams(),
                          search: np.ndarray | None = None,
                          search_weights: np.ndarray | None = None) -> tuple[Knee | None, Knee | None]:
    """``detect_knees`` of the rows that sorted ``sorted_values`` (entries) with ``weights`` rows each stand for,
    without expanding them: Q(p_j) is read off the cumulative weights (every order statistic when the group has at
    most ``max_points`` rows, so the curve is the expanded sample's own).

    ``search``: the entries' values as the knee search reads them (in the same order, never decreasing), for
    example each residual at the resolution of the engine's score cells, so that rows and their binned table find
    the same knee; the knee's residual is still read from ``sorted_values``. ``search_weights``: rows per search
    value when the search reads other entries than ``sorted_values`` (the same rows, grouped otherwise)."""
    values = np.asarray(sorted_values, dtype=float)
    n = int(np.sum(weights))
    if n < settings.min_n or values[-1] == values[0]:
        return None, None
    m = curve_size(n, settings.max_points)
    counts = np.asarray(weights)[None, :]
    raw = quantiles_from_counts(values, counts, m)
    if search is None:
        return _as_knees(detect_knees_batch(raw, settings)[0], m)
    search = np.asarray(search, dtype=float)
    search_counts = counts if search_weights is None else np.asarray(search_weights)[None, :]
    if np.any(search[1:] < search[:-1]):      # other entries, or a mean rounded across a cell edge: sort them
        order = np.argsort(search, kind="stable")
        search, search_counts = search[order], search_counts[:, order]
    found = detect_knees_batch(quantiles_from_counts(search, search_counts, m), settings)[0]
    for column in (0, 2):                                 # the raw residual at the percentile found
        if np.isfinite(found[column]):
            found[column + 1] = raw[0, int(round(found[column] * m)) - 1]
    return _as_knees(found, m)


def detect_knees_batch(curves: np.ndarray, settings: KneeParams = KneeParams(), progress=None) -> np.ndarray:
    """Knees of many quantile curves ``curves`` (B, m) at p_j = j/m: array (B, 4) of (q_left, r_left, q_right,
    r_right), NaN where a knee is missing. Used for each group and by the end-to-end bootstrap of F_h and F_v."""
    curves = np.atleast_2d(np.asarray(curves, dtype=float))
    b, m = curves.shape
    p = percentiles(m)
    out = np.full((b, 4), np.nan)
    plan, tools = _setup(m, float(settings.frac))
    for start in range(0, b, BATCH):
        raw = curves[start:start + BATCH]
        smooth = _lowess(raw, plan, tools, settings.iterations)
        concave, convex = kneedle(p, smooth, settings.sensitivity)
        # the concave knee lies right of the convex one on odd curves: name them by position
        first, second = np.minimum(concave, convex), np.maximum(concave, convex)
        first = np.where((concave < 0) | (convex < 0), concave, first)
        second = np.where((concave < 0) | (convex < 0), convex, second)
        rows = np.arange(raw.shape[0])
        for column, index in ((0, first), (2, second)):
            ok = index >= 0
            out[start + rows[ok], column] = p[index[ok]]
            out[start + rows[ok], column + 1] = raw[rows[ok], index[ok]]
        if progress is not None:
            progress(min(1.0, (start + BATCH) / b))
    return out


def _as_knees(row: np.ndarray, m: int) -> tuple[Knee | None, Knee | None]:
    """(left, right) Knee objects from one row of ``detect_knees_batch`` on an m-point curve; a knee at the curve's
    first or last point is kept but flagged as a boundary knee."""
    def make(side: str, q: float, r: float) -> Knee | None:
        if not np.isfinite(q):
            return None
        return Knee(side, float(q), float(r), boundary=bool(q <= 1.5 / m or q >= 1.0))

    return make("left", row[0], row[1]), make("right", row[2], row[3])
