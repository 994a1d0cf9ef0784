"""Equal-width bins put a score that sits on an edge in the bin that starts there, whatever the float product
score × bins rounds to (0.58 × 50 = 28.999…96)."""
from fractions import Fraction

import numpy as np
import pytest

from fairviz.core.ece import ece_bin_index


@pytest.mark.parametrize("bins", [5, 7, 10, 13, 15, 20, 50, 100])
def test_decimal_scores_fall_in_the_bin_their_exact_value_gives(bins):
    digits = np.arange(1_001)
    scores = digits / 1_000
    expected = [min(int(Fraction(int(d), 1_000) * bins), bins - 1) for d in digits]
    assert ece_bin_index(scores, bins).tolist() == expected


def test_edge_examples():
    assert ece_bin_index(np.array([0.58]), 50)[0] == 29
    assert ece_bin_index(np.array([0.29, 0.57]), 100).tolist() == [29, 57]
    assert ece_bin_index(np.array([0.0, 1.0]), 15).tolist() == [0, 14]
