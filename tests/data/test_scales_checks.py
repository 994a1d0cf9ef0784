"""Score scales and the direction check: a reversed score is caught with its uncertainty, a fine one is not."""
import numpy as np
import pytest
from scipy.special import expit
from sklearn.metrics import roc_auc_score

from fairviz.data.checks import check_direction
from fairviz.data.samples import load_sample
from fairviz.data.scales import guess_scale, to_probability


def test_scales_are_guessed_and_converted():
    assert guess_scale([0.1, 0.9, np.nan]).scale == "probability"
    assert guess_scale([3, 55, 97.5]).scale == "percent"
    assert guess_scale([-2.3, 0.4, 5.1]).scale == "logit"
    odd = guess_scale([300, 850])
    assert odd.scale is None and "300 to 850" in odd.reason
    np.testing.assert_allclose(to_probability([50, 5], "percent"), [0.5, 0.05])
    np.testing.assert_allclose(to_probability([0.0, 2.0], "logit"), expit([0.0, 2.0]))
    with pytest.raises(ValueError, match="unknown score scale"):
        to_probability([1], "odds")


def test_a_reversed_score_is_caught_and_a_right_one_is_not():
    pred = load_sample("compas")
    right = check_direction(pred.y, pred.score)
    assert not right.reversed and right.auroc == pytest.approx(roc_auc_score(pred.y, pred.score), abs=1e-12)
    flipped = check_direction(pred.y, 1 - pred.score)
    assert flipped.reversed
    assert flipped.auroc == pytest.approx(1 - right.auroc, abs=1e-12) and flipped.auroc_ci[1] < 0.5
    assert flipped.slope < 0 and flipped.slope_ci[1] < 0
    text = flipped.describe("score", "two_year_recid", 1)
    assert "runs the other way" in text and "two_year_recid = 1" in text


def test_an_uninformative_score_is_not_called_reversed():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    check = check_direction(y, rng.uniform(0, 1, 400))
    assert not check.reversed and check.auroc_ci[0] < 0.5 < check.auroc_ci[1]


def test_weights_equal_rows():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 500)
    s = np.round(np.clip(0.3 + 0.3 * y + rng.normal(0, 0.2, 500), 0.01, 0.99), 1)
    keys, counts = np.unique(np.column_stack([y, s]), axis=0, return_counts=True)
    rows, table = check_direction(y, s), check_direction(keys[:, 0], keys[:, 1], counts)
    assert table.auroc == pytest.approx(rows.auroc, abs=1e-12)
    assert table.slope == pytest.approx(rows.slope, rel=1e-8)
    assert table.auroc_ci == pytest.approx(rows.auroc_ci, abs=1e-10)
