"""Threshold invariance (Residual Distribution Fairness, App. D.1, Table 5): CV over τ = 0.1…0.9."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wasserstein_distance

from fairviz.data import ColumnMapping, build_predictions
from fairviz.report.plan import audit as run_audit
from fairviz.report.options import AuditParams
from fairviz.residuals import (GAP_METRICS, RDF_METRICS, THRESHOLDS, RDFParams, analyse, coefficient_of_variation,
                               threshold_invariance)


def _shift_pred(shift=0.1):
    """Spec acceptance data 1: group 0 p_i = (i+0.5)/1000, y_i = [i mod 7 < 2]; group 1 the same labels, p + 0.1."""
    i = np.arange(1000)
    p0 = (i + 0.5) / 1000
    y = (i % 7 < 2).astype(int)
    p1 = np.minimum(p0 + shift, 1.0)
    frame = pd.DataFrame({"y": np.concatenate([y, y]), "score": np.concatenate([p0, p1]),
                          "group": ["a"] * 1000 + ["b"] * 1000})
    return build_predictions(frame, ColumnMapping("y", "score", ("group",)))


def test_cv_formula_population_std_over_abs_mean():
    assert coefficient_of_variation([1.0, 3.0]) == (pytest.approx(50.0), "")        # std 1, mean 2
    assert coefficient_of_variation([-1.0, -3.0])[0] == pytest.approx(50.0)          # |mean|
    assert coefficient_of_variation([0.1] * 9) == (0.0, "")                          # exactly 0, no ulp noise
    assert coefficient_of_variation([-1.0, 1.0]) == (None, "mean is 0")
    assert coefficient_of_variation([0.2, None])[0] is None


def test_rdf_metrics_have_cv_exactly_zero_and_gaps_vary():
    result = threshold_invariance(_shift_pred())
    assert result.thresholds == THRESHOLDS == (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    pair = result.pair("a", "b")
    for m in ("f_pattern", "f_pattern_mean", "f_dist", "f_dist_y0", "f_dist_y1"):
        assert pair.cv[m] == 0.0, m
        assert len(set(pair.values[m])) == 1
    pred = _shift_pred()
    d = pred.score - pred.y
    a, b = d[:1000], d[1000:]
    assert pair.values["f_dist"][0] == pytest.approx(wasserstein_distance(a, b), abs=1e-12)
    assert pair.values["f_pattern"][0] == pytest.approx(1 - abs(np.median(a) - np.median(b)) / 2, abs=1e-12)
    # every τ sees the shift 0.1 in positive rates (p + 0.1 crosses τ exactly 100 rows earlier) → dp_diff flat 0.1,
    # but the TPR/FPR gaps and the ratios change with τ
    assert pair.values["dp_diff"][4] == pytest.approx(0.1, abs=1e-12)
    for m in ("eo_tpr_diff", "eo_fpr_diff", "dp_ratio", "eo_ratio"):
        assert pair.cv[m] is not None and pair.cv[m] > 1.0, m
    # the CV is the formula over the nine values
    x = np.array(pair.values["dp_ratio"], dtype=float)
    assert pair.cv["dp_ratio"] == pytest.approx(100 * x.std() / abs(x.mean()))


def test_dp_diff_varies_on_data_where_it_varies():
    rng = np.random.default_rng(0)
    n = 4000
    g = rng.integers(0, 2, n)
    p = np.clip(rng.beta(2, 2, n) + 0.15 * g * rng.random(n), 0, 1)
    y = (rng.random(n) < p).astype(int)
    pred = build_predictions(pd.DataFrame({"y": y, "score": p, "group": g}), ColumnMapping("y", "score", ("group",)))
    pair = threshold_invariance(pred).pairs[0]
    assert pair.cv["dp_diff"] > 0 and pair.cv["eo_diff"] > 0
    assert all(pair.cv[m] == 0.0 for m in RDF_METRICS if pair.cv[m] is not None)
    assert pair.cv["f_h"] == 0.0 and pair.cv["f_v"] == 0.0


def test_audit_json_carries_threshold_invariance_per_pair():
    audit = run_audit(_shift_pred(), AuditParams(rdf=RDFParams(resamples=0, knee_resamples=0)))
    section = audit.data["threshold_invariance"]
    assert section["thresholds"] == list(THRESHOLDS)
    (pair,) = section["pairs"]
    assert (pair["group_i"], pair["group_j"]) == ("a", "b")
    assert set(RDF_METRICS + GAP_METRICS) <= set(pair["cv"])
    assert pair["cv"]["f_pattern"] == 0.0 and pair["cv"]["eo_tpr_diff"] > 0
    assert "Threshold invariance" in audit.to_html()


def test_reusing_the_residual_audit_gives_the_same_result():
    pred = _shift_pred()
    audit = analyse(pred, "group", RDFParams(resamples=0, knee_resamples=0))
    assert threshold_invariance(pred, audit=audit) == threshold_invariance(pred)
