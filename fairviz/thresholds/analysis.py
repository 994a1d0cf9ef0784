"""Per-group thresholds that satisfy a parity constraint at the best expected accuracy, from scores alone.

Each group's achievable (FPR, TPR) pairs are the convex hull of its ROC points: a threshold gives a vertex, and a
randomised choice between thresholds any point between them (Hardt, Price and Srebro 2016, §4). The policy is one
linear programme over every group's hull weights: maximise expected accuracy subject to the chosen rates of all
groups lying within ``slack`` of a common rate. No model object is needed, only the scores (unlike fairlearn's
``ThresholdOptimizer``, which wraps an estimator).
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from fairviz.thresholds.results import (GroupRule, ThresholdAudit, ThresholdParams, ThresholdPolicy,
                                        TradeOffPoint)

CURVE_POINTS = 11


def roc_vertices(score: np.ndarray, y: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(thresholds, FPR, TPR) of the rules "score ≥ threshold" on the upper convex hull, from +inf (nobody) to the
    lowest score (everybody)."""
    order = np.argsort(-score, kind="stable")
    s, pos, w = score[order], y[order].astype(bool), weight[order]
    cut = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    tp = np.cumsum(np.add.reduceat(np.where(pos, w, 0.0), cut))
    fp = np.cumsum(np.add.reduceat(np.where(pos, 0.0, w), cut))
    P, N = tp[-1], fp[-1]
    thresholds = np.r_[np.inf, s[cut]]
    fpr = np.r_[0.0, fp / N] if N > 0 else np.zeros(cut.size + 1)
    tpr = np.r_[0.0, tp / P] if P > 0 else np.zeros(cut.size + 1)
    keep = _upper_hull(fpr, tpr)
    return thresholds[keep], fpr[keep], tpr[keep]


def _upper_hull(x: np.ndarray, y: np.ndarray) -> list[int]:
    """Indices of the upper-left hull (monotone chain over points sorted by x, then y)."""
    hull: list[int] = []
    for i in np.lexsort((y, x)):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            cross = (x[b] - x[a]) * (y[i] - y[a]) - (y[b] - y[a]) * (x[i] - x[a])
            if cross >= 0:                          # b is on or below the segment a→i
                hull.pop()
            else:
                break
        hull.append(int(i))
    return hull


def fit(y, score, codes, names, params: ThresholdParams = ThresholdParams(), weight=None,
        attribute: str = "group") -> ThresholdPolicy:
    return _solve(group_hulls(y, score, codes, names, weight), params, attribute)


def group_hulls(y, score, codes, names, weight=None) -> list[tuple]:
    """(name, thresholds, FPR, TPR, positives, negatives) of each group's ROC hull: what every policy is solved on
    (computed once for a whole trade-off curve: the sorts are the cost)."""
    y, score, codes = np.asarray(y).astype(bool), np.asarray(score, float), np.asarray(codes)
    weight = np.ones(y.size) if weight is None else np.asarray(weight, float)
    groups = []
    for g, name in enumerate(names):
        member = codes == g
        if not member.any():
            continue
        P, N = weight[member & y].sum(), weight[member & ~y].sum()
        if P == 0 or N == 0:
            raise ValueError(f"group '{name}' has only one outcome, so its rates cannot be adjusted")
        groups.append((str(name), *roc_vertices(score[member], y[member], weight[member]), P, N))
    return groups


def _solve(groups, params: ThresholdParams, attribute: str) -> ThresholdPolicy:
    sizes = [len(g[1]) for g in groups]
    n_lambda = sum(sizes)
    n_common = 2                                      # the common (FPR, TPR) or (selection, unused) rates
    total = sum(g[4] + g[5] for g in groups)
    c = np.zeros(n_lambda + n_common)
    A_eq, b_eq, A_ub, b_ub = [], [], [], []
    start = 0
    for (name, thr, fpr, tpr, P, N), k in zip(groups, sizes):
        block = slice(start, start + k)
        c[block] = -(P * tpr - N * fpr) / total       # maximise expected accuracy
        row = np.zeros(n_lambda + n_common)
        row[block] = 1.0
        A_eq.append(row)
        b_eq.append(1.0)
        for rate, common in _constrained_rates(params.constraint, fpr, tpr, P / (P + N)):
            for sign in (1.0, -1.0):                  # |rate_g − common| ≤ slack/2: groups differ ≤ slack
                row = np.zeros(n_lambda + n_common)
                row[block] = sign * rate
                row[n_lambda + common] = -sign
                A_ub.append(row)
                b_ub.append(params.slack / 2)
        start += k
    bounds = [(0, None)] * n_lambda + [(0, 1)] * n_common
    solved = linprog(c, A_ub=np.array(A_ub), b_ub=np.array(b_ub), A_eq=np.array(A_eq), b_eq=np.array(b_eq),
                     bounds=bounds, method="highs")
    if not solved.success:
        raise ValueError(f"no per-group thresholds satisfy the constraint ({solved.message})")
    return _policy(groups, sizes, solved.x, params, attribute)


def _constrained_rates(constraint: str, fpr, tpr, base_rate: float):
    """(rate of each hull vertex, index of the common variable) for each constrained rate."""
    if constraint == "equal_tpr":
        return [(tpr, 1)]
    if constraint == "equalized_odds":
        return [(tpr, 1), (fpr, 0)]
    return [(base_rate * tpr + (1 - base_rate) * fpr, 0)]


def _policy(groups, sizes, x, params: ThresholdParams, attribute: str) -> ThresholdPolicy:
    rules, start, correct, total = [], 0, 0.0, 0.0
    for (name, thr, fpr, tpr, P, N), k in zip(groups, sizes):
        lam = np.clip(x[start:start + k], 0, None)
        lam = lam / lam.sum()
        used = lam > 1e-12
        t, f = float(lam @ tpr), float(lam @ fpr)
        rules.append(GroupRule(name, tuple(float(v) for v in thr[used]), tuple(float(v) for v in lam[used]),
                               int(round(P + N)), float(P), float(N), t, f, (P * t + N * f) / (P + N)))
        correct += P * t + N * (1 - f)
        total += P + N
        start += k
    return ThresholdPolicy(params, attribute, tuple(rules), correct / total, max_gap(rules, params.constraint))


def max_gap(rules, constraint: str) -> float:
    def spread(values):
        return float(max(values) - min(values)) if values else 0.0
    if constraint == "equal_tpr":
        return spread([r.tpr for r in rules])
    if constraint == "equalized_odds":
        return max(spread([r.tpr for r in rules]), spread([r.fpr for r in rules]))
    return spread([r.selection_rate for r in rules])


def single_threshold(y, score, codes, names, tau: float, constraint: str, weight=None) -> TradeOffPoint:
    """Where one threshold τ for everyone sits: its accuracy and its gap in the constrained rate(s)."""
    y, score, codes = np.asarray(y).astype(bool), np.asarray(score, float), np.asarray(codes)
    weight = np.ones(y.size) if weight is None else np.asarray(weight, float)
    rules = []
    for g, name in enumerate(names):
        m = codes == g
        P, N = weight[m & y].sum(), weight[m & ~y].sum()
        if not m.any() or P == 0 or N == 0:
            continue
        sel = score[m] >= tau
        t, f = weight[m][sel & y[m]].sum() / P, weight[m][sel & ~y[m]].sum() / N
        rules.append(GroupRule(str(name), (tau,), (1.0,), int(P + N), P, N, t, f, (P * t + N * f) / (P + N)))
    correct = sum(r.positives * r.tpr + r.negatives * (1 - r.fpr) for r in rules)
    return TradeOffPoint(float("nan"), correct / sum(r.positives + r.negatives for r in rules),
                         max_gap(rules, constraint))


def explore(y, score, codes, names, params: ThresholdParams, tau: float, weight=None,
            attribute: str = "group") -> ThresholdAudit:
    """The policy at ``params.slack``, the trade-off curve from slack 0 to the single threshold's gap, and the
    single threshold's own point."""
    hulls = group_hulls(y, score, codes, names, weight)           # first: it names a group with one outcome
    single = single_threshold(y, score, codes, names, tau, params.constraint, weight)
    policy = _solve(hulls, params, attribute)
    curve = []
    for slack in np.linspace(0.0, max(single.max_gap, 1e-9), CURVE_POINTS):
        p = _solve(hulls, ThresholdParams(params.constraint, float(slack), params.seed), attribute)
        curve.append(TradeOffPoint(float(slack), p.accuracy, p.max_gap))
    return ThresholdAudit(policy, tuple(curve), single)


def decide(policy: ThresholdPolicy, score, codes, names, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(probability of a positive decision, the realised decision) per row. The draw is label-blind and seeded:
    the same rows give the same decisions."""
    score, codes = np.asarray(score, float), np.asarray(codes)
    probability = np.zeros(score.size)
    for g, name in enumerate(names):
        member = codes == g
        if member.any():
            probability[member] = policy.rule(str(name)).positive_probability(score[member])
    rng = np.random.default_rng(policy.params.seed if seed is None else seed)
    return probability, rng.random(score.size) < probability
