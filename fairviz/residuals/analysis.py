"""Residual Distribution Fairness (seed 000): sorted residual curves, knees, RDF metrics, error concentration.

``analyse(predictions, attribute, params)`` is the one entry point of the page and the CLI. It returns a
``ResidualAudit`` of small dataclasses (no figures); ``fairviz.figures.residuals`` draws them. Pair metrics
are defined for an ordered pair (i, j) and every signed quantity means "i minus j".
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Callable

import numpy as np

from fairviz.core import stats
from fairviz.core.ece import ece, ece_interval, ece_regime
from fairviz.core.counts import confusion_by_group, decisions, difference
from fairviz.core.data import Predictions
from fairviz.residuals.knees import Knee, KneeSettings, RELIABLE_N, curve_size, detect_knees, detect_knees_batch, quantiles_from_counts

STAB_EPS = 1e-6
REGION_EPS = 0.05
CURVE_POINTS = 2000          # a drawn curve never has more points than this, whatever n is
OUTCOMES = ("all", "y0", "y1")
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class RDFParams:
    region_eps: float = REGION_EPS
    region_mode: str = "percentile"      # "percentile" (default, §7.1) or "residual" (Alg. 1)
    knees: KneeSettings = field(default_factory=KneeSettings)
    resamples: int = 1000                # bootstrap and permutation
    knee_resamples: int = 200            # end-to-end bootstrap of F_h / F_v (knees re-detected each time)
    seed: int = 0
    threshold: float = 0.5


@dataclass(frozen=True)
class Curve:
    """A downsampled sorted-residual curve: percentile (fraction), residual, and the row behind each point."""
    percentile: np.ndarray
    residual: np.ndarray
    row: np.ndarray              # position in the Predictions arrays


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
    in_knee_region: np.ndarray    # bool per row: the diagnostic set D*
    nearest_knee: np.ndarray      # per row: "left"/"right"/"" (which knee put it in D*)
    warnings: tuple[str, ...] = ()

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


def wasserstein_sorted(a: np.ndarray, b: np.ndarray) -> float:
    """W1 of two sorted samples in linear time: integrate |Q_a − Q_b| over the merged quantile breakpoints.

    Equals ``scipy.stats.wasserstein_distance`` (tested to 1e-12) without re-sorting the rows each call.
    """
    if a.size == 0 or b.size == 0:
        return float("nan")
    # breakpoints k/n_a and k/n_b; timsort merges the two sorted runs in O(n)
    cuts = np.sort(np.concatenate([np.arange(1, a.size + 1) / a.size, np.arange(1, b.size + 1) / b.size]),
                   kind="stable")
    cuts[-1] = 1.0
    start = np.concatenate([[0.0], cuts[:-1]])
    width = cuts - start
    middle = start + width / 2                     # inside each interval, away from the jumps
    qa = a[np.minimum((middle * a.size).astype(np.int64), a.size - 1)]
    qb = b[np.minimum((middle * b.size).astype(np.int64), b.size - 1)]
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


def mean_decomposition(score_i, y_i, score_j, y_j) -> dict:
    """Theorem A.1: μ_i − μ_j = MD − Δ_base, with MD the mean-score gap and Δ_base the base-rate gap."""
    md = float(np.mean(score_i) - np.mean(score_j))
    delta_base = float(np.mean(y_i) - np.mean(y_j))
    mu_gap = float(np.mean(residuals(score_i, y_i)) - np.mean(residuals(score_j, y_j)))
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
    n = d_sorted.size
    if not knees:
        return np.zeros(n, dtype=bool), np.full(n, -1)
    if mode == "percentile":
        u = (np.arange(n) + 0.5) / max(n, 1)
        dist = np.stack([np.abs(u - k.percentile) for k in knees])
        inside = dist <= eps + 1e-12
    elif mode == "residual":
        dist = np.stack([np.abs(d_sorted - k.residual) for k in knees])
        inside = dist < eps
    else:
        raise ValueError(f"unknown knee-region mode {mode!r}")
    mask = inside.any(0)
    which = np.where(mask, np.argmin(np.where(inside, dist, np.inf), axis=0), -1)
    return mask, which


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


def rates_from_residuals(d: np.ndarray, y: np.ndarray, tau: float) -> dict:
    """Theorem 6.1: PPR, TPR and FPR at threshold τ from the outcome-conditional residual survival functions."""
    d0, d1 = d[y == 0], d[y == 1]
    base = float(np.mean(y)) if y.size else float("nan")
    s0 = float(np.mean(d0 >= tau)) if d0.size else None          # FPR = S⁽⁰⁾(τ)
    s1 = float(np.mean(d1 >= tau - 1)) if d1.size else None      # TPR = S⁽¹⁾(τ − 1)
    ppr = (1 - base) * (s0 or 0.0) + base * (s1 or 0.0) if y.size else None
    return {"ppr": ppr, "tpr": s1, "fpr": s0}


# ----------------------------------------------------------------------------------------------- analysis

def analyse(pred: Predictions, attribute: str | None = None, params: RDFParams = RDFParams(),
            progress: Progress | None = None) -> ResidualAudit:
    report = progress or (lambda *_: None)
    view = pred.groups(attribute)
    d = residuals(pred.score, pred.y)
    names = list(view.names)
    members = [np.flatnonzero(view.codes == g) for g in range(len(names))]
    warnings: list[str] = []
    small: list[str] = []

    report(0.02, "Sorting residuals and finding knees")
    # every group is sorted once; all later statistics read these sorted views
    sorted_rows = [idx[np.argsort(d[idx], kind="stable")] for idx in members]
    sorted_d = [d[rows] for rows in sorted_rows]
    sorted_y = [pred.y[rows] for rows in sorted_rows]
    group_knees = [detect_knees(s, params.knees, sorted_input=True) for s in sorted_d]
    in_region = np.zeros(pred.n, dtype=bool)
    nearest = np.full(pred.n, "", dtype=object)
    summaries, curves = [], {}
    for g, (name, rows) in enumerate(zip(names, sorted_rows)):
        knees = [k for k in group_knees[g] if k is not None]
        mask, which = knee_region_sorted(sorted_d[g], knees, params.region_eps, params.region_mode)
        in_region[rows] = mask
        nearest[rows[mask]] = [knees[w].side for w in which[mask]]
        summaries.append(_summary(name, pred.score[rows], sorted_y[g], sorted_d[g], group_knees[g], int(mask.sum())))
        curves[name] = {o: _curve(sorted_d[g], rows, sorted_y[g], o) for o in OUTCOMES}
        if rows.size < RELIABLE_N:
            small.append(f"{name} ({rows.size:,})")
        if not knees:
            warnings.append(f"No knee found for group '{name}' (too few rows or a flat curve): F_h and F_v are undefined.")
    if small:
        warnings.insert(0, f"Knees need about {RELIABLE_N:,} rows per group to be reliable; smaller here: "
                           f"{', '.join(small)}.")

    resampler = _CountResampler(d, pred.y, members, params) if params.resamples > 0 else None
    knee_boot = []
    for g in range(len(names)):
        message = f"Re-detecting knees in resamples of group {names[g]}"
        report(0.1 + 0.4 * g / len(names), message)
        knee_boot.append(_knee_bootstrap(resampler, g, params, lambda f, g=g, message=message:
                                         report(0.1 + 0.4 * (g + f) / len(names), message)))
    report(0.5, "Resampling for confidence intervals")
    pairs = []
    pair_list = list(combinations(range(len(names)), 2))
    for step, (i, j) in enumerate(pair_list):
        report(0.5 + 0.3 * step / max(len(pair_list), 1), f"Pair {names[i]} vs {names[j]}")
        pairs.append(_pair_metrics(pred, members, sorted_d, sorted_y, group_knees, knee_boot, names, i, j,
                                   resampler, params))
    if resampler and resampler.note:
        warnings.append(resampler.note)

    report(0.8, "Knee error concentration")
    concentration = _concentration(pred.score, pred.y, d, in_region, params, ece_key=(pred.fingerprint, "all rows"))
    report(1.0, "Done")
    return ResidualAudit(view.attribute, params, summaries, curves, pairs, concentration, in_region,
                         nearest.astype(str), tuple(warnings))


def _summary(name, score, y, d, knees, knee_rows) -> GroupSummary:
    def med(x):
        return float(np.median(x)) if x.size else float("nan")

    value = ece(score, y)
    return GroupSummary(name=name, n=int(y.size), positives=int(y.sum()), base_rate=float(y.mean()),
                        mean_score=float(score.mean()), mean_residual=float(d.mean()), median_residual=med(d),
                        median_residual_y0=med(d[y == 0]), median_residual_y1=med(d[y == 1]),
                        ece=value, ece_regime=ece_regime(value), left_knee=knees[0], right_knee=knees[1],
                        knee_rows=knee_rows)


def _curve(d_sorted: np.ndarray, rows: np.ndarray, y_sorted: np.ndarray, outcome: str) -> Curve:
    """The sorted curve of one group (and outcome), thinned to ≤ CURVE_POINTS points by percentile."""
    if outcome != "all":
        keep = y_sorted == (1 if outcome == "y1" else 0)
        d_sorted, rows = d_sorted[keep], rows[keep]
    n = rows.size
    if n == 0:
        return Curve(np.empty(0), np.empty(0), np.empty(0, dtype=np.int64))
    take = np.arange(n) if n <= CURVE_POINTS else np.unique(np.linspace(0, n - 1, CURVE_POINTS).round().astype(int))
    return Curve((take + 0.5) / n, d_sorted[take], rows[take])


class _CountResampler:
    """Per-group bootstrap count vectors over (outcome, residual) cells, drawn once and shared by all pairs.

    Resampling is stratified by group (group sizes are kept), so pair statistics use independent resamples
    of each group, as a two-sample bootstrap does.
    """

    def __init__(self, d, y, members, params: RDFParams):
        self.rng = np.random.default_rng(params.seed)
        self.resamples = params.resamples
        self.compressed = stats.compress(d, -1.0, 1.0)
        k = self.compressed.support.size
        self.cells = [self.compressed.codes[idx].astype(np.int64) + k * y[idx].astype(np.int64) for idx in members]
        self.counts = [np.bincount(c, minlength=2 * k) for c in self.cells]
        self._boot: dict[int, np.ndarray] = {}
        if self.compressed.step:
            self.note = (f"Resampling ran on residuals rounded to a grid of step {self.compressed.step:.4f} "
                         f"(more than {stats.MAX_SUPPORT:,} distinct values); point estimates are exact.")
        else:
            self.note = ""

    def bootstrap(self, g: int) -> np.ndarray:
        if g not in self._boot:
            self._boot[g] = stats.bootstrap_counts(self.counts[g], self.resamples, self.rng)
        return self._boot[g]

    def split(self, counts: np.ndarray) -> dict:
        """Cell counts (…, 2K) → counts over residual values for all rows, Y = 0 rows and Y = 1 rows."""
        k = self.compressed.support.size
        y0, y1 = counts[..., :k], counts[..., k:]
        return {"all": y0 + y1, "y0": y0, "y1": y1}


def _pair_metrics(pred, members, sorted_d, sorted_y, group_knees, knee_boot, names, i, j,
                  resampler: _CountResampler, params: RDFParams) -> PairMetrics:
    """All RDF metrics of the ordered pair (i, j), from the groups' sorted residuals."""
    d_i, d_j, y_i, y_j = sorted_d[i], sorted_d[j], sorted_y[i], sorted_y[j]
    pooled_knees = detect_knees(np.sort(np.concatenate([d_i, d_j]), kind="stable"), params.knees, sorted_input=True)
    ki, kj = group_knees[i], group_knees[j]
    warnings = []
    if all(k is not None for k in (*ki, *kj, *pooled_knees)):
        if pooled_knees[0].percentile < 0.01 or min(abs(pooled_knees[0].residual), abs(pooled_knees[1].residual)) < 0.01:
            warnings.append("A pooled knee lies near 0 (percentile or residual): F_h/F_v divide by it and can explode; "
                            "read F_h_abs/F_v_abs instead.")
    by_outcome = {"": (d_i, d_j), "_y0": (d_i[y_i == 0], d_j[y_j == 0]), "_y1": (d_i[y_i == 1], d_j[y_j == 1])}
    pattern = {suffix: _median_parity(a, b) for suffix, (a, b) in by_outcome.items()}
    distance = {suffix: wasserstein_sorted(a, b) for suffix, (a, b) in by_outcome.items()}
    ci, p_median, p_dist = {}, float("nan"), float("nan")
    if params.resamples > 0:
        ci = _distribution_intervals(resampler, i, j)
        ci.update(_knee_metric_intervals(knee_boot[i], knee_boot[j], pooled_knees))
        p_median, p_dist = _permutation_p_values(resampler, i, j, members[i].size, params.resamples)
    idx_i, idx_j = members[i], members[j]
    return PairMetrics(
        group_i=names[i], group_j=names[j],
        f_pattern=pattern[""], f_pattern_y0=pattern["_y0"], f_pattern_y1=pattern["_y1"],
        f_pattern_mean=1 - abs(float(d_i.mean() - d_j.mean())) / 2,
        f_dist=distance[""], f_dist_y0=distance["_y0"], f_dist_y1=distance["_y1"],
        f_h=f_h(ki, kj, pooled_knees), f_v=f_v(ki, kj, pooled_knees),
        f_h_abs=f_h(ki, kj, pooled_knees, absolute=True), f_v_abs=f_v(ki, kj, pooled_knees, absolute=True),
        mean_decomposition=mean_decomposition(pred.score[idx_i], pred.y[idx_i], pred.score[idx_j], pred.y[idx_j]),
        ci=ci, p_median=p_median, p_dist=p_dist, warnings=tuple(warnings),
    )


def _median_parity(a_sorted: np.ndarray, b_sorted: np.ndarray) -> float:
    """F_pattern of two sorted samples (NaN when either is empty)."""
    if not a_sorted.size or not b_sorted.size:
        return float("nan")
    return 1 - abs(_sorted_median(a_sorted) - _sorted_median(b_sorted)) / 2


def _sorted_median(a: np.ndarray) -> float:
    return float((a[(a.size - 1) // 2] + a[a.size // 2]) / 2)


def _distribution_intervals(resampler: _CountResampler, i: int, j: int) -> dict:
    """Bootstrap CIs of F_pattern and F_dist (all rows, Y = 0, Y = 1) from the groups' resampled counts."""
    support = resampler.compressed.support
    boot_i, boot_j = resampler.split(resampler.bootstrap(i)), resampler.split(resampler.bootstrap(j))
    ci = {}
    for outcome, suffix in (("all", ""), ("y0", "_y0"), ("y1", "_y1")):
        gap = np.abs(stats.weighted_median(support, boot_i[outcome]) - stats.weighted_median(support, boot_j[outcome]))
        ci[f"f_pattern{suffix}"] = stats.percentile_interval(1 - gap / 2)
        ci[f"f_dist{suffix}"] = stats.percentile_interval(
            stats.wasserstein_counts(support, boot_i[outcome], boot_j[outcome]))
    return ci


def _permutation_p_values(resampler: _CountResampler, i: int, j: int, n_i: int, resamples: int) -> tuple[float, float]:
    """Permutation tests of |m_i − m_j| (two-sided) and of F_dist (upper tail), group sizes kept (spec D-27)."""
    support = resampler.compressed.support
    pooled = resampler.counts[i] + resampler.counts[j]
    perm_i, perm_j = stats.permutation_counts(pooled, n_i, resamples, resampler.rng)
    perm_i, perm_j = resampler.split(perm_i)["all"], resampler.split(perm_j)["all"]
    obs_i, obs_j = resampler.split(resampler.counts[i])["all"], resampler.split(resampler.counts[j])["all"]
    obs_gap = abs(stats.weighted_median(support, obs_i)[0] - stats.weighted_median(support, obs_j)[0])
    null_gap = np.abs(stats.weighted_median(support, perm_i) - stats.weighted_median(support, perm_j))
    obs_dist = stats.wasserstein_counts(support, obs_i, obs_j)[0]
    null_dist = stats.wasserstein_counts(support, perm_i, perm_j)
    return stats.permutation_p_value(obs_gap, null_gap), stats.permutation_p_value(obs_dist, null_dist)


def _knee_bootstrap(resampler: "_CountResampler | None", g: int, params: RDFParams,
                    progress: Callable[[float], None] | None = None) -> np.ndarray | None:
    """Knees re-detected in the first ``knee_resamples`` bootstrap resamples of group g: (B, 4) or None.

    The resamples are the count vectors the other intervals use, so no resample is ever sorted."""
    b = min(params.knee_resamples, params.resamples)
    if resampler is None or b <= 0 or resampler.counts[g].sum() < params.knees.min_n:
        return None
    counts = resampler.split(resampler.bootstrap(g)[:b])["all"]
    m = curve_size(int(resampler.counts[g].sum()), min(params.knees.max_points, params.knees.boot_points))
    curves = quantiles_from_counts(resampler.compressed.support, counts, m)
    return detect_knees_batch(curves, params.knees, progress)


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


def _concentration(score, y, d, in_region, params: RDFParams, ece_key=None) -> KneeConcentration:
    """Mean |D| in knee regions vs elsewhere, with a row bootstrap (regions fixed, spec D-26) and Mann–Whitney.
    The ECE and its interval are the calibration page's (one computation, ``core.ece.ece_interval``)."""
    abs_d = np.abs(d)
    knee, rest = abs_d[in_region], abs_d[~in_region]
    ece_value = ece(score, y)
    ratio_ci = knee_ci = rest_ci = stats.Interval(np.nan, np.nan)
    ece_ci = ece_interval(score, y, params.resamples, params.seed, key=ece_key)
    if params.resamples > 0:
        rng = np.random.default_rng(params.seed + 2)
        ratio_ci, knee_ci, rest_ci = _ratio_bootstrap(abs_d, in_region, params.resamples, rng)
    knee_mean = float(knee.mean()) if knee.size else float("nan")
    rest_mean = float(rest.mean()) if rest.size else float("nan")
    ratio = knee_mean / rest_mean if rest.size and rest_mean > 0 else float("nan")
    verdict, borderline = concentration_verdict(ece_value, ratio)
    regime = ece_regime(ece_value)
    expectation = ("errors should concentrate in knee regions (ratio > 1.5)" if ece_value < 0.15
                   else "errors should be spread out (ratio between 0.8 and 1.2); knees then mark where behaviour changes")
    explanation = (f"ECE {ece_value:.3f} is {regime}: {expectation}. Knee rows have mean |D| {knee_mean:.3f}, "
                   f"other rows {rest_mean:.3f}, ratio {ratio:.2f}.")
    return KneeConcentration(knee_mean, rest_mean, ratio, ratio_ci, knee_ci, rest_ci, stats.mann_whitney(knee, rest),
                             ece_value, ece_ci, regime, verdict, borderline, int(knee.size), int(rest.size),
                             explanation)


def _ratio_bootstrap(abs_d, in_region, resamples, rng) -> tuple[stats.Interval, stats.Interval, stats.Interval]:
    """Row bootstrap of the knee / non-knee mean |D| and their ratio, from counts over (region, |D|) cells."""
    comp = stats.compress(abs_d, 0.0, 1.0)
    k = comp.support.size
    cells = comp.codes + k * in_region.astype(np.int64)
    boot = stats.bootstrap_counts(np.bincount(cells, minlength=2 * k), resamples, rng)
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
    confusion = confusion_by_group(pred.y, decisions(pred.score, threshold), view.codes, len(view.names))
    direct, derived, counts = {}, {}, {}
    for g, name in enumerate(view.names):
        c = confusion[g]
        counts[name] = c
        direct[name] = {"ppr": c.ppr(), "tpr": c.tpr(), "fpr": c.fpr()}
        mask = view.codes == g
        derived[name] = rates_from_residuals(d[mask], pred.y[mask], threshold)
    gaps = []
    for a, b in combinations(view.names, 2):
        row = {"group_i": a, "group_j": b}
        for source, rates in (("direct", direct), ("residual", derived)):
            row[f"dp_diff_{source}"] = difference(rates[a]["ppr"], rates[b]["ppr"])
            row[f"eo_tpr_diff_{source}"] = difference(rates[a]["tpr"], rates[b]["tpr"])
            row[f"eo_fpr_diff_{source}"] = difference(rates[a]["fpr"], rates[b]["fpr"])
        gaps.append(row)
    return ThresholdCheck(threshold, list(view.names), direct, derived, counts, gaps)
