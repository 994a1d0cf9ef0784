"""MATCH per class: the binary MATCH on one-vs-rest counts, Benjamini–Hochberg over classes × groups × metrics,
weights = repeated rows, planted disparity found, null data not flagged, bad input refused."""
import numpy as np
import pytest

from fairviz.core import stats
from fairviz.core.counts import confusion_by_group
from fairviz.data.model import DataError
from fairviz.sample_size.match import match_groups
from fairviz.sample_size.class_match import match_by_class, one_vs_rest_counts
from fairviz.sample_size.results import MatchParams

CLASSES = ("x", "y", "z")
NAMES = ("a", "b", "c")
PARAMS = MatchParams(reference="population", metrics=("tpr", "fpr", "ppr", "acc"), draws=2000)


def data(n=1500, seed=0, harm_b=0.0):
    rng = np.random.default_rng(seed)
    codes = rng.choice(3, n, p=[0.6, 0.3, 0.1])
    y = rng.integers(0, 3, n)
    right = 0.75 - harm_b * ((codes == 1) & (y == 0))
    return y, np.where(rng.random(n) < right, y, rng.integers(0, 3, n)), codes


def test_each_class_is_the_binary_match_on_one_vs_rest_counts():
    y, predicted, codes = data()
    result = match_by_class(y, predicted, codes, NAMES, CLASSES, params=PARAMS)
    for c, name in enumerate(CLASSES):
        binary = confusion_by_group((y == c).astype(int), (predicted == c).astype(int), codes, 3)
        peer = match_groups("", NAMES, binary, PARAMS)
        for r in peer.results:
            mine = result.get(name, r.group, r.metric)
            assert mine.score == pytest.approx(r.score, abs=1e-12)
            assert mine.p_value == pytest.approx(r.p_value, abs=1e-12)
    flat = [r for _, r in result.results()]
    expected = stats.benjamini_hochberg([r.p_value for r in flat])          # one family: the whole table
    np.testing.assert_allclose([r.p_adjusted for r in flat], expected, rtol=0, atol=1e-12)
    assert len(flat) == len(CLASSES) * len(NAMES) * len(PARAMS.metrics)


def test_one_vs_rest_counts_add_up():
    y, predicted, codes = data(n=300)
    counts = one_vs_rest_counts(y, predicted, codes, 3, 3)
    assert (counts.sum(2) == np.bincount(codes, minlength=3)[None, :]).all()
    assert counts[1, 2, 0] == np.sum((y == 1) & (predicted == 1) & (codes == 2))


def test_weighted_entries_are_repeated_rows():
    y, predicted, codes = data(n=400, seed=1)
    weights = np.random.default_rng(2).integers(0, 4, y.size)
    weighted = match_by_class(y, predicted, codes, NAMES, CLASSES, weights, params=PARAMS).to_dict()
    rows = match_by_class(*(np.repeat(a, weights) for a in (y, predicted, codes)), NAMES, CLASSES,
                          params=PARAMS).to_dict()
    assert weighted == rows


def test_planted_disparity_is_found():
    y, predicted, codes = data(n=3000, seed=3, harm_b=0.4)
    result = match_by_class(y, predicted, codes, NAMES, CLASSES, params=PARAMS)
    hit = result.get("x", "b", "tpr")
    assert hit.p_adjusted < 0.01 and hit.score < hit.reference_score
    assert ("x", hit) in result.significant()


def test_null_data_is_not_flagged():
    flagged = [bool(match_by_class(*data(n=800, seed=50 + s), NAMES, CLASSES,
                                   params=MatchParams(reference="population", metrics=("tpr", "fpr", "ppr"),
                                                      draws=500, seed=s)).significant())
               for s in range(40)]
    assert sum(flagged) <= 2


def test_the_default_reference_is_the_population():
    y, predicted, codes = data(n=300)
    result = match_by_class(y, predicted, codes, NAMES, CLASSES)
    assert result.params.reference == "population" and result.to_dict()["reference"] == "the whole population"


@pytest.mark.parametrize("case, message", [("one group", "at least two groups"),
                                           ("unknown class", "not one of the 3 classes"),
                                           ("lengths", "one value per row"),
                                           ("nan", "1 missing values"),
                                           ("weights", "whole numbers")])
def test_bad_input_is_one_plain_sentence(case, message):
    y, predicted, codes = data(n=200)
    if case == "one group":
        codes = np.zeros_like(codes)
    elif case == "unknown class":
        y = y.copy()
        y[0] = 5
    elif case == "nan":
        y = y.astype(float)
        y[4] = np.nan
    elif case == "lengths":
        codes = codes[:-1]
    weights = np.full(y.size, 0.5) if case == "weights" else None
    with pytest.raises(DataError) as caught:
        match_by_class(y, predicted, codes, NAMES, CLASSES, weights, params=PARAMS)
    assert len(caught.value.problems) == 1 and message in caught.value.problems[0]
