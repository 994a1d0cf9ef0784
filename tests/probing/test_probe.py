"""Counterfactual probing (Residual Distribution Fairness §7, App. D.2, App. O) with stand-in text models."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairviz.explain.data import neutral_control
from fairviz.probing.lexicon import demographic_swap, identity_removal
from fairviz.probing.probe import ProbeParams, entropy, matched_samples, pool_audit, probe, strategy_samples
from fairviz.residuals import RDFParams, analyse
from tests.probing.stand_ins import blind_scorer, gender_keyed_scorer

SETTINGS = ProbeParams(resamples=300)


@pytest.fixture(scope="module")
def pool():
    return neutral_control(600, seed=3).frame


def test_swap_and_removal_edit_the_listed_words_only():
    assert demographic_swap("He gave his sister the map .") == "She gave her brother the map ."
    assert demographic_swap("SHE told Mr. Smith about her son") == "HE told Mrs. Smith about his daughter"
    assert demographic_swap("The manager thanked the hero .") == "The manager thanked the hero ."   # word boundaries
    assert identity_removal("The gay man met a Muslim woman .") == "The met a ."
    assert identity_removal("Nothing to remove here .") == "Nothing to remove here ."


def test_model_blind_to_the_swapped_words_gives_zero_sensitivity(pool):
    result = probe(pool["text"], pool["label"], pool["group"], blind_scorer, SETTINGS)
    swap = result.probes["demographic_swap"]
    assert swap.n_knee == 150 and swap.n_nonknee == 150
    assert swap.changed_knee == 1.0                          # every sentence has gender words: the swap did edit
    assert swap.knee_mean == 0.0 and swap.nonknee_mean == 0.0
    assert (result.examples["delta_swap"] == 0).all()
    assert swap.ratio is None and "ignores the edited words" in swap.note and "undefined" in swap.note
    assert result.ratio_average is None
    assert "undefined" in result.to_dict()["probes"]["demographic_swap"]["note"]
    assert result.strategies["knees"].demographic_sensitivity == 0.0


def test_model_keyed_on_gender_words_gives_a_large_delta(pool):
    result = probe(pool["text"], pool["label"], pool["group"], gender_keyed_scorer, SETTINGS)
    ex = result.examples
    swap = result.probes["demographic_swap"]
    # each swap adds or removes every female word, so the score moves by the push unless clipping bites
    expected = np.abs(gender_keyed_scorer(ex["swapped"]) - gender_keyed_scorer(ex["text"]))
    np.testing.assert_allclose(ex["delta_swap"], expected, atol=1e-12)
    assert swap.knee_mean > 0.2 and swap.nonknee_mean > 0.2
    assert swap.ratio == pytest.approx(swap.knee_mean / swap.nonknee_mean)
    assert swap.ci.low <= swap.ratio <= swap.ci.high
    removal = result.probes["identity_removal"]
    assert removal.knee_mean > 0.1               # removing the female words removes the push
    assert result.ratio_average == pytest.approx((swap.ratio + removal.ratio) / 2)
    assert set(result.strategies) == {"knees", "uncertainty", "confidence", "random"}
    assert all(s.n == 100 for s in result.strategies.values())
    assert result.strategies["random"].demographic_sensitivity > 0.2
    assert result.error_vs_sensitivity["n"] == 300 and result.error_vs_sensitivity["spearman"] is not None


def test_knee_sample_is_the_residual_page_knee_region_and_non_knee_is_matched(pool):
    p = gender_keyed_scorer(pool["text"])
    audit, kept = pool_audit(pool["text"], pool["label"], pool["group"], p, SETTINGS)
    frame = pool.assign(score=p)
    from fairviz.data import ColumnMapping, build_predictions
    page = analyse(build_predictions(frame, ColumnMapping("label", "score", ("group",))), "group",
                   RDFParams(resamples=0, knee_resamples=0))
    np.testing.assert_array_equal(audit.in_knee_region, page.in_knee_region)
    groups, y = pool["group"].to_numpy(), pool["label"].to_numpy()
    knee, rest, notes = matched_samples(audit.in_knee_region, groups, y, 150, np.random.default_rng(0))
    assert audit.in_knee_region[knee].all() and not audit.in_knee_region[rest].any()
    cells = lambda rows: pd.Series(list(zip(groups[rows], y[rows]))).value_counts().sort_index()
    pd.testing.assert_series_equal(cells(knee), cells(rest))
    assert notes == []


def test_selection_strategies_pick_by_entropy_and_region():
    p = np.array([0.5, 0.99, 0.01, 0.6, 0.45, 0.9, 0.2, 0.7])
    region = np.array([1, 0, 0, 1, 0, 0, 1, 0], dtype=bool)
    chosen = strategy_samples(region, p, 3, np.random.default_rng(0))
    assert entropy(np.array([0.5]))[0] == pytest.approx(np.log(2))
    assert list(chosen["uncertainty"]) == [0, 3, 4]          # |p − ½| smallest
    assert list(chosen["confidence"]) == [1, 2, 5]           # |p − ½| largest
    assert list(chosen["knees"]) == [0, 3, 6]
    assert len(set(chosen["random"])) == 3


def test_result_json_has_the_cli_shape(pool):
    data = probe(pool["text"], pool["label"], pool["group"], gender_keyed_scorer, SETTINGS).to_dict()
    for name in ("demographic_swap", "identity_removal"):
        assert {"knee_mean", "nonknee_mean", "ratio", "ci", "p_value"} <= set(data["probes"][name])
    assert set(data["strategies"]["knees"]) >= {"n", "demographic_sensitivity", "identity_dependence"}
    assert len(data["examples"]) == 300 and {"text", "swapped", "delta_swap"} <= set(data["examples"][0])
