"""Sorted residual curves ([1] §4): each group's residuals sorted once (rows, or weighted entries of the engine's
table), the curves drawn from them thinned to at most ``CURVE_POINTS`` points."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from fairviz.data import Predictions
from fairviz.data.reduction import EXACT_ROWS
from fairviz.data.tasks.binary import DEFAULT_CELLS
from fairviz.data.tasks.regression import REGRESSION_CELLS
from fairviz.residuals.results import Curve

CURVE_POINTS = 2000          # a drawn curve never has more points than this, whatever n is
OUTCOMES = ("all", "y0", "y1")


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


def search_cells(pred: Predictions) -> int | None:
    """The score cells the knee search reads residuals at, or None (the residuals themselves).

    Above ``EXACT_ROWS`` rows the engine may hand over a binned table (each cell of width 1/``DEFAULT_CELLS`` at the
    mean of its scores); a knee found on a flat stretch of Kneedle's difference curve could then move by several
    grid points between the rows and their table (sub-cell noise; measured: F_v by up to 5.6e-3 on 2M rows). Read
    at the cell resolution, rows and table give the same curve to the search, so the same knee percentile."""
    return DEFAULT_CELLS if pred.n > EXACT_ROWS else None


@dataclass(frozen=True)
class ResidualGrid:
    """A regression's knee-search cells: ``cells`` equal cells of [lo, hi], the range of the residuals ŷ − y over
    all rows. The engine groups a binned table by these cells (``fairviz.data.tasks.regression.residual_cell_sql``,
    the same floating-point steps), so each entry's rows share one cell and the search reads rows and table alike."""
    lo: float
    hi: float
    cells: int

    def cell(self, d: np.ndarray) -> np.ndarray:
        scale = self.cells / (self.hi - self.lo) if self.hi > self.lo else 0.0
        return np.minimum(np.floor((d - self.lo) * scale), self.cells - 1)

    def centres(self, d: np.ndarray) -> np.ndarray:
        return self.lo + (self.cell(d) + 0.5) * ((self.hi - self.lo) / self.cells)

    @property
    def width(self) -> float:
        return (self.hi - self.lo) / self.cells


def residual_grid(pred: Predictions, d: np.ndarray) -> ResidualGrid | None:
    """The residual cells a regression's knee search reads above ``EXACT_ROWS`` rows, None at or below (or when
    every residual is the same). A binned table's rows are not all known, only their means per entry, and Kneedle's
    difference curve is flat near its maximum: searched on raw residuals, the sub-cell differences between rows and
    their table moved knees by hundreds of grid points (1M rows: F_v by 15 %). Read at these cells, rows and table
    give the search the same curve. The grid is the one the engine grouped by (the residuals' exact range, read by
    its bounds query), else the data's own range (rows, or an exact table, whose residuals are the rows')."""
    if pred.n <= EXACT_ROWS or not d.size:
        return None
    grids = pred.joint().residual_grids
    if pred.active_model in grids:
        return ResidualGrid(*grids[pred.active_model])
    lo, hi = float(d.min()), float(d.max())
    return ResidualGrid(lo, hi, REGRESSION_CELLS) if hi > lo else None


def cell_residuals(sg: SortedGroup, cells: int | ResidualGrid | None) -> np.ndarray | None:
    """Each entry's residual as the knee search reads it, None without cells: a regression's at its residual cell's
    centre (``ResidualGrid``); a binary task's at its score cell's centre (the engine's cell: ⌊score × cells⌋).
    Never decreasing along the sorted entries: the cell of the score is monotone within each label, and a label-1
    residual is at most 0 ≤ a label-0 one."""
    if cells is None:
        return None
    if isinstance(cells, ResidualGrid):
        return cells.centres(sg.d)
    return (np.floor(sg.score * cells) + 0.5) / cells - sg.y


def joint_search(pred: Predictions, attribute: str | None, names, grid: ResidualGrid | None) -> list | None:
    """Per group (in the order of ``names``): the search values and rows of the joint table's entries, for one
    model's view of a binned table of several models (``Predictions.at``), else None. The view merges
    entries that share groups, target and this model's prediction, which can pool rows of two residual cells; the
    joint entries each hold one cell of every model's residual, so the search reads the rows' cells from them."""
    joint = pred.joint()
    if grid is None or joint is pred or joint.weight is None or pred.active_model not in joint.scores:
        return None
    centres = grid.centres(joint.scores[pred.active_model] - np.asarray(joint.y, dtype=float))
    view = joint.groups(attribute)
    index = {name: g for g, name in enumerate(names)}
    codes = np.array([index.get(name, -1) for name in view.names], dtype=np.int64)[view.codes]
    return [(centres[codes == g], joint.weight[codes == g]) for g in range(len(names))]


def knees_of(sg: SortedGroup, settings, cells: "int | ResidualGrid | None", search: tuple | None = None) -> tuple:
    """The group's (left, right) knees, searched at the cell resolution when ``cells`` is set (``search``: the
    group's search values and rows from ``joint_search``)."""
    from fairviz.residuals.knees import detect_knees_weighted
    if not sg.d.size:
        return None, None
    if search is not None:
        return detect_knees_weighted(sg.d, sg.w, settings, *search)
    return detect_knees_weighted(sg.d, sg.w, settings, cell_residuals(sg, cells))


def pooled_knees(a: SortedGroup, b: SortedGroup, settings, cells: "int | ResidualGrid | None",
                 searches: tuple | None = None) -> tuple:
    """The knees of the two groups' pooled residuals ([1] Eq. 2–3's normalisers), searched like ``knees_of``
    (``searches``: both groups' ``joint_search``)."""
    from fairviz.residuals.knees import detect_knees_weighted
    d = np.concatenate([a.d, b.d])
    order = np.argsort(d, kind="stable")
    values, weights = d[order], np.concatenate([a.w, b.w])[order]
    if searches is not None:
        return detect_knees_weighted(values, weights, settings, np.concatenate([searches[0][0], searches[1][0]]),
                                     np.concatenate([searches[0][1], searches[1][1]]))
    search = None
    if cells is not None:
        search = np.concatenate([cell_residuals(a, cells), cell_residuals(b, cells)])[order]
    return detect_knees_weighted(values, weights, settings, search)


def curve(sg: SortedGroup, outcome: str, offsets: np.ndarray | None) -> Curve:
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
