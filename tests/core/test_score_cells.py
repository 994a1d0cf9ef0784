"""core.ece.ScoreCells: the one cell table every score-and-label bootstrap resamples (ECE, smooth ECE, AUROC,
log-loss, Brier), and core.stats.in_parallel, which runs independent resampling tasks on all cores."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from fairviz.core import ece as ece_module
from fairviz.core import stats


def _rows(n: int, distinct: int | None, seed: int = 0):
    rng = np.random.default_rng(seed)
    score = rng.beta(0.8, 1.5, n)
    if distinct:
        score = np.round(score * (distinct - 1)) / (distinct - 1)
    score[:3] = [0.0, 1.0, 2 / 15]                      # the ends and an ECE bin edge
    y = rng.binomial(1, np.clip(score * 0.9 + 0.05, 0, 1))
    return score, y


@pytest.mark.parametrize("distinct", [10, 1500, None])         # exact cells, exact at the limit, grid cells
def test_the_unresampled_cells_give_the_ece_exactly(distinct):
    score, y = _rows(30_000, distinct)
    cells = ece_module.score_cells(score, y)
    assert cells.counts.sum() == score.size
    assert cells.ece(cells.counts)[0] == pytest.approx(ece_module.ece(score, y), abs=1e-13)
    if distinct and distinct <= stats.MAX_SUPPORT:                 # one cell per (distinct score, label)
        assert cells.counts.size == np.unique(score * 2 + y).size


def test_weighted_entries_give_the_rows_cells():
    score, y = _rows(5_000, 40)
    table_score, index, weight = np.unique(np.c_[score, y], axis=0, return_inverse=True, return_counts=True)
    rows = ece_module.score_cells(score, y)
    table = ece_module.score_cells(table_score[:, 0], table_score[:, 1].astype(int), weights=weight)
    assert (rows.counts == table.counts).all() and np.allclose(rows.score_sum, table.score_sum, atol=1e-9)


def test_draws_are_reproducible_and_keep_the_cells_zero_where_empty():
    score, y = _rows(20_000, None)
    cells = ece_module.score_cells(score, y)
    a, b = cells.draw(300, [4, 2]), cells.draw(300, [4, 2])
    assert (a == b).all() and a.shape == (300, cells.counts.size)
    assert np.abs(a.mean(0) - cells.counts).max() < 6 * np.sqrt(cells.counts.max() / 300) + 1


def test_in_parallel_keeps_order_reports_from_the_calling_thread_and_stops():
    caller, seen = threading.get_ident(), []
    out = stats.in_parallel(lambda x: x * x, range(20), lambda f: seen.append((threading.get_ident(), f)))
    assert out == [x * x for x in range(20)]
    assert seen and all(t == caller for t, _ in seen) and seen[-1][1] == 1.0

    started = []

    def slow(x):
        started.append(x)
        threading.Event().wait(0.2)
        return x

    class Stop(Exception):
        pass

    def stop(_):
        raise Stop

    workers = stats.WORKERS
    stats.WORKERS = 2
    try:
        with pytest.raises(Stop):
            stats.in_parallel(slow, range(40), stop)
    finally:
        stats.WORKERS = workers
    assert len(started) < 40                                      # the tasks not yet started were cancelled
