"""The (p_y, s) grid sweep, re-selection and the figures built from results (values, not just that they run)."""
import numpy as np
import pytest

from fairviz.conditions import data as cdata
from fairviz.conditions import figures as F
from fairviz.conditions import simulate
from fairviz.conditions.evaluation import reweight
from fairviz.conditions.methods import DebiasTrainParams

QUICK = DebiasTrainParams(hidden=16, epochs=3, patience=2)


@pytest.fixture(scope="module")
def grid_sim():
    data = cdata.moji_like(n_train=2000, n_dev=1000, n_test=1000, seed=2)
    return simulate.run(data, simulate.RetrainingParams(condition="grid", grid=(0.3, 0.7), methods=("vanilla", "rw"),
                                                   seeds=1, m=1000, train=QUICK))


def test_grid_cells_follow_the_composition(grid_sim):
    cells = {(c.condition.p_y, c.condition.s): c.counts for c in grid_sim.train_cells}
    assert set(cells) == {(0.3, 0.3), (0.3, 0.7), (0.7, 0.3), (0.7, 0.7)}
    np.testing.assert_array_equal(cells[(0.7, 0.3)], [[210, 490], [210, 90]])     # 1000 × [[.21, .49], [.21, .09]]
    assert len(grid_sim.selected) == 4 * 2


def test_best_method_map_names_the_lowest_dto(grid_sim):
    fig = F.best_method_figure(grid_sim)
    text = np.array(fig.data[0].text)
    for s in grid_sim.selected:
        a = s.aggregate
        i, j = [0.3, 0.7].index(a.p_y), [0.3, 0.7].index(a.value)
        rivals = [o.aggregate.test_dto for o in grid_sim.selected
                  if o.aggregate.p_y == a.p_y and o.aggregate.value == a.value]
        if a.test_dto == min(rivals):
            assert text[i, j] == {"vanilla": "Vanilla", "rw": "RW"}[a.method]
    small = F.grid_figure(grid_sim, "dto")
    assert len(small.data) == 2
    vanilla = [s.aggregate for s in grid_sim.selected if s.aggregate.method == "vanilla"]
    z = np.array(small.data[0].z)
    for a in vanilla:
        assert z[[0.3, 0.7].index(a.p_y), [0.3, 0.7].index(a.value)] == pytest.approx(a.test_dto)


def test_sweep_lines_are_the_selected_test_means_and_reselect(grid_sim):
    table = F.sweep_table(grid_sim, p_y=0.3)
    for s in grid_sim.selected:
        a = s.aggregate
        if a.p_y == 0.3:
            k = table[a.method]["x"].index(a.value)
            assert table[a.method]["mean_fairness"][k] == pytest.approx(a.test_fairness)
            assert table[a.method]["mean_dto"][k] == pytest.approx(a.test_dto)
    strict = simulate.reselect(grid_sim, 0.99)
    assert strict.settings.min_fairness == 0.99 and len(strict.selected) == len(grid_sim.selected)
    assert strict.runs is grid_sim.runs


def test_cells_figure_marks_clipped_cells():
    from fairviz.conditions import distributions as d
    from fairviz.conditions.reference import bios_counts
    from fairviz.conditions.resample import resample
    rng = np.random.default_rng(0)
    counts = np.rint(bios_counts() / 20).astype(int)
    y = np.repeat(np.arange(28), counts.sum(1))
    z = np.concatenate([np.repeat([0, 1], row) for row in counts])
    idx, cells = resample(y, z, d.joint_balance(d.joint_from_counts(counts), 2), 3000, seed=rng.integers(9))
    fig = F.cells_figure(cells, [str(i) for i in range(28)], ["M", "F"])
    marked = sum("clipped" in t for row in fig.data[0].text for t in row)
    assert marked == int(cells.condition.clipped.sum()) == 7


def test_reweight_figure_draws_the_flat_tpr_gap():
    rng = np.random.default_rng(0)
    y, z = rng.integers(0, 2, 800), rng.integers(0, 2, 800)
    hat = np.where(rng.random(800) < 0.8 - 0.1 * z, y, 1 - y)
    fig = F.reweight_figure(reweight(y, hat, z, "jb", [0, 1, 2]))
    gap = next(t for t in fig.data if t.name.startswith("GAP(TPR)"))
    assert np.ptp(gap.y) < 1e-12


def test_ds_effective_size_matches_downsampling_and_warns():
    from fairviz.conditions.methods import downsample
    counts = np.array([[300, 12], [50, 150]])
    y = np.repeat([0, 0, 1, 1], counts.ravel())
    z = np.repeat([0, 1, 0, 1], counts.ravel())
    assert simulate._downsampled_size(counts) == downsample(y, z, 2, 2, np.random.default_rng(0)).size
    data = cdata.moji_like(n_train=2000, n_dev=500, n_test=500, seed=3)
    sim = simulate.run(data, simulate.RetrainingParams(condition="grid", grid=(0.1,), methods=("ds",), seeds=1, m=1000,
                                                  train=QUICK))
    assert any("DS keeps only 200 of 1,000" in w for w in sim.warnings)     # 1000 × [[.01, .09], [.81, .09]]
