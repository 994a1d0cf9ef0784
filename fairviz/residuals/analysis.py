"""Residual Distribution Fairness (seed 000): sorted residual curves, knees, RDF metrics, error concentration.

``analyse(predictions, attribute, params)`` is the one entry point of the page and the CLI. It returns a
``ResidualAudit`` of small dataclasses (no figures); ``fairviz.figures.residuals`` draws them. Pair metrics
are defined for an ordered pair (i, j) and every signed quantity means "i minus j".
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Callable

import numpy as np
import pandas as pd

from fairviz.core import stats
from fairviz.core.ece import ece, ece_regime, ece_resamples
from fairviz.core.counts import confusion_by_group, decisions, difference
from fairviz.data import Predictions
from fairviz.residuals.knees import (
    RELIABLE_N,
    Knee,
    KneeParams,
    curve_size,
    detect_knees_batch,
    detect_knees_weighted,
    quantiles_of_cumulative,
)

STAB_EPS = 1e-6
REGION_EPS = 0.05
CURVE_POINTS = 2000          # a drawn curve never has more points than this, whatever n is
OUTCOMES = ("all", "y0", "y1")
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class RDFParams:
    region_eps: float = REGION_EPS
    region_mode: str = "percentile"      # "percentile" (default, §7.1) or "residual" (Alg. 1)
    knees: KneeParams = field(default_factory=KneeParams)
    resamples: int = 1000                # bootstrap and permutation
    knee_resamples: int = 200            # end-to-end bootstrap of F_h / F_v (knees re-detected each time)
    seed: int = 0
    threshold: float = 0.5


@dataclass(frozen=True)
class Curve:
    """A downsampled sorted-residual curve: percentile (fraction), residual, and the row behind each point."""
    percentile: np.ndarray
    residual: np.ndarray
    row: np.ndarray              # position in the Predictions arrays (weighted data: in ``Predictions.rows()``)


@dataclass(frozen=True)
class GroupSummary:
    name: str
    n: int
    positives: int
    base_rate: float
    mean_score: float
    mean_residual: float
    median_residual: float
    median_residual_y0: float
    median_residual_y1: float
    ece: float
    ece_regime: str
    left_knee: Knee | None
    right_knee: Knee | None
    knee_rows: int               # rows of this group in its knee regions

    @property
    def knees(self) -> list[Knee]:
        return [k for k in (self.left_knee, self.right_knee) if k is not None]


@dataclass(frozen=True)
class PairMetrics:
    group_i: str
    group_j: str
    f_pattern: float
    f_pattern_y0: float
    f_pattern_y1: float
    f_pattern_mean: float
    f_dist: float
    f_dist_y0: float
    f_dist_y1: float
    f_h: float
    f_v: float
    f_h_abs: float
    f_v_abs: float
    mean_decomposition: dict      # Theorem A.1: μ_i − μ_j = MD − Δ_base
    ci: dict                      # metric → stats.Interval
    p_median: float               # permutation test of |m_i − m_j|, two-sided
    p_dist: float                 # permutation test of F_dist (upper tail)
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class KneeConcentration:
    knee_mean: float
    nonknee_mean: float
    ratio: float
    ratio_ci: stats.Interval
    knee_mean_ci: stats.Interval
    nonknee_mean_ci: stats.Interval
    mann_whitney: stats.MannWhitney
    ece: float
    ece_ci: stats.Interval
    regime: str
    verdict: str                  # "supported" / "not supported" / "undefined"
    borderline: bool
    n_knee: int
    n_nonknee: int
    explanation: str


@dataclass(frozen=True)
class ResidualAudit:
    attribute: str
    params: RDFParams
    groups: list[GroupSummary]
    curves: dict                  # group → outcome ("all", "y0", "y1") → Curve
    pairs: list[PairMetrics]
    concentration: KneeConcentration
    region_rows: np.ndarray       # per entry of the Predictions (a row, or a cell of weighted data): its rows in D*
    warnings: tuple[str, ...] = ()
    _d_star: "_DStar | None" = field(default=None, repr=False, compare=False)

    @cached_property
    def _d_star_rows(self) -> tuple[np.ndarray, np.ndarray]:
        return self._d_star.rows()          # both per-row arrays in one pass (a million rows: ~0.3 s)

    @property
    def in_knee_region(self) -> np.ndarray:
        """bool per row: the diagnostic set D* (weighted data: per row of ``Predictions.rows()``, built on demand)."""
        return self._d_star_rows[0]

    @property
    def nearest_knee(self) -> np.ndarray:
        """per row: "left"/"right"/"" (which knee put it in D*), in the order of ``in_knee_region``."""
        return self._d_star_rows[1]

    def d_star_segments(self) -> pd.DataFrame:
        """D* as runs of entries: ``entry``, ``skip``, ``take`` (the entry's rows in D*, counted in residual order)
        and the ``knee`` ("left"/"right") — what a query for the input rows of weighted data needs."""
        return self._d_star.segments()

    def group(self, name: str) -> GroupSummary:
        return next(g for g in self.groups if g.name == name)

    def pair(self, i: str, j: str) -> PairMetrics:
        return next(p for p in self.pairs if (p.group_i, p.group_j) == (i, j))


# ----------------------------------------------------------------------------------------------- formulas

def residuals(score: np.ndarray, y: np.ndarray) -> np.ndarray:
    """D = P̂⁺ − Y ∈ [−1, 1] (float64)."""
    return np.asarray(score, dtype=float) - np.asarray(y, dtype=float)


def f_pattern(d_i: np.ndarray, d_j: np.ndarray) -> float:
    """1 − |m_i − m_j| / 2 with m the median residual; 1 means equal typical error."""
    if d_i.size == 0 or d_j.size == 0:
        return float("nan")
    return 1.0 - abs(float(np.median(d_i)) - float(np.median(d_j))) / 2.0


def f_dist(d_i: np.ndarray, d_j: np.ndarray) -> float:
    """∫₀¹ |Q_i(p) − Q_j(p)| dp, the Wasserstein-1 distance between the residual distributions."""
    return wasserstein_sorted(np.sort(d_i), np.sort(d_j))


def wasserstein_sorted(a: np.ndarray, b: np.ndarray, wa: np.ndarray | None = None,
                       wb: np.ndarray | None = None) -> float:
    """W1 of two sorted samples in linear time: integrate |Q_a − Q_b| over the merged quantile breakpoints.

    Equals ``scipy.stats.wasserstein_distance`` (tested to 1e-12) without re-sorting the rows each call. With
    weights (rows per entry) the breakpoints are the entries' cumulative shares: the same integral, no expansion.
    """
    if a.size == 0 or b.size == 0:
        return float("nan")
    cum_a = np.arange(1, a.size + 1) if wa is None else np.cumsum(wa)
    cum_b = np.arange(1, b.size + 1) if wb is None else np.cumsum(wb)
    na, nb = int(cum_a[-1]), int(cum_b[-1])
    # breakpoints k/n_a and k/n_b; timsort merges the two sorted runs in O(n)
    cuts = np.sort(np.concatenate([cum_a / na, cum_b / nb]), kind="stable")
    cuts[-1] = 1.0
    start = np.concatenate([[0.0], cuts[:-1]])
    width = cuts - start
    middle = start + width / 2                     # inside each interval, away from the jumps
    ra = np.minimum((middle * na).astype(np.int64), na - 1)          # 0-based order statistic of each sample
    rb = np.minimum((middle * nb).astype(np.int64), nb - 1)
    qa = a[ra] if wa is None else a[np.searchsorted(cum_a, ra, side="right")]
    qb = b[rb] if wb is None else b[np.searchsorted(cum_b, rb, side="right")]
    return float(np.sum(np.abs(qa - qb) * width))


def f_h(knees_i: tuple, knees_j: tuple, knees_pooled: tuple, absolute: bool = False) -> float:
    """Eq. 2: ½|Δq_ℓ/(q_g,ℓ + ε)| + ½|Δq_r/(q_g,r + ε)|; NaN when any knee is missing."""
    return _knee_gap(knees_i, knees_j, knees_pooled, "percentile", absolute)


def f_v(knees_i: tuple, knees_j: tuple, knees_pooled: tuple, absolute: bool = False) -> float:
    """Eq. 3: ½|Δr_ℓ/(|r_g,ℓ| + ε)| + ½|Δr_r/(|r_g,r| + ε)|; NaN when any knee is missing."""
    return _knee_gap(knees_i, knees_j, knees_pooled, "residual", absolute)


def _knee_gap(ki: tuple, kj: tuple, kg: tuple, attr: str, absolute: bool) -> float:
    if any(k is None for k in (*ki, *kj, *kg)):
        return float("nan")
    total = 0.0
    for a, b, g in zip(ki, kj, kg):
        gap = abs(getattr(a, attr) - getattr(b, attr))
        total += 0.5 * (gap if absolute else gap / (abs(getattr(g, attr)) + STAB_EPS))
    return total


def mean_decomposition(score_i, y_i, score_j, y_j, w_i=None, w_j=None) -> dict:
    """Theorem A.1: μ_i − μ_j = MD − Δ_base, with MD the mean-score gap and Δ_base the base-rate gap
    (``w_i``/``w_j``: rows per entry of weighted data)."""
    md = float(np.average(score_i, weights=w_i) - np.average(score_j, weights=w_j))
    delta_base = float(np.average(y_i, weights=w_i) - np.average(y_j, weights=w_j))
    mu_gap = float(np.average(residuals(score_i, y_i), weights=w_i) - np.average(residuals(score_j, y_j), weights=w_j))
    return {"mean_residual_gap": mu_gap, "mean_score_gap": md, "base_rate_gap": delta_base,
            "f_pattern_mean": 1.0 - abs(md - delta_base) / 2.0}


def percentile_ranks(d: np.ndarray) -> np.ndarray:
    """Mid-rank percentile (rank − ½)/n of each value within its sample, stable for ties (spec D-8)."""
    order = np.argsort(d, kind="stable")
    ranks = np.empty(d.size)
    ranks[order] = np.arange(1, d.size + 1)
    return (ranks - 0.5) / max(d.size, 1)


def knee_region(d: np.ndarray, knees: list[Knee], eps: float = REGION_EPS,
                mode: str = "percentile") -> tuple[np.ndarray, np.ndarray]:
    """Rows within ε of a knee: |u − q| ≤ ε in percentile mode, |d − r| < ε in residual mode (Alg. 1).
    Returns (mask, index of the nearest knee in ``knees`` or −1), in the order of ``d``."""
    order = np.argsort(d, kind="stable")
    mask_sorted, which_sorted = knee_region_sorted(d[order], knees, eps, mode)
    mask, which = np.empty_like(mask_sorted), np.empty_like(which_sorted)
    mask[order], which[order] = mask_sorted, which_sorted
    return mask, which


def knee_region_sorted(d_sorted: np.ndarray, knees: list[Knee], eps: float = REGION_EPS,
                       mode: str = "percentile") -> tuple[np.ndarray, np.ndarray]:
    """``knee_region`` for residuals already sorted (stably): the k-th value has percentile (k + ½)/n."""
    which = region_labels(np.arange(d_sorted.size), d_sorted.size, d_sorted, knees, eps, mode)
    return which >= 0, which


def region_labels(k: np.ndarray, n: int, d_k: np.ndarray | None, knees: list[Knee], eps: float = REGION_EPS,
                  mode: str = "percentile") -> np.ndarray:
    """The knee (index into ``knees``) whose region holds the row at sorted position k (of n) with residual d_k,
    −1 for none: within ε of the knee's percentile (percentile mode; u = (k + ½)/n) or residual (residual mode)."""
    if mode not in ("percentile", "residual"):
        raise ValueError(f"unknown knee-region mode {mode!r}")
    if not knees:
        return np.full(np.shape(k), -1)
    if mode == "percentile":
        u = (k + 0.5) / max(n, 1)
        dist = np.stack([np.abs(u - kn.percentile) for kn in knees])
        inside = dist <= eps + 1e-12
    else:
        dist = np.stack([np.abs(d_k - kn.residual) for kn in knees])
        inside = dist < eps
    mask = inside.any(0)
    return np.where(mask, np.argmin(np.where(inside, dist, np.inf), axis=0), -1)


def concentration_verdict(ece_value: float, ratio: float) -> tuple[str, bool]:
    """Residual Distribution Fairness §8.2: with ECE < 0.15 knees should concentrate error (the ratio *exceeds*
    1.5); with ECE ≥ 0.15 errors should be spread (0.8 ≤ ratio ≤ 1.2). The verdict reads the unrounded ratio.
    Returns (verdict, borderline): borderline is an extra word when the ratio rounds (one decimal, as the paper
    printed it) to a boundary of the rule in play, where the paper's rounded table could read it either way."""
    if not (np.isfinite(ece_value) and np.isfinite(ratio)):
        return "undefined", False
    if ece_value < 0.15:
        supported, boundaries = ratio > 1.5, (1.5,)
    else:
        supported, boundaries = 0.8 <= ratio <= 1.2, (0.8, 1.2)
    borderline = any(abs(round(ratio, 1) - b) < 1e-9 for b in boundaries)
    return ("supported" if supported else "not supported"), borderline


def rates_from_residuals(d: np.ndarray, y: np.ndarray, tau: float, w: np.ndarray | None = None) -> dict:
    """Theorem 6.1: PPR, TPR and FPR at threshold τ from the outcome-conditional residual survival functions
    (``w``: rows per entry of weighted data)."""
    w0, w1 = (None, None) if w is None else (w[y == 0], w[y == 1])
    d0, d1 = d[y == 0], d[y == 1]
    base = float(np.average(y, weights=w)) if y.size else float("nan")
    s0 = float(np.average(d0 >= tau, weights=w0)) if d0.size else None          # FPR = S⁽⁰⁾(τ)
    s1 = float(np.average(d1 >= tau - 1, weights=w1)) if d1.size else None      # TPR = S⁽¹⁾(τ − 1)
    ppr = (1 - base) * (s0 or 0.0) + base * (s1 or 0.0) if y.size else None
    return {"ppr": ppr, "tpr": s1, "fpr": s0}


# ----------------------------------------------------------------------------------------------- analysis

@dataclass(frozen=True)
class SortedGroup:
    """One group's entries (rows, or cells of weighted data) sorted stably by residual, with rows per entry."""
    entry: np.ndarray            # index into the Predictions arrays
    d: np.ndarray
    y: np.ndarray
    score: np.ndarray
    w: np.ndarray                # rows per entry (ones for row-level data)
    weights: np.ndarray | None   # ``w`` for weighted data, None for rows (plain means, as before)

    @cached_property
    def cum(self) -> np.ndarray:
        return np.cumsum(self.w)

    @property
    def n(self) -> int:
        return int(self.cum[-1]) if self.cum.size else 0

    def at(self, ranks) -> np.ndarray:
        """Values of the 0-based order statistics ``ranks`` of the group's rows."""
        return self.d[np.searchsorted(self.cum, ranks, side="right")]

    def median(self) -> float:
        n = self.n
        if not n:
            return float("nan")
        return float((self.at((n - 1) // 2) + self.at(n // 2)) / 2)

    def mean(self, x: np.ndarray) -> float:
        return float(np.average(x, weights=self.weights))

    def outcome(self, label: int) -> "SortedGroup":
        keep = self.y == label
        return SortedGroup(self.entry[keep], self.d[keep], self.y[keep], self.score[keep], self.w[keep],
                       None if self.weights is None else self.weights[keep])


def sort_groups(pred: Predictions, d: np.ndarray, members: list[np.ndarray]) -> list[SortedGroup]:
    w = pred.weight
    out = []
    for idx in members:
        rows = idx[np.argsort(d[idx], kind="stable")]
        weights = None if w is None else w[rows]
        out.append(SortedGroup(rows, d[rows], pred.y[rows], pred.score[rows],
                           np.ones(rows.size, dtype=np.int64) if w is None else weights, weights))
    return out


def merged_sorted(a: SortedGroup, b: SortedGroup) -> tuple[np.ndarray, np.ndarray]:
    d = np.concatenate([a.d, b.d])
    order = np.argsort(d, kind="stable")
    return d[order], np.concatenate([a.w, b.w])[order]


class _Region:
    """A group's knee regions over its sorted rows: which knee each sorted position belongs to (−1: none).

    Percentile mode: the label is constant between a few breakpoints (ε around each knee, midpoints between knees),
    found by evaluating the rule itself at the positions around them, so an entry of w rows is split exactly.
    Residual mode: the label depends on the residual, so a whole entry is in or out."""

    def __init__(self, sg: SortedGroup, knees: list[Knee], eps: float, mode: str):
        self.sg, self.knees, self.eps, self.mode = sg, knees, eps, mode
        n = sg.n
        if mode == "percentile" and knees and n:
            marks = [q + s * eps for q in (k.percentile for k in knees) for s in (-1, 1)]
            marks += [(a.percentile + b.percentile) / 2 for i, a in enumerate(knees) for b in knees[i + 1:]]
            guess = np.floor(np.asarray(marks) * n - 0.5).astype(np.int64)
            cand = np.unique(np.clip(np.concatenate([[0], (guess[:, None] + np.arange(-2, 4)).ravel()]), 0, n - 1))
            labels = region_labels(cand, n, None, knees, eps, mode)
            keep = np.concatenate([[True], labels[1:] != labels[:-1]])
            self.starts, self.labels = cand[keep], labels[keep]
        else:
            self.starts = self.labels = None

    def entry_labels(self) -> np.ndarray:
        return region_labels(None, self.sg.n, self.sg.d, self.knees, self.eps, self.mode)

    def counts(self) -> np.ndarray:
        """(entries, knees): rows of each sorted entry in each knee's region."""
        sg, k = self.sg, len(self.knees)
        out = np.zeros((sg.d.size, k), dtype=np.int64)
        if not k or not sg.n:
            return out
        if self.starts is None:                                   # residual mode: whole entries
            labels = self.entry_labels()
            inside = labels >= 0
            out[np.flatnonzero(inside), labels[inside]] = sg.w[inside]
            return out
        ends = np.append(self.starts[1:], sg.n)
        for j in range(k):
            seg = (ends - self.starts) * (self.labels == j)
            before = np.concatenate([[0], np.cumsum(seg)])

            def upto(x):                                         # rows of knee j among sorted positions < x
                t = np.searchsorted(self.starts, x, side="right") - 1
                return before[t] + np.minimum(x - self.starts[t], ends[t] - self.starts[t]) * (self.labels[t] == j)
            out[:, j] = upto(sg.cum) - upto(sg.cum - sg.w)
        return out

    def labels_at(self, positions: np.ndarray, entries: np.ndarray) -> np.ndarray:
        """Labels of sorted positions (``entries``: the sorted entry holding each)."""
        if not self.knees:
            return np.full(positions.size, -1)
        if self.starts is None:
            return self.entry_labels()[entries]
        return self.labels[np.searchsorted(self.starts, positions, side="right") - 1]


@dataclass(frozen=True)
class _DStar:
    """What expands D* to rows on demand: the groups' sorted entries and regions, and rows per entry."""
    groups: list
    regions: list
    weight: np.ndarray | None
    entries: int

    def segments(self) -> pd.DataFrame:
        parts = []
        for sg, region in zip(self.groups, self.regions):
            if not sg.n or not region.knees:
                continue
            sides = np.array([k.side for k in region.knees], dtype=object)
            if region.starts is None:                                   # residual mode: whole entries
                labels = region.entry_labels()
                inside = np.flatnonzero(labels >= 0)
                parts.append((sg.entry[inside], np.zeros(inside.size, np.int64), sg.w[inside], sides[labels[inside]]))
                continue
            first = sg.cum - sg.w                                       # sorted position of each entry's first row
            ends = np.append(region.starts[1:], sg.n)
            for start, end, label in zip(region.starts, ends, region.labels):
                if label < 0:
                    continue
                hit = np.arange(np.searchsorted(sg.cum, start, side="right"), np.searchsorted(first, end, side="left"))
                lo, hi = np.maximum(first[hit], start), np.minimum(sg.cum[hit], end)
                parts.append((sg.entry[hit], lo - first[hit], hi - lo, np.full(hit.size, sides[label], dtype=object)))
        if not parts:
            return pd.DataFrame({"entry": [], "skip": [], "take": [], "knee": []})
        entry, skip, take, knee = (np.concatenate(p) for p in zip(*parts))
        return pd.DataFrame({"entry": entry, "skip": skip, "take": take, "knee": knee})

    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        w = np.ones(self.entries, dtype=np.int64) if self.weight is None else self.weight
        offsets = np.cumsum(w) - w                                # first row of each entry in Predictions.rows()
        total = int(w.sum())
        mask = np.zeros(total, dtype=bool)
        nearest = np.full(total, "", dtype=object)
        for sg, region in zip(self.groups, self.regions):
            if not sg.n:
                continue
            ent = np.repeat(np.arange(sg.d.size), sg.w)
            pos = np.arange(sg.n)
            rows = offsets[sg.entry][ent] + (pos - (sg.cum - sg.w)[ent])
            labels = region.labels_at(pos, ent)
            inside = labels >= 0
            mask[rows[inside]] = True
            nearest[rows[inside]] = np.array([k.side for k in region.knees], dtype=object)[labels[inside]]
        return mask, nearest.astype(str)


def analyse(pred: Predictions, attribute: str | None = None, params: RDFParams = RDFParams(),
            progress: Progress | None = None) -> ResidualAudit:
    """The RDF audit of rows or of weighted data (``Predictions.weight``: the engine's sufficient statistics); on
    weighted data nothing is expanded to rows (curves, knees, medians, W1, tests and resamples read the counts), and
    D* per row is built only when asked (``ResidualAudit.in_knee_region``)."""
    report = progress or (lambda *_: None)
    view = pred.groups(attribute)
    d = residuals(pred.score, pred.y)
    names = list(view.names)
    members = [np.flatnonzero(view.codes == g) for g in range(len(names))]
    warnings: list[str] = []
    small: list[str] = []

    report(0.02, "Sorting residuals and finding knees")
    # every group is sorted once; all later statistics read these sorted views
    sorted_groups = sort_groups(pred, d, members)
    group_knees = stats.in_parallel(lambda sg: detect_knees_weighted(sg.d, sg.w, params.knees) if sg.d.size
                                    else (None, None), sorted_groups)
    region_rows = np.zeros(d.size, dtype=np.int64)
    regions, summaries, curves = [], [], {}
    offsets = None if pred.weight is None else np.cumsum(pred.weight) - pred.weight
    for g, (name, sg) in enumerate(zip(names, sorted_groups)):
        knees = [k for k in group_knees[g] if k is not None]
        region = _Region(sg, knees, params.region_eps, params.region_mode)
        regions.append(region)
        inside = region.counts().sum(1)
        region_rows[sg.entry] = inside
        summaries.append(_summary(name, sg, group_knees[g], int(inside.sum())))
        curves[name] = {o: _curve(sg, o, offsets) for o in OUTCOMES}
        if sg.n < RELIABLE_N:
            small.append(f"{name} ({sg.n:,})")
        if not knees:
            warnings.append(f"No knee found for group '{name}' (too few rows or a flat curve): F_h and F_v are undefined.")
    if small:
        warnings.insert(0, f"Knees need about {RELIABLE_N:,} rows per group to be reliable; smaller here: "
                           f"{', '.join(small)}.")

    resampler = _CountResampler(d, pred.y, members, params, pred.weight) if params.resamples > 0 else None
    # all-pairs work is bounded (fairviz.data.limits): pairs among the largest groups only; the knee resamples
    # feed only the pair intervals, so they are drawn for those groups alone
    compared = pred.limits.pair_groups(len(names))
    pair_list = pred.limits.pair_indices(len(names))
    knee_boot, p_values = [None] * compared, {}
    concentrate = partial(_concentration, pred.score, pred.y, d, region_rows, params, pred.weight,
                          ece_key=(pred.fingerprint, "all rows"))
    if resampler is None:
        concentration = concentrate()
    else:
        report(0.05, "Drawing bootstrap resamples")
        resampler.draw(range(compared))
        # on all cores at once: knees re-detected in each group's resamples, every pair's permutation tests, the
        # resamples' medians and the knee error concentration
        tasks = [partial(_knee_bootstrap, resampler, g, params) for g in range(compared)] + \
            [partial(_permutation_p_values, resampler, i, j) for i, j in pair_list] + \
            [partial(resampler.medians, g) for g in range(compared)] + [concentrate]
        done = stats.in_parallel(lambda task: task(), tasks, lambda f: report(
            0.1 + 0.6 * f, "Re-detecting knees in resamples, permutation tests, knee error concentration"))
        knee_boot = done[:compared]
        p_values = dict(zip(pair_list, done[compared:compared + len(pair_list)]))
        concentration = done[-1]
    if note := pred.limits.pair_note(view.attribute, len(names)):
        warnings.append(note)
    report(0.7, "Comparing pairs")
    pairs = stats.in_parallel(
        lambda pair: _pair_metrics(sorted_groups, group_knees, knee_boot, names, *pair, resampler, params, p_values),
        pair_list, lambda f: report(0.7 + 0.3 * f, "Comparing pairs"))
    if resampler and resampler.note:
        warnings.append(resampler.note)
    report(1.0, "Done")
    d_star = _DStar(sorted_groups, regions, pred.weight, d.size)
    return ResidualAudit(view.attribute, params, summaries, curves, pairs, concentration, region_rows,
                         tuple(warnings), d_star)


def _summary(name, sg: SortedGroup, knees, knee_rows) -> GroupSummary:
    value = ece(sg.score, sg.y, weights=sg.weights)
    n = sg.n
    positives = int(sg.y @ sg.w)
    return GroupSummary(name=name, n=n, positives=positives, base_rate=positives / n if n else float("nan"),
                        mean_score=sg.mean(sg.score), mean_residual=sg.mean(sg.d), median_residual=sg.median(),
                        median_residual_y0=sg.outcome(0).median(), median_residual_y1=sg.outcome(1).median(),
                        ece=value, ece_regime=ece_regime(value), left_knee=knees[0], right_knee=knees[1],
                        knee_rows=knee_rows)


def _curve(sg: SortedGroup, outcome: str, offsets: np.ndarray | None) -> Curve:
    """The sorted curve of one group (and outcome), thinned to ≤ CURVE_POINTS points by percentile. ``row`` is the
    row in the Predictions (weighted data: in ``Predictions.rows()``, whose rows follow the entries)."""
    if outcome != "all":
        sg = sg.outcome(1 if outcome == "y1" else 0)
    n = sg.n
    if n == 0:
        return Curve(np.empty(0), np.empty(0), np.empty(0, dtype=np.int64))
    take = np.arange(n) if n <= CURVE_POINTS else np.unique(np.linspace(0, n - 1, CURVE_POINTS).round().astype(int))
    if offsets is None:
        return Curve((take + 0.5) / n, sg.d[take], sg.entry[take])
    e = np.searchsorted(sg.cum, take, side="right")
    rows = offsets[sg.entry[e]] + (take - (sg.cum - sg.w)[e])
    return Curve((take + 0.5) / n, sg.d[e], rows)


class _CountResampler:
    """Per-group bootstrap count vectors over (outcome, residual) cells, drawn once and shared by all pairs.

    Resampling is stratified by group (group sizes are kept up to the Poisson bootstrap's 1/√n, see
    ``core.stats.bootstrap_counts``), so pair statistics use independent resamples of each group, as a two-sample
    bootstrap does. Weighted entries add their rows to their cell. Each group and each pair's permutations have their
    own random stream (from the seed, the group and the pair), so they can be drawn on several cores and a group gets
    the same resamples whichever other groups are analysed.
    """

    def __init__(self, d, y, members, params: RDFParams, weight: np.ndarray | None = None):
        self.seed = params.seed
        self.resamples = params.resamples
        self.compressed = stats.compress(d, -1.0, 1.0)
        k = self.compressed.support.size
        self.counts = []
        for idx in members:
            cells = self.compressed.codes[idx].astype(np.int64) + k * y[idx].astype(np.int64)
            self.counts.append(np.bincount(cells, minlength=2 * k) if weight is None else
                               np.bincount(cells, weights=weight[idx], minlength=2 * k).round().astype(np.int64))
        self._medians: dict[int, dict] = {}
        self._cumulative: dict[int, dict] = {}
        # the residuals of Y = 0 rows and of Y = 1 rows lie on opposite sides of 0: each outcome's CDFs are flat
        # outside the residual values its rows take in any group, so its resamples are kept (and W1 summed) there only
        pooled = np.sum(self.counts, axis=0)
        self.columns = {"all": slice(None)}
        for outcome, part in (("y0", pooled[:k]), ("y1", pooled[k:])):
            taken = np.flatnonzero(part)
            self.columns[outcome] = slice(int(taken[0]), int(taken[-1]) + 1) if taken.size else slice(0, 1)
        if self.compressed.step:
            self.note = (f"Resampling ran on residuals rounded to a grid of step {self.compressed.step:.4f} "
                         f"(more than {stats.MAX_SUPPORT:,} distinct values); point estimates are exact.")
        else:
            self.note = ""

    def draw(self, groups) -> None:
        """Draw the groups' resamples at once, on several cores."""
        stats.in_parallel(self.resampled, groups)

    def medians(self, g: int) -> dict:
        """Median residual of each resample of group g, for all rows and by outcome (computed once per group)."""
        if g not in self._medians:
            support = self.compressed.support
            self._medians[g] = {o: stats.median_of_cumulative(support[self.columns[o]], c)
                                for o, c in self.resampled(g).items()}
        return self._medians[g]

    def split(self, counts: np.ndarray) -> dict:
        """Cell counts (…, 2K) → counts over residual values for all rows, Y = 0 rows and Y = 1 rows."""
        k = self.compressed.support.size
        y0, y1 = counts[..., :k], counts[..., k:]
        return {"all": y0 + y1, "y0": y0, "y1": y1}

    def resampled(self, g: int) -> dict:
        """Group g's bootstrap resamples as cumulative counts over the residual values, for all rows and by outcome,
        drawn once per group (the knee curves, the medians and every pair's W1 read them)."""
        if g not in self._cumulative:
            boot = stats.bootstrap_counts(self.counts[g], self.resamples, np.random.default_rng([self.seed, 1, g]))
            # kept for every pair: each outcome only over its own residual values (``columns``), in 32 bits when
            # the resamples fit (a 20M-row audit holds 5 groups × 1,000 resamples of these)
            dtype = np.int32 if 2 * int(self.counts[g].sum()) < np.iinfo(np.int32).max else np.int64
            self._cumulative[g] = {o: np.cumsum(c[:, self.columns[o]], axis=-1, dtype=dtype)
                                   for o, c in self.split(boot).items()}
        return self._cumulative[g]


def _pair_metrics(sorted_groups: list[SortedGroup], group_knees, knee_boot, names, i, j,
                  resampler: _CountResampler, params: RDFParams, p_values: dict) -> PairMetrics:
    """All RDF metrics of the ordered pair (i, j), from the groups' sorted residuals (rows or weighted entries)."""
    a, b = sorted_groups[i], sorted_groups[j]
    pooled_knees = detect_knees_weighted(*merged_sorted(a, b), params.knees)
    ki, kj = group_knees[i], group_knees[j]
    warnings = []
    if all(k is not None for k in (*ki, *kj, *pooled_knees)):
        if pooled_knees[0].percentile < 0.01 or min(abs(pooled_knees[0].residual), abs(pooled_knees[1].residual)) < 0.01:
            warnings.append("A pooled knee lies near 0 (percentile or residual): F_h/F_v divide by it and can explode; "
                            "read F_h_abs/F_v_abs instead.")
    by_outcome = {"": (a, b), "_y0": (a.outcome(0), b.outcome(0)), "_y1": (a.outcome(1), b.outcome(1))}
    pattern = {suffix: median_parity(p, q) for suffix, (p, q) in by_outcome.items()}
    distance = {suffix: wasserstein_sorted(p.d, q.d, p.weights, q.weights) for suffix, (p, q) in by_outcome.items()}
    ci, p_median, p_dist = {}, float("nan"), float("nan")
    if params.resamples > 0:
        ci = _distribution_intervals(resampler, i, j)
        ci.update(_knee_metric_intervals(knee_boot[i], knee_boot[j], pooled_knees))
        p_median, p_dist = p_values[(i, j)]
    return PairMetrics(
        group_i=names[i], group_j=names[j],
        f_pattern=pattern[""], f_pattern_y0=pattern["_y0"], f_pattern_y1=pattern["_y1"],
        f_pattern_mean=1 - abs(a.mean(a.d) - b.mean(b.d)) / 2,
        f_dist=distance[""], f_dist_y0=distance["_y0"], f_dist_y1=distance["_y1"],
        f_h=f_h(ki, kj, pooled_knees), f_v=f_v(ki, kj, pooled_knees),
        f_h_abs=f_h(ki, kj, pooled_knees, absolute=True), f_v_abs=f_v(ki, kj, pooled_knees, absolute=True),
        mean_decomposition=mean_decomposition(a.score, a.y, b.score, b.y, a.weights, b.weights),
        ci=ci, p_median=p_median, p_dist=p_dist, warnings=tuple(warnings),
    )


def median_parity(a: SortedGroup, b: SortedGroup) -> float:
    """F_pattern of two sorted samples (NaN when either is empty)."""
    if not a.n or not b.n:
        return float("nan")
    return 1 - abs(a.median() - b.median()) / 2


def _distribution_intervals(resampler: _CountResampler, i: int, j: int) -> dict:
    """Bootstrap CIs of F_pattern and F_dist (all rows, Y = 0, Y = 1) from the groups' resampled counts."""
    support = resampler.compressed.support
    cum_i, cum_j = resampler.resampled(i), resampler.resampled(j)
    median_i, median_j = resampler.medians(i), resampler.medians(j)
    ci = {}
    for outcome, suffix in (("all", ""), ("y0", "_y0"), ("y1", "_y1")):
        gap = np.abs(median_i[outcome] - median_j[outcome])
        ci[f"f_pattern{suffix}"] = stats.percentile_interval(1 - gap / 2)
        cols = resampler.columns[outcome]            # the cumulative counts cover these residual values only
        ci[f"f_dist{suffix}"] = stats.percentile_interval(
            stats.wasserstein_of_cumulative(support[cols], cum_i[outcome], cum_j[outcome]))
    return ci


def _permutation_p_values(resampler: _CountResampler, i: int, j: int) -> tuple[float, float]:
    """Permutation tests of |m_i − m_j| (two-sided) and of F_dist (upper tail), group sizes kept (spec D-27)."""
    support = resampler.compressed.support
    obs_i, obs_j = resampler.split(resampler.counts[i])["all"], resampler.split(resampler.counts[j])["all"]
    rng = np.random.default_rng([resampler.seed, 2, i, j])
    perm_i, _ = stats.permutation_counts(obs_i + obs_j, int(obs_i.sum()), resampler.resamples, rng)
    cum_i = np.cumsum(perm_i, axis=-1)
    cum_j = np.cumsum(obs_i + obs_j)[None, :] - cum_i             # the other group holds the rest
    obs_gap = abs(stats.weighted_median(support, obs_i)[0] - stats.weighted_median(support, obs_j)[0])
    null_gap = np.abs(stats.median_of_cumulative(support, cum_i) - stats.median_of_cumulative(support, cum_j))
    obs_dist = stats.wasserstein_counts(support, obs_i, obs_j)[0]
    null_dist = stats.wasserstein_of_cumulative(support, cum_i, cum_j)
    return stats.permutation_p_value(obs_gap, null_gap), stats.permutation_p_value(obs_dist, null_dist)


def _knee_bootstrap(resampler: "_CountResampler | None", g: int, params: RDFParams) -> np.ndarray | None:
    """Knees re-detected in the first ``knee_resamples`` bootstrap resamples of group g: (B, 4) or None.

    The resamples are the count vectors the other intervals use, so no resample is ever sorted."""
    b = min(params.knee_resamples, params.resamples)
    if resampler is None or b <= 0 or resampler.counts[g].sum() < params.knees.min_n:
        return None
    m = curve_size(int(resampler.counts[g].sum()), min(params.knees.max_points, params.knees.boot_points))
    curves = quantiles_of_cumulative(resampler.compressed.support, resampler.resampled(g)["all"][:b], m)
    return detect_knees_batch(curves, params.knees)


def _knee_metric_intervals(boot_i, boot_j, pooled_knees) -> dict:
    """CIs of F_h and F_v from each group's re-detected knees. The pooled knees only normalise the gaps
    and are held at their full-sample values (re-detecting them per pair and resample would triple the cost)."""
    if boot_i is None or boot_j is None or any(k is None for k in pooled_knees):
        return {}
    ql, rl, qr, rr = (pooled_knees[0].percentile, pooled_knees[0].residual,
                      pooled_knees[1].percentile, pooled_knees[1].residual)
    fh = 0.5 * np.abs((boot_i[:, 0] - boot_j[:, 0]) / (ql + STAB_EPS)) + \
        0.5 * np.abs((boot_i[:, 2] - boot_j[:, 2]) / (qr + STAB_EPS))
    fv = 0.5 * np.abs((boot_i[:, 1] - boot_j[:, 1]) / (abs(rl) + STAB_EPS)) + \
        0.5 * np.abs((boot_i[:, 3] - boot_j[:, 3]) / (abs(rr) + STAB_EPS))
    return {"f_h": stats.percentile_interval(fh), "f_v": stats.percentile_interval(fv)}


def _concentration(score, y, d, region_rows, params: RDFParams, weight: np.ndarray | None = None,
                   ece_key=None) -> KneeConcentration:
    """Mean |D| in knee regions vs elsewhere, with a row bootstrap (regions fixed, spec D-26) and Mann–Whitney.
    The ECE and its interval are the calibration page's (one computation, ``core.ece.ece_resamples``).
    ``region_rows``: rows of each entry in D* (0/1 for rows; weighted data: of its ``weight`` rows)."""
    abs_d = np.abs(d)
    knee_w = region_rows
    rest_w = (1 if weight is None else weight) - region_rows
    n_knee, n_rest = int(knee_w.sum()), int(rest_w.sum())
    ece_value = ece(score, y, weights=weight)
    ratio_ci = knee_ci = rest_ci = ece_ci = stats.Interval(np.nan, np.nan)
    if params.resamples > 0:
        ece_ci = stats.percentile_interval(ece_resamples(score, y, params.resamples, params.seed, key=ece_key,
                                                         weights=weight))
        rng = np.random.default_rng(params.seed + 2)
        ratio_ci, knee_ci, rest_ci = _ratio_bootstrap(abs_d, knee_w, rest_w, params.resamples, rng)
    if weight is None:                      # rows: plain means and the row-level test, as always
        knee, rest = abs_d[knee_w > 0], abs_d[knee_w == 0]
        knee_mean = float(knee.mean()) if knee.size else float("nan")
        rest_mean = float(rest.mean()) if rest.size else float("nan")
        test = stats.mann_whitney(knee, rest)
    else:
        knee_mean = float(np.average(abs_d, weights=knee_w)) if n_knee else float("nan")
        rest_mean = float(np.average(abs_d, weights=rest_w)) if n_rest else float("nan")
        test = stats.mann_whitney_counts(abs_d, knee_w, rest_w)
    ratio = knee_mean / rest_mean if n_rest and rest_mean > 0 else float("nan")
    verdict, borderline = concentration_verdict(ece_value, ratio)
    regime = ece_regime(ece_value)
    expectation = ("errors should concentrate in knee regions (ratio > 1.5)" if ece_value < 0.15
                   else "errors should be spread out (ratio between 0.8 and 1.2); knees then mark where behaviour changes")
    explanation = (f"ECE {ece_value:.3f} is {regime}: {expectation}. Knee rows have mean |D| {knee_mean:.3f}, "
                   f"other rows {rest_mean:.3f}, ratio {ratio:.2f}.")
    return KneeConcentration(knee_mean, rest_mean, ratio, ratio_ci, knee_ci, rest_ci, test,
                             ece_value, ece_ci, regime, verdict, borderline, n_knee, n_rest, explanation)


def _ratio_bootstrap(abs_d, knee_w, rest_w, resamples, rng) -> tuple[stats.Interval, stats.Interval, stats.Interval]:
    """Row bootstrap of the knee / non-knee mean |D| and their ratio, from counts over (region, |D|) cells."""
    comp = stats.compress(abs_d, 0.0, 1.0)
    k = comp.support.size
    counts = np.concatenate([np.bincount(comp.codes, weights=rest_w * np.ones(abs_d.size), minlength=k),
                             np.bincount(comp.codes, weights=knee_w, minlength=k)]).round().astype(np.int64)
    boot = stats.bootstrap_counts(counts, resamples, rng)
    rest_counts, knee_counts = boot[:, :k], boot[:, k:]
    with np.errstate(invalid="ignore", divide="ignore"):
        knee_means = knee_counts @ comp.support / knee_counts.sum(1)
        rest_means = rest_counts @ comp.support / rest_counts.sum(1)
    return (stats.percentile_interval(knee_means / rest_means), stats.percentile_interval(knee_means),
            stats.percentile_interval(rest_means))


# ----------------------------------------------------------------------------------------------- threshold view

@dataclass(frozen=True)
class ThresholdCheck:
    """Theorem 6.1 at one threshold: each group's rates counted directly and read off the residual CDFs."""
    threshold: float
    groups: list[str]
    direct: dict                  # group → {"ppr", "tpr", "fpr"}
    from_residuals: dict          # group → {"ppr", "tpr", "fpr"}
    counts: dict                  # group → ConfusionCounts
    gaps: list[dict]              # per pair: dp/eo gaps both ways


def threshold_check(pred: Predictions, attribute: str | None, threshold: float) -> ThresholdCheck:
    view = pred.groups(attribute)
    d = residuals(pred.score, pred.y)
    confusion = confusion_by_group(pred.y, decisions(pred.score, threshold), view.codes, len(view.names),
                                   weights=pred.weight)
    direct, derived, counts = {}, {}, {}
    for g, name in enumerate(view.names):
        c = confusion[g]
        counts[name] = c
        direct[name] = {"ppr": c.ppr(), "tpr": c.tpr(), "fpr": c.fpr()}
        mask = view.codes == g
        derived[name] = rates_from_residuals(d[mask], pred.y[mask], threshold,
                                             None if pred.weight is None else pred.weight[mask])
    gaps = []
    for i, j in pred.limits.pair_indices(len(view.names)):
        a, b = view.names[i], view.names[j]
        row = {"group_i": a, "group_j": b}
        for source, rates in (("direct", direct), ("residual", derived)):
            row[f"dp_diff_{source}"] = difference(rates[a]["ppr"], rates[b]["ppr"])
            row[f"eo_tpr_diff_{source}"] = difference(rates[a]["tpr"], rates[b]["tpr"])
            row[f"eo_fpr_diff_{source}"] = difference(rates[a]["fpr"], rates[b]["fpr"])
        gaps.append(row)
    return ThresholdCheck(threshold, list(view.names), direct, derived, counts, gaps)
