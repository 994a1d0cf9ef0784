"""Holes ([3] §4.2–4.4): how many confusion matrices of n rows there are, how often each metric is undefined among
them, and how likely a group drawn from a reference is to leave a metric undefined."""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Sequence

import numpy as np
from scipy.special import gammaln

from fairviz.core.confusion_metrics import CELL_ORDER, METRICS as CM_METRICS, Cells


def configuration_count(n: int) -> int:
    """|𝓜(n)| = C(n + 3, 3): the number of confusion matrices of n rows (Theorem 4.1)."""
    return math.comb(n + 3, 3)


def cell_value_count(x: int, n: int) -> int:
    """How often one cell equals x across 𝓜(n): the triangular number (n − x + 1)(n − x + 2)/2 (Theorem 4.2)."""
    return (n - x + 1) * (n - x + 2) // 2


@lru_cache(maxsize=8)
def configurations(n: int) -> Cells:
    """Every confusion matrix of n rows (read-only arrays; C(n + 3, 3) of them)."""
    if n < 0 or n > 400:
        raise ValueError(f"enumeration is limited to 0 ≤ n ≤ 400 (got {n})")
    r = np.arange(n + 1, dtype=np.int32)
    tp, fn, fp = np.meshgrid(r, r, r, indexing="ij", copy=False)
    keep = (tp + fn + fp) <= n
    tp, fn, fp = tp[keep], fn[keep], fp[keep]
    cells = Cells(tp, fn, fp, (n - tp - fn - fp).astype(np.int32))
    for array in cells:
        array.setflags(write=False)
    return cells


def multinomial_log_weights(cells: Cells, p: np.ndarray) -> np.ndarray:
    """log P(CM) under Multinomial(n, p) for each matrix (Eq. 4.13, corrected); p in ``CELL_ORDER``."""
    n = cells.tp[0] + cells.fn[0] + cells.fp[0] + cells.tn[0] if cells.tp.size else 0
    out = np.full(cells.tp.shape, gammaln(n + 1))
    for counts, prob in zip(cells, p):
        counts = np.asarray(counts, float)
        out -= gammaln(counts + 1)
        if prob > 0:
            out += counts * np.log(prob)
        else:
            out[counts > 0] = -np.inf
    return out


def hole_counts(n: int, metrics: Sequence[str] = tuple(CM_METRICS)) -> dict[str, int]:
    """How many of the C(n + 3, 3) matrices of size n leave each metric undefined (by enumeration)."""
    cells = configurations(n)
    return {m: int(np.count_nonzero(~np.isfinite(CM_METRICS[m](cells)))) for m in metrics}


def printed_hole_count(metric: str, n: int) -> str:
    """[3] Theorem 4.3 as printed, for display next to the enumerated count (its PT bound fails from n = 4)."""
    family = CM_METRICS[metric].family
    if family in ("binomial", "benefit"):
        return "0"
    if family == "jrm":
        return str(n + 1)
    if metric == "f1":
        return "1"
    if metric == "mcc":
        return str(4 * n)
    if n >= 3:
        upper = math.exp(0.5772156649) * n * math.log(math.log(n)) + 0.6483 * n / math.log(math.log(n))
        return f"≥ {2 * n + 2}, < {upper:.1f}"
    return f"≥ {2 * n + 2}"


def te_pair_holes(n1: int, n2: int) -> tuple[int, int]:
    """(correct, as printed) counts of matrix pairs (CM₁ of n1 rows, CM₂ of n2 rows) with TE undefined.

    TE needs FP₁ > 0 and FP₂ > 0. Pairs with FP₁ = 0 or FP₂ = 0: C(n1+2,2)·N(n2) + N(n1)·C(n2+2,2) − both; the
    printed C(n1+2,2) + C(n2+2,2) − 1 counts single matrices, not pairs.
    """
    z1, z2 = math.comb(n1 + 2, 2), math.comb(n2 + 2, 2)
    correct = z1 * configuration_count(n2) + configuration_count(n1) * z2 - z1 * z2
    return correct, z1 + z2 - 1


def undefined_probability(metric: str, n: int, p: np.ndarray) -> float | None:
    """P(metric undefined) for a matrix of n rows drawn from cell probabilities p; None where no closed form."""
    p = dict(zip(CELL_ORDER, np.asarray(p, float)))
    spec = CM_METRICS.get(metric)
    if metric == "ofi" or spec is None or spec.family in ("binomial", "benefit"):
        return 0.0
    if spec.family == "jrm":
        return float(max(1 - p[spec.cells[0]] - p[spec.cells[1]], 0.0) ** n)
    if metric == "f1":
        return float(p["tn"] ** n)
    if metric == "mcc":           # any empty margin; two margins are empty together only when one cell has all rows
        margins = [p["fp"] + p["tn"], p["tp"] + p["fn"], p["fn"] + p["tn"], p["tp"] + p["fp"]]
        return float(min(max(sum(m ** n for m in margins) - sum(v ** n for v in p.values()), 0.0), 1.0))
    return None


