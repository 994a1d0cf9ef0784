"""Confusion counts per group in one pass, and the rates built from them.

All groups' counts come from a single ``np.bincount`` over ``4·group + 2·y + ŷ``: one scan of the rows,
no per-group loop, no pandas groupby. Rates with a zero denominator are ``None`` (undefined), never 0.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np


@dataclass(frozen=True)
class ConfusionCounts:
    tp: int
    fn: int
    fp: int
    tn: int

    @property
    def n(self) -> int:
        return self.tp + self.fn + self.fp + self.tn

    @property
    def positives(self) -> int:
        return self.tp + self.fn

    @property
    def predicted_positive(self) -> int:
        return self.tp + self.fp

    def base_rate(self) -> float | None:
        return ratio(self.positives, self.n)

    def ppr(self) -> float | None:
        """Positive prediction (selection) rate."""
        return ratio(self.predicted_positive, self.n)

    def tpr(self) -> float | None:
        return ratio(self.tp, self.positives)

    def fpr(self) -> float | None:
        return ratio(self.fp, self.fp + self.tn)

    def fnr(self) -> float | None:
        return ratio(self.fn, self.positives)

    def tnr(self) -> float | None:
        return ratio(self.tn, self.fp + self.tn)

    def ppv(self) -> float | None:
        return ratio(self.tp, self.predicted_positive)

    def accuracy(self) -> float | None:
        return ratio(self.tp + self.tn, self.n)

    def to_dict(self) -> dict:
        return asdict(self)


def ratio(numerator: float, denominator: float) -> float | None:
    return None if denominator == 0 else numerator / denominator


def difference(a: float | None, b: float | None) -> float | None:
    """a − b, undefined when either side is."""
    return None if a is None or b is None else a - b


def confusion_by_group(y: np.ndarray, predicted: np.ndarray, codes: np.ndarray,
                       n_groups: int, weights: np.ndarray | None = None) -> list[ConfusionCounts]:
    """Confusion counts of each group code 0…n_groups−1 (``predicted`` is the 0/1 decision). With ``weights`` each
    entry stands for that many rows (the counts of the sufficient-statistics table)."""
    cells = np.bincount(codes.astype(np.int64) * 4 + 2 * y.astype(np.int64) + predicted.astype(np.int64),
                        weights=weights, minlength=4 * n_groups).astype(np.int64).reshape(n_groups, 4)
    # cell index 2·y + ŷ: 0 = tn, 1 = fp, 2 = fn, 3 = tp
    return [ConfusionCounts(tp=int(c[3]), fn=int(c[2]), fp=int(c[1]), tn=int(c[0])) for c in cells]


def decisions(score: np.ndarray, threshold: float) -> np.ndarray:
    """The decision rule of every page: positive when score ≥ threshold."""
    return (score >= threshold).astype(np.int8)
