"""Algorithm 2 (genetic hyperparameter search) on toy objectives: crossover, mutation schedule, elitism, patience."""
import math

import numpy as np
import pytest

from fairviz.forecast import genetic as G

SPACE = (
    G.Param("x", "range", low=-4.0, high=4.0),
    G.Param("lr", "range", low=1e-4, high=1e-1, log=True),
    G.Param("k", "choice", (1, 3, 5, 7, 9)),
    G.Param("norm", "choice", ("layer", "batch", "none"), ordered=False),
)


def toy(genes):
    """Lower is better; optimum at x = 1, lr = 1e-2, k = 5, norm = 'layer'."""
    f = (genes["x"] - 1) ** 2 + (math.log10(genes["lr"]) + 2) ** 2 + abs(genes["k"] - 5) / 2 + \
        (0 if genes["norm"] == "layer" else 0.5) + 0.1
    return f, f * 1.05


def test_crossover_weights_the_better_parent():
    rng = np.random.default_rng(0)
    a = {"x": 0.0, "lr": 1e-4, "k": 1, "norm": "layer"}
    b = {"x": 3.0, "lr": 1e-2, "k": 9, "norm": "none"}
    child = G.crossover(a, b, 1.0, 3.0, SPACE, rng)                 # a has 3× lower CRPS → weight 3/4
    assert child["x"] == pytest.approx(0.75)
    assert math.log(child["lr"]) == pytest.approx(0.75 * math.log(1e-4) + 0.25 * math.log(1e-2))  # in ln space
    assert child["k"] == 3                                          # index 0.75·0 + 0.25·4 = 1 → value 3
    picks = [G.crossover(a, b, 1.0, 3.0, SPACE, np.random.default_rng(s))["norm"] for s in range(400)]
    assert 0.68 < picks.count("layer") / 400 < 0.82                  # unordered: a's value with probability 3/4


def test_mutation_probability_schedule():
    p = G.mutation_probabilities([0.3, 0.1, 0.2, 0.4])
    assert p.tolist() == pytest.approx([0.05 + 0.55 * 2 / 3, 0.05, 0.05 + 0.55 / 3, 0.6])
    genes, changed = G.mutate({"x": 0.0, "lr": 1e-3, "k": 1, "norm": "layer"}, SPACE, np.random.default_rng(1))
    assert len(changed) == 1


def test_search_improves_on_the_random_start_and_ranks_by_f2_plus_fv2():
    result = G.search(toy, SPACE, population=8, generations=6, patience=3, seed=2)
    first = [a for a in result.ranking if a.generation == 1]
    assert result.ranking[0].combined <= min(a.combined for a in first)
    combined = [a.combined for a in result.ranking]
    assert combined == sorted(combined)
    assert len({a.id for a in result.ranking}) == len(result.ranking)
    assert result.best_by_generation == sorted(result.best_by_generation, reverse=True)
    children = [a for a in result.ranking if a.generation > 1]
    assert children and all(len(a.parents) == 2 and 0.05 <= a.mutation_probability <= 0.6 for a in children)
    table = result.table()
    assert table[0]["rank"] == 1 and "f² + f_v²" in table[0]


def test_patience_stops_a_flat_search():
    calls = []

    def flat(genes):
        calls.append(genes)
        return 1.0, 1.0

    result = G.search(flat, SPACE, population=3, generations=10, patience=2, seed=0)
    assert result.stopped_early and result.generations_run == 3
    assert len(calls) == 9


def test_search_is_reproducible():
    a = G.search(toy, SPACE, population=4, generations=3, seed=5)
    b = G.search(toy, SPACE, population=4, generations=3, seed=5)
    assert [x.genes for x in a.ranking] == [x.genes for x in b.ranking]


def test_ptn_space_is_valid_for_the_network():
    from fairviz.forecast.ptn import PTNParams
    rng = np.random.default_rng(0)
    for _ in range(50):
        PTNParams.from_dict(G.random_genes(G.PTN_SPACE, rng))        # every sample builds a valid config
    with pytest.raises(ValueError):
        G.search(toy, SPACE, population=1)


def test_ptn_space_samples_learning_rates_log_uniformly_in_the_thesis_range():
    # thesis Table 5.1: both AdamW learning rates are logarithmic ranges [0.00001, 0.001]
    space = {p.name: p for p in G.PTN_SPACE}
    rng = np.random.default_rng(0)
    for name in ("lr", "arch_lr"):
        draws = np.array([space[name].sample(rng) for _ in range(4000)])
        assert draws.min() >= 1e-5 and draws.max() <= 1e-3
        assert draws.min() < 1.2e-5 and draws.max() > 0.8e-3          # the whole range is reached
        assert np.median(np.log10(draws)) == pytest.approx(-4.0, abs=0.05)   # log-uniform: median at 1e-4
