"""RDF-guided augmentation (Residual Distribution Fairness §8.3, Algorithm 1) with a bag-of-words stand-in model."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairviz.data import ColumnMapping, build_predictions
from fairviz.explain.data import geco_like
from fairviz.probing import SIGN_CONVENTION
from fairviz.probing.augment import (AugmentParams, Split, augment, counterfactual, diagnostic_set, fairness,
                                     select)
from fairviz.probing.textmodel import splits
from fairviz.residuals import RDFParams, analyse
from tests.probing.stand_ins import BagOfWords


@pytest.fixture(scope="module")
def data():
    train, val, test = splits(geco_like(900, "subj", seed=1), (0.4, 0.3), seed=0)
    t, v, s = Split.of(train.frame), Split.of(val.frame), Split.of(test.frame)
    return t, v, s, BagOfWords(t.text, t.label)


def test_algorithm1_dstar_equals_the_residual_page_dstar(data):
    _, val, _, model = data
    p = model.score(val.text)
    for mode in ("residual", "percentile"):
        settings = AugmentParams(region_mode=mode)
        mask, distance = diagnostic_set(p, val.label, val.group, settings)
        frame = pd.DataFrame({"y": val.label, "score": p, "group": val.group})
        page = analyse(build_predictions(frame, ColumnMapping("y", "score", ("group",))), "group",
                       RDFParams(region_eps=0.05, region_mode=mode, resamples=0, knee_resamples=0))
        np.testing.assert_array_equal(mask, page.in_knee_region)
        assert 0 < mask.sum() < mask.size
        if mode == "residual":
            # Algorithm 1 step 2 by brute force: |d_i − r_{a_i,s}| < ε for a knee s of row i's own group
            d = p - val.label
            brute = np.zeros(d.size, dtype=bool)
            for g in page.groups:
                rows = val.group == g.name
                for knee in g.knees:
                    brute |= rows & (np.abs(d - knee.residual) < 0.05)
            np.testing.assert_array_equal(mask, brute)
            np.testing.assert_array_equal(mask, distance < 0.05)


def test_selection_returns_k_unique_rows_and_fills_up_nearest(data):
    _, val, _, model = data
    p = model.score(val.text)
    mask, distance = diagnostic_set(p, val.label, val.group, AugmentParams())
    rng = np.random.default_rng(0)
    small = int(mask.sum()) // 2
    rows, short = select("rdf", small, p, mask, distance, rng)
    assert short == 0 and len(set(rows)) == small and mask[rows].all()
    big = int(mask.sum()) + 10
    rows, short = select("rdf", big, p, mask, distance, rng)
    assert short == 10 and len(set(rows)) == big and mask[rows].sum() == mask.sum()
    outside = np.setdiff1d(rows, np.flatnonzero(mask))
    assert distance[outside].max() <= np.sort(distance[~mask])[9]
    for strategy in ("random", "uncertainty"):
        rows, _ = select(strategy, 50, p, mask, distance, rng)
        assert len(set(rows)) == 50


def test_counterfactual_swaps_or_removes():
    assert counterfactual("He sold his car .") == "She sold her car ."
    assert counterfactual("A gay couple sold the car .") == "A couple sold the car ."


def test_augment_deltas_are_after_minus_before_with_welch_tests(data):
    train, val, test, model = data
    settings = AugmentParams(ks=(30,), seeds=(42, 123, 456))
    result = augment(model, train, val, test, settings)
    params = settings.rdf_params()
    before = fairness(model, test, params)
    assert result.before["f_pattern"] == pytest.approx(before["f_pattern"])
    # replay seed 42 of the RDF strategy: same selection, same counterfactuals, same refit → same Δ
    p = model.score(val.text)
    mask, distance = diagnostic_set(p, val.label, val.group, settings)
    rows, _ = select("rdf", 30, p, mask, distance, np.random.default_rng([42, 30, 2]))
    tuned = model.fine_tune(train.text + [counterfactual(val.text[i]) for i in rows],
                            np.concatenate([train.label, val.label[rows]]), 42)
    after = fairness(tuned, test, params)
    rdf = result.record("rdf", 30)
    assert rdf.deltas["f_pattern"][0] == pytest.approx(after["f_pattern"] - before["f_pattern"], abs=1e-12)
    assert rdf.deltas["f_dist"][0] == pytest.approx(after["f_dist"] - before["f_dist"], abs=1e-12)
    data_ = result.to_dict()
    record = next(r for r in data_["records"] if r["strategy"] == "rdf")
    values = np.array(record["delta"]["f_pattern"]["values"])
    assert record["delta"]["f_pattern"]["mean"] == pytest.approx(values.mean())
    assert record["delta"]["f_pattern"]["std"] == pytest.approx(values.std(ddof=1))
    assert record["delta"]["gap"]["mean"] == pytest.approx(-values.mean())
    assert record["efficiency"]["f_pattern"] == pytest.approx(values.mean() / 30)
    random_values = np.array(next(r for r in data_["records"] if r["strategy"] == "random")["delta"]["f_pattern"]["values"])
    from scipy.stats import ttest_ind, ttest_rel
    expected = ttest_ind(values, random_values, equal_var=False)
    got = record["t_test_vs_random"]["f_pattern"]["p_value"]
    assert got == (pytest.approx(expected.pvalue) if np.isfinite(expected.pvalue) else None)
    paired = ttest_rel(values, random_values).pvalue
    assert record["t_test_vs_random"]["f_pattern"]["paired_p_value"] == (
        pytest.approx(paired) if np.isfinite(paired) else None)
    assert next(r for r in data_["records"] if r["strategy"] == "random")["t_test_vs_random"] is None
    assert data_["sign_convention"] == SIGN_CONVENTION and "gap" in SIGN_CONVENTION
    assert data_["control"]["k"] == 0
    reading = data_["calibration"]["reading"]
    assert ("< 0.15" in reading) == (result.ece < 0.15)
