"""The residual section on weighted data (the engine's counts per cell) equals the same analysis of the expanded
rows: curves, knees (all points ≤ 20,000 rows, the percentile grid above), medians, W1, resamples, D* and tests."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairviz.core import stats
from fairviz.data import ColumnMapping, build_predictions
from fairviz.residuals import RDFParams, analyse, threshold_invariance, wasserstein_sorted

MAPPING = ColumnMapping("y", "score", ("group",))


def _weighted(n: int, seed: int, distinct: int):
    rng = np.random.default_rng(seed)
    group = rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1])
    p = np.round(rng.beta(0.8, 1.2, n) * distinct) / distinct
    y = rng.binomial(1, np.clip(p + (group == "b") * 0.1, 0, 1))
    frame = pd.DataFrame({"y": y, "score": p, "group": group})
    table = frame.groupby(["y", "score", "group"], as_index=False).size().sample(frac=1, random_state=seed)
    weighted = build_predictions(table, MAPPING, weights=table["size"].to_numpy())
    return weighted, weighted.rows()


def _close(a, b):
    return a == pytest.approx(b, rel=1e-12, abs=1e-12, nan_ok=True)


@pytest.mark.parametrize("mode", ["percentile", "residual"])
def test_weighted_analysis_equals_the_expanded_rows(mode):
    # group a has 30,000 rows (knees on the 20,000-point grid), c about 5,000 (all points); cells hold many rows
    weighted, rows = _weighted(50_000, 3, distinct=400)
    assert weighted.weighted and weighted.y.size < 3_000
    params = RDFParams(resamples=40, knee_resamples=12, region_mode=mode)
    w, r = analyse(weighted, params=params), analyse(rows, params=params)
    assert max(g.n for g in w.groups) > 20_000
    for gw, gr in zip(w.groups, r.groups):
        for field in ("n", "positives", "knee_rows", "ece_regime", "left_knee", "right_knee"):
            assert getattr(gw, field) == getattr(gr, field), field
        for field in ("base_rate", "mean_score", "mean_residual", "median_residual", "median_residual_y0",
                      "median_residual_y1", "ece"):
            assert _close(getattr(gw, field), getattr(gr, field)), field
    for pw, pr in zip(w.pairs, r.pairs):
        for field in ("f_pattern", "f_pattern_y0", "f_pattern_y1", "f_pattern_mean", "f_dist", "f_dist_y0",
                      "f_dist_y1", "f_h", "f_v", "p_median", "p_dist"):
            assert _close(getattr(pw, field), getattr(pr, field)), field
        assert set(pw.ci) == set(pr.ci) and pw.ci["f_h"].to_list()[0] is not None
        for key in pw.ci:
            assert pw.ci[key].to_list() == pytest.approx(pr.ci[key].to_list(), rel=1e-12), key
    cw, cr = w.concentration, r.concentration
    assert (cw.n_knee, cw.n_nonknee, cw.verdict) == (cr.n_knee, cr.n_nonknee, cr.verdict) and cw.n_knee > 0
    for field in ("knee_mean", "nonknee_mean", "ratio", "ece"):
        assert _close(getattr(cw, field), getattr(cr, field)), field
    assert _close(cw.mann_whitney.statistic, cr.mann_whitney.statistic)
    assert _close(cw.mann_whitney.p_two_sided, cr.mann_whitney.p_two_sided)
    assert cw.ratio_ci.to_list() == pytest.approx(cr.ratio_ci.to_list(), rel=1e-12)
    assert cw.ece_ci.to_list() == pytest.approx(cr.ece_ci.to_list(), rel=1e-12)
    # D* and the curves name rows of Predictions.rows(), built on demand
    assert (w.in_knee_region == r.in_knee_region).all() and (w.nearest_knee == r.nearest_knee).all()
    assert int(w.region_rows.sum()) == int(r.in_knee_region.sum())
    for name in w.curves:
        for outcome in w.curves[name]:
            a, b = w.curves[name][outcome], r.curves[name][outcome]
            assert (a.row == b.row).all() and np.array_equal(a.residual, b.residual)
            assert np.array_equal(a.percentile, b.percentile)


def test_threshold_invariance_reads_weighted_data():
    weighted, rows = _weighted(8_000, 5, distinct=50)
    a, b = threshold_invariance(weighted), threshold_invariance(rows)
    for pa, pb in zip(a.pairs, b.pairs):
        for metric in pa.values:
            assert pa.values[metric] == pytest.approx(pb.values[metric], rel=1e-12, abs=1e-12)


def test_wasserstein_and_mann_whitney_from_counts_equal_the_rows():
    rng = np.random.default_rng(0)
    a, b = np.sort(rng.integers(0, 30, 40) / 30), np.sort(rng.integers(5, 40, 25) / 40)
    wa, wb = rng.integers(1, 9, a.size), rng.integers(1, 9, b.size)
    expected = wasserstein_sorted(np.repeat(a, wa), np.repeat(b, wb))
    assert wasserstein_sorted(a, b, wa, wb) == pytest.approx(expected, rel=1e-12)
    values = np.concatenate([a, b])
    for cx, cy in ((np.concatenate([wa, 0 * wb]), np.concatenate([0 * wa, wb])),           # many ties
                   (np.concatenate([wa, 0 * wb]), np.r_[np.zeros(a.size - 3, int), 1, 2, 1, np.zeros(b.size, int)])):
        got = stats.mann_whitney_counts(values, cx, cy)
        ref = stats.mann_whitney(np.repeat(values, cx), np.repeat(values, cy))
        assert got.statistic == pytest.approx(ref.statistic, rel=1e-12)
        assert got.p_two_sided == pytest.approx(ref.p_two_sided, rel=1e-12)
        assert got.p_greater == pytest.approx(ref.p_greater, rel=1e-12) and 0 < got.p_two_sided < 1
