"""Evaluation reweighting: what a fixed model's figures would be on a test set whose (class, group) cells
followed another distribution P' — without retraining.

Every metric comes from the confusion tensor T[y, z, ŷ]. ReweightingAudit the test cells keeps each cell's row
(the conditional P(ŷ | y, z)) and rescales its mass: T'[c, g, ·] = n·P'(c, g)·T[c, g, ·] / n_{c,g}. Hence
accuracy becomes Σ P'(c, g)·TPR_{c,g}, while TPR_{c,g} itself — and so GAP(TPR) with two groups, and the paper's
Fairness — cannot change: it conditions on the cells. With more groups the paper's GAP compares each group with the
class's overall TPR (a weighted mean), which moves; the largest pairwise difference does not, unless a cell's weight
becomes 0 (CB or JB clipping a group away at α > 1). This is a *test-distribution shift*; the paper's
experiments change the *training* distribution and retrain (the Retraining simulator).
"""
from __future__ import annotations

import numpy as np

from fairviz.conditions.distributions import conditions, joint_from_counts
from fairviz.conditions.metrics import confusion, gap_of, rate_cells, scores_of
from fairviz.conditions.results import ReweightRow, ReweightingAudit
from fairviz.data import DataError


def reweighted_tensor(T: np.ndarray, joint: np.ndarray) -> np.ndarray:
    n_cells = T.sum(2)
    if np.any((joint > 0) & (n_cells == 0)):
        raise DataError("The target distribution puts mass on a (class, group) cell that has no test rows.")
    scale = np.divide(joint * T.sum(), n_cells, out=np.zeros_like(joint), where=n_cells > 0)
    return T * scale[:, :, None]


def reweight(y, y_pred, z, kind: str, values, classes=("0", "1"), groups=None) -> ReweightingAudit:
    """Scores under each condition of a sweep (cb/jb: ``values`` are α; grid: (p_y, s) pairs)."""
    y, y_pred, z = (np.asarray(a, dtype=int) for a in (y, y_pred, z))
    n_classes, n_groups = len(classes), int(z.max()) + 1
    groups = tuple(groups) if groups is not None else tuple(map(str, range(n_groups)))
    T = confusion(y, y_pred, z, n_classes, n_groups)
    observed = joint_from_counts(T.sum(2))
    if kind == "grid":
        conds = conditions(observed, "grid", grid=sorted({v for pair in values for v in pair}))
        wanted = {tuple(map(float, p)) for p in values}
        conds = [c for c in conds if (c.p_y, c.s) in wanted]
    else:
        conds = conditions(observed, kind, alphas=values)
    cell = y * n_groups + z
    n_cell = np.bincount(cell, minlength=n_classes * n_groups)
    rows = []
    for cond in conds:
        Tw = reweighted_tensor(T, cond.joint)
        w = np.divide(cond.joint.ravel() * y.size, n_cell, out=np.zeros(n_cell.size), where=n_cell > 0)[cell]
        rows.append(ReweightRow(cond, scores_of(Tw), float(np.sum(w * (y == y_pred)) / np.sum(w)),
                                gap_of(Tw, "tpr", "max_pairwise").value))
    return ReweightingAudit(kind, tuple(map(str, classes)), groups, scores_of(T), observed, tuple(rows))


def cell_shares(res: ReweightingAudit, y, y_pred, z, index: int):
    """Each (class, group) cell now and under condition ``index``: its rows, its share of the rows, its share
    under the condition and its TPR (which reweighting cannot change)."""
    import pandas as pd
    T = confusion(y, y_pred, z, len(res.classes), len(res.groups))
    tpr = rate_cells(T, "tpr")[0]
    n = T.sum(2)
    joint = res.rows[index].condition.joint
    return pd.DataFrame([{"class": c, "group": name, "rows": int(n[c, g]), "share_now": n[c, g] / n.sum(),
                          "share_then": joint[c, g], "tpr": tpr[c, g]}
                         for c in range(len(res.classes)) for g, name in enumerate(res.groups)])
