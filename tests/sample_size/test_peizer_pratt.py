"""Peizer–Pratt (thesis §4.5, Eq. 4.46–4.47) against the exact binomial CDF on a whole grid.

The grid: n = 3 … 79, every x with min(x + 1, n − x) ≥ 2 (x = 1 … n − 2), and
p ∈ {0.01, 0.03, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5}: 8 × 3,003 = 24,024 cases. Taking the sign of z from
x + ½ − np instead of d = x + 2/3 − (n + 1/3)p mirrors 36 of them (worst x = 1, n = 51, p = 0.03:
0.455 against the exact 0.545).
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

import fairviz.sample_size as S

P_GRID = (0.01, 0.03, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)


def _grid():
    return [(x, n, p) for n in range(3, 80) for x in range(1, n - 1) for p in P_GRID]


def test_grid_has_24024_cases_and_every_one_is_within_a_tenth_of_a_percent():
    cases = _grid()
    assert len(cases) == 24_024
    x, n, p = map(np.array, zip(*cases))
    approx = np.array([S.peizer_pratt_cdf(int(a), int(b), float(c)) for a, b, c in cases])
    error = np.abs(approx - sps.binom.cdf(x, n, p))
    assert error.max() <= 1e-3, cases[int(error.argmax())]


def test_sign_comes_from_d_not_from_the_continuity_corrected_gap():
    # x + ½ − np = 1.5 − 1.53 < 0 but d = 1 + 2/3 − 51⅓ · 0.03 > 0: the CDF is above ½
    assert S.peizer_pratt_cdf(1, 51, 0.03) == pytest.approx(sps.binom.cdf(1, 51, 0.03), abs=1e-3)
    assert S.peizer_pratt_cdf(1, 51, 0.03) > 0.5
