"""Data conditions as joint distributions over (class y, group z): the *Systematic Evaluation of Predictive
Fairness* framework (Han, Shen, Cohn, Baldwin and Frermann, AACL 2022, §3).

A condition is a C×G array ``P[c, g] = P(y = c, z = g)`` (rows classes, columns groups). From the training
set's empirical joint P and a reference Q, the paper interpolates ``P' = (1 − α) P + α Q`` (§3.2):

- conditional balance (CB): Q(z | y) = 1/G within every class, so P(y) is kept for every α;
- joint balance (JB): Q(y, z) = 1/(C·G), balancing classes and groups at once.

α = 0 is the original data, α = 1 the balanced Q, α > 1 inverts the bias (majorities become minorities).
Cells that go negative (JB for α > 1) are set to 0 and the table is renormalised (the paper's Appendix B); the
result records which cells were clipped. CB is clipped and renormalised within each class so that P(y) stays
fixed (for two groups and α ≤ 2 it never clips). The Moji experiments (§5) set P'(y) and P'(z | y) directly:
:func:`compose` and :func:`moji_grid`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fairviz.data import DataError

CONDITIONS = ("cb", "jb", "grid")
CONDITION_NAMES = {"cb": "Conditional balance (CB)", "jb": "Joint balance (JB)",
                   "grid": "Class ratio × stereotyping grid (p_y, s)"}
DEFAULT_ALPHAS = tuple(np.round(np.arange(0, 2.0001, 0.25), 2).tolist())
DEFAULT_GRID = tuple(np.round(np.arange(0.1, 0.9001, 0.2), 2).tolist())


@dataclass(frozen=True)
class Condition:
    """One target training distribution P' and how it was made."""

    kind: str                       # "cb", "jb", "grid" or "custom"
    alpha: float | None             # the interpolation rate (cb, jb)
    p_y: float | None               # the grid's class ratio P'(y = first class)
    s: float | None                 # the grid's stereotyping P'(z = first | y = first) = P'(z = second | y = second)
    joint: np.ndarray               # C×G, sums to 1
    clipped: np.ndarray             # C×G bool: cells that were negative before clipping
    raw_sum: float                  # sum after clipping, before renormalising (1 when nothing clipped)

    @property
    def label(self) -> str:
        if self.kind == "grid":
            return f"p_y={self.p_y:g}, s={self.s:g}"
        return f"α={self.alpha:g}"

    @property
    def value(self) -> float:
        """The condition's x-axis value: α, or s for a grid cell."""
        return float(self.alpha if self.alpha is not None else self.s)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "alpha": self.alpha, "p_y": self.p_y, "s": self.s,
                "joint": self.joint.tolist(), "clipped": self.clipped.tolist(), "raw_sum": self.raw_sum}


def joint_from_counts(counts) -> np.ndarray:
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2 or counts.sum() <= 0:
        raise DataError("A joint distribution needs a non-empty classes × groups table of counts.")
    return counts / counts.sum()


def cell_counts(y: np.ndarray, z: np.ndarray, n_classes: int, n_groups: int) -> np.ndarray:
    return np.bincount(np.asarray(y) * n_groups + np.asarray(z), minlength=n_classes * n_groups).reshape(
        n_classes, n_groups)


def _clip(joint: np.ndarray, within_rows: bool = False) -> tuple[np.ndarray, np.ndarray, float]:
    negative = joint < -1e-15
    out = np.where(negative, 0.0, joint)
    raw_sum = float(out.sum())
    if within_rows:          # CB: renormalise every class to its original mass, keeping P(y)
        mass = np.clip(joint.sum(1, keepdims=True), 0, None)
        rows = out.sum(1, keepdims=True)
        out = np.divide(out * mass, rows, out=np.zeros_like(out), where=rows > 0)
    return out / out.sum(), negative, raw_sum


def conditional_balance(joint, alpha: float) -> Condition:
    """P'(y, z) = P(y)·[(1 − α) P(z | y) + α / G] (the paper's CB, §3.2)."""
    joint = np.asarray(joint, dtype=float)
    _check_alpha(alpha)
    p_y = joint.sum(1, keepdims=True)
    cond = np.divide(joint, p_y, out=np.zeros_like(joint), where=p_y > 0)
    target = p_y * ((1 - alpha) * cond + alpha / joint.shape[1])
    out, negative, raw = _clip(target, within_rows=True)
    return Condition("cb", float(alpha), None, None, out, negative, raw)


def joint_balance(joint, alpha: float) -> Condition:
    """P'(y, z) = (1 − α) P(y, z) + α / (C·G) (the paper's JB, §3.2), clipped and renormalised (Appendix B)."""
    joint = np.asarray(joint, dtype=float)
    _check_alpha(alpha)
    target = (1 - alpha) * joint + alpha / joint.size
    out, negative, raw = _clip(target)
    return Condition("jb", float(alpha), None, None, out, negative, raw)


def interpolate(joint, kind: str, alpha: float) -> Condition:
    if kind == "cb":
        return conditional_balance(joint, alpha)
    if kind == "jb":
        return joint_balance(joint, alpha)
    raise DataError(f"Unknown condition '{kind}': use cb or jb (or the grid).")


def compose(y_dist, g_cond_y) -> np.ndarray:
    """P'[c, g] = P'(y = c)·P'(z = g | y = c)."""
    y_dist = np.asarray(y_dist, dtype=float)
    g_cond_y = np.asarray(g_cond_y, dtype=float)
    if np.any(y_dist < 0) or np.any(g_cond_y < 0):
        raise DataError("Class shares and group shares must be non-negative.")
    return y_dist[:, None] * g_cond_y / g_cond_y.sum(1, keepdims=True)


def moji_joint(p_y: float, s: float) -> np.ndarray:
    """Two classes × two groups from p_y = P'(first class) and s = P'(first group | first class) =
    P'(second group | second class): [[p_y s, p_y (1 − s)], [(1 − p_y)(1 − s), (1 − p_y) s]] ([5] §5)."""
    for name, v in (("p_y", p_y), ("s", s)):
        if not 0 <= v <= 1:
            raise DataError(f"{name} must lie in [0, 1], got {v}.")
    return compose([p_y, 1 - p_y], [[s, 1 - s], [1 - s, s]])


def grid_condition(p_y: float, s: float) -> Condition:
    joint = moji_joint(p_y, s)
    return Condition("grid", None, float(p_y), float(s), joint, np.zeros_like(joint, dtype=bool), 1.0)


def conditions(joint, kind: str, alphas=DEFAULT_ALPHAS, grid=DEFAULT_GRID) -> list[Condition]:
    """Every condition of a sweep: one per α (cb, jb) or one per (p_y, s) of the grid (binary data only)."""
    joint = np.asarray(joint, dtype=float)
    if kind == "grid":
        if joint.shape != (2, 2):
            raise DataError(f"The (p_y, s) grid needs two classes and two groups; these data have "
                            f"{joint.shape[0]} classes and {joint.shape[1]} groups. Use cb or jb.")
        return [grid_condition(p, s) for p in grid for s in grid]
    return [interpolate(joint, kind, a) for a in alphas]


def _check_alpha(alpha: float) -> None:
    if not (np.isfinite(alpha) and 0 <= alpha <= 2):
        raise DataError(f"α must lie in [0, 2] (0 = the data as they are, 1 = balanced, 2 = bias inverted); got {alpha}.")


# ------------------------------------------------------------------------------------------ regression

@dataclass(frozen=True)
class ProxyBins:
    """Equal-frequency bins of a continuous target on the training split ([5] §3.3 and Appendix E)."""

    edges: np.ndarray

    @property
    def n_classes(self) -> int:
        return self.edges.size - 1

    def apply(self, y) -> np.ndarray:
        """Bin ids for any split with the training edges; values outside the range go to bin 0, as the authors do."""
        y = np.asarray(y, dtype=float)
        ids = np.searchsorted(self.edges[1:-1], y, side="left")
        inside = (y >= self.edges[0]) & (y <= self.edges[-1])
        return np.where(inside, ids, 0).astype(int)


def proxy_bins(y_train, n_classes: int = 4) -> ProxyBins:
    y = np.asarray(y_train, dtype=float)
    if y.size == 0 or not np.all(np.isfinite(y)):
        raise DataError("The regression target must be numeric with no missing values.")
    edges = np.unique(np.quantile(y, np.linspace(0, 1, n_classes + 1)))
    if edges.size < 2:
        raise DataError("The regression target is constant: no proxy classes can be formed.")
    return ProxyBins(edges)


@dataclass(frozen=True)
class TrainCells:
    """The training cells of one condition: target counts round(m·P') and which were clipped (or empty)."""

    condition: Condition
    counts: np.ndarray              # C×G int
    available: np.ndarray           # C×G int: rows the training pool has in each cell
    dropped: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))   # requested but empty: set to 0

    def to_dict(self, classes, groups) -> dict:
        return {"condition": self.condition.label, "alpha": self.condition.alpha, "p_y": self.condition.p_y,
                "s": self.condition.s, "classes": list(classes), "groups": list(groups),
                "counts": self.counts.tolist(), "available": self.available.tolist(),
                "clipped": self.condition.clipped.tolist(),
                "dropped": (self.dropped if self.dropped.size else np.zeros_like(self.counts, bool)).tolist(),
                "raw_sum": self.condition.raw_sum}
