"""Stop keeps what finished: the genetic search ([3] Algorithm 2) stopped while training candidate k+1 hands back the
k candidates trained, ranked, with the full run's fitness values, marked partial."""
from __future__ import annotations

import pytest

from fairviz.core.progress import Stopped
from fairviz.forecast import genetic as G
from tests.forecast.test_forecast_genetic import SPACE, toy

SETTINGS = dict(population=4, generations=3, patience=5, seed=5)


def _recording(order: list):
    def evaluate(genes):
        order.append(genes)
        return toy(genes)
    return evaluate


def _stopping_at(k: int):
    calls = [0]

    def evaluate(genes):
        calls[0] += 1
        if calls[0] > k:
            raise Stopped()
        return toy(genes)
    return evaluate


@pytest.mark.parametrize("k", [3, 6])             # within the first generation, and into the second
def test_a_stop_after_k_candidates_returns_those_k(k):
    order: list = []
    full = G.search(_recording(order), SPACE, **SETTINGS)
    first_k = [next(a for a in full.ranking if a.genes is genes) for genes in order[:k]]
    with pytest.raises(Stopped) as stopped:
        G.search(_stopping_at(k), SPACE, **SETTINGS)
    partial = stopped.value.partial
    assert partial.completion.done == k and partial.completion.total == 12 and partial.completion.unit == "candidates"
    got = [(a.id, a.generation, a.genes, a.fitness, a.val_fitness) for a in partial.ranking]
    expected = [(a.id, a.generation, a.genes, a.fitness, a.val_fitness) for a in sorted(first_k, key=lambda a: a.combined)]
    assert got == expected and len(got) == k
    assert full.completion is None


def test_a_stop_in_the_first_candidate_keeps_nothing():
    with pytest.raises(Stopped) as stopped:
        G.search(_stopping_at(0), SPACE, **SETTINGS)
    assert stopped.value.partial is None
