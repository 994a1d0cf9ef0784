"""Disparate Impact ([3] Definition 3.1) and the four-fifths rule (29 CFR §1607.4) that reads it."""
from __future__ import annotations

import numpy as np

from fairviz.parity.pair_metrics import pair_value

FOUR_FIFTHS = (0.8, 1.25)


def di(cm_i, cm_j, zero_convention: bool = False, variant: str = "def31") -> float | None:
    return pair_value("di", cm_i, cm_j, di_variant=variant, di_zero_convention=zero_convention)


def four_fifths(di_value: float | None) -> str:
    """The four-fifths rule (29 CFR §1607.4) on DI(i, j): 'for i', 'for j', 'none' or 'undefined'."""
    if di_value is None or not np.isfinite(di_value):
        return "undefined"
    if di_value < FOUR_FIFTHS[0]:
        return "for j"
    if di_value > FOUR_FIFTHS[1]:
        return "for i"
    return "none"


