"""Conditions, resampling and proxy classes against the worked numbers of *Systematic Evaluation of Predictive
Fairness* (§3.2, §5, Appendix B, Table 2)."""
import numpy as np
import pytest

from fairviz.conditions import distributions as d
from fairviz.conditions.reference import bios_counts, bios_professions
from fairviz.conditions.resample import EmptyCellError, resample, target_counts
from fairviz.data import DataError

BIOS = d.joint_from_counts(bios_counts())
PROFESSOR = bios_professions().index("professor")
NURSE = bios_professions().index("nurse")
MOJI = np.array([[0.4, 0.1], [0.1, 0.4]])

# α, negative cells before clipping, S after clipping, JB smallest count, JB professor count, JB max P'(y),
# CB smallest count, CB max P'(z|y)   (m = 30,000 on Table 2)
JB_TABLE = [
    (0, 0, 1.000, 10, 8943, 0.298, 10, 0.929),
    (0.25, 0, 1.000, 142, 6975, 0.232, 21, 0.822),
    (0.5, 0, 1.000, 273, 5007, 0.167, 32, 0.714),
    (0.75, 0, 1.000, 404, 3039, 0.101, 42, 0.607),
    (1, 0, 1.000, 536, 1072, 0.036, 53, 0.500),
    (1.25, 2, 1.030, 0, 0, 0.042, 42, 0.607),
    (1.5, 2, 1.095, 0, 0, 0.047, 32, 0.714),
    (1.75, 6, 1.184, 0, 0, 0.051, 21, 0.822),
    (2, 7, 1.285, 0, 0, 0.053, 10, 0.929),
]


@pytest.mark.parametrize("alpha, expected", [(0, 0.908), (1, 0.500), (2, 0.092)])
def test_nurse_female_share_under_cb(alpha, expected):
    c = d.conditional_balance(BIOS, alpha)
    assert c.joint[NURSE, 1] / c.joint[NURSE].sum() == pytest.approx(expected, abs=5e-4)


@pytest.mark.parametrize("row", JB_TABLE, ids=[f"alpha={r[0]}" for r in JB_TABLE])
def test_bios_clipping_table(row):
    alpha, negatives, s, jb_min, jb_prof, jb_max_y, cb_min, cb_max = row
    jb = d.joint_balance(BIOS, alpha)
    assert int(jb.clipped.sum()) == negatives
    assert jb.raw_sum == pytest.approx(s, abs=1e-3)
    assert jb.joint.sum() == pytest.approx(1.0, abs=1e-12)
    k = target_counts(jb.joint, 30_000)
    assert k.min() == jb_min
    assert k[PROFESSOR].sum() == pytest.approx(jb_prof, abs=1)
    assert jb.joint.sum(1).max() == pytest.approx(jb_max_y, abs=1e-3)
    cb = d.conditional_balance(BIOS, alpha)
    assert target_counts(cb.joint, 30_000).min() == cb_min
    share = cb.joint / cb.joint.sum(1, keepdims=True)
    assert share.max() == pytest.approx(cb_max, abs=1e-3)
    assert not cb.clipped.any()
    np.testing.assert_allclose(cb.joint.sum(1), BIOS.sum(1), atol=1e-12)     # CB keeps P(y)


def test_jb_clipped_cells_are_the_named_professions():
    names = bios_professions()
    clipped = d.joint_balance(BIOS, 2).clipped
    found = {(names[c], "MF"[g]) for c, g in zip(*np.nonzero(clipped))}
    assert found == {("professor", "M"), ("professor", "F"), ("nurse", "F"), ("physician", "M"),
                     ("physician", "F"), ("attorney", "M"), ("photographer", "M")}
    assert d.joint_balance(BIOS, 2).joint[PROFESSOR].sum() == 0


def test_moji_interpolation_and_grid_examples():
    for kind in ("cb", "jb"):
        np.testing.assert_allclose(d.interpolate(MOJI, kind, 0).joint, MOJI)
        np.testing.assert_allclose(d.interpolate(MOJI, kind, 1).joint, np.full((2, 2), 0.25))
        np.testing.assert_allclose(d.interpolate(MOJI, kind, 2).joint, [[0.1, 0.4], [0.4, 0.1]], atol=1e-12)
    for a in d.DEFAULT_ALPHAS:
        np.testing.assert_allclose(d.conditional_balance(MOJI, a).joint, d.joint_balance(MOJI, a).joint, atol=1e-12)
    # §5.1–5.4 worked examples: HAPPY-AAE / HAPPY-SAE / SAD-AAE / SAD-SAE
    np.testing.assert_allclose(d.moji_joint(0.5, 0.2).ravel(), [0.1, 0.4, 0.4, 0.1])
    np.testing.assert_allclose(d.moji_joint(0.2, 0.5).ravel(), [0.1, 0.1, 0.4, 0.4])
    np.testing.assert_allclose(d.moji_joint(0.9, 0.2).ravel(), [0.18, 0.72, 0.08, 0.02])
    np.testing.assert_allclose(d.moji_joint(0.2, 0.9).ravel(), [0.18, 0.02, 0.08, 0.72])
    np.testing.assert_allclose(d.compose([0.9, 0.1], [[0.2, 0.8], [0.8, 0.2]]), [[0.18, 0.72], [0.08, 0.02]])
    # CB at α maps s = 0.8 − 0.3α on Moji
    assert d.conditional_balance(MOJI, 0.5).joint[0, 0] / 0.5 == pytest.approx(0.8 - 0.3 * 0.5)


def test_sweeps_and_bad_inputs():
    assert [c.alpha for c in d.conditions(MOJI, "jb")] == [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2]
    grid = d.conditions(MOJI, "grid", grid=(0.2, 0.5))
    assert [(c.p_y, c.s) for c in grid] == [(0.2, 0.2), (0.2, 0.5), (0.5, 0.2), (0.5, 0.5)]
    with pytest.raises(DataError, match="two classes"):
        d.conditions(BIOS, "grid")
    with pytest.raises(DataError, match=r"\[0, 2\]"):
        d.joint_balance(MOJI, 2.5)


def _pool(rng, counts):
    y = np.repeat([0, 0, 1, 1], counts)
    z = np.repeat([0, 1, 0, 1], counts)
    order = rng.permutation(y.size)
    return y[order], z[order]


def test_resample_counts_cells_uniqueness_and_seed():
    rng = np.random.default_rng(0)
    y, z = _pool(rng, [400, 100, 100, 400])
    cond = d.joint_balance(MOJI / MOJI.sum(), 2)               # asks 40% of HAPPY-SAE: more than the pool has
    idx, cells = resample(y, z, cond, 1000, seed=3)
    np.testing.assert_array_equal(cells.counts, [[100, 400], [400, 100]])
    got = d.cell_counts(y[idx], z[idx], 2, 2)
    np.testing.assert_array_equal(got, cells.counts)
    small = d.interpolate(MOJI, "jb", 0)
    idx0, _ = resample(y, z, small, 500, seed=3)
    assert np.unique(idx0).size == idx0.size                  # no duplicates when every cell has enough rows
    assert np.array_equal(resample(y, z, small, 500, seed=3)[0], idx0)
    assert not np.array_equal(resample(y, z, small, 500, seed=4)[0], idx0)
    # the over-asked cell uses every available row once, then tops up
    sae = idx[(y[idx] == 0) & (z[idx] == 1)]
    assert np.unique(sae).size == 100


def test_resample_empty_cell():
    y = np.array([0, 0, 1, 1, 1])
    z = np.array([0, 0, 0, 1, 1])
    cond = d.interpolate(np.array([[0.4, 0.0], [0.2, 0.4]]), "jb", 1)
    with pytest.raises(EmptyCellError, match=r"\(0, 1\)"):
        resample(y, z, cond, 100, seed=0)
    idx, cells = resample(y, z, cond, 100, seed=0, on_empty="drop")
    assert cells.dropped[0, 1] and cells.counts[0, 1] == 0 and idx.size == 75


def test_proxy_bins_train_edges_on_other_splits():
    y = np.arange(100.0)
    bins = d.proxy_bins(y, 4)
    assert bins.n_classes == 4
    np.testing.assert_array_equal(np.bincount(bins.apply(y)), [25, 25, 25, 25])
    assert bins.apply([-5.0, 200.0, 10.0]).tolist() == [0, 0, 0]
