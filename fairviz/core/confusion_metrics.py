"""Confusion-matrix metrics of [3] (Tables 2.2–2.4, with the thesis's typos corrected), vectorised.

Every function takes ``Cells``: four arrays named ``tp, fn, fp, tn`` (any common shape), so a million Monte
Carlo draws, every confusion matrix of size n, or the groups of a data set are scored in one call. Counts may
be real-valued (smoothed counts from CPS). A metric whose denominator is zero is NaN ("undefined", a *hole*
in the thesis's words), never 0.

The three families decide how MATCH computes a metric's distribution exactly:
- binomial ``(c_i + c_j)/n``: ACC, PREV, PPR;
- joint-ratio (JRM) ``c_i/(c_i + c_j)``: TPR, FNR, TNR, FPR, PPV, FDR, NPV, FOR;
- the marginal benefit ``𝓑 = (FP − FN)/n``;
- other (MCC, F1, PT): no closed form.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

import numpy as np

from fairviz.core.counts import ConfusionCounts

CELL_ORDER = ("tp", "fn", "fp", "tn")     # the order of a probability vector handed to a multinomial draw


class Cells(NamedTuple):
    """The four confusion cells as arrays of one shape (named, so a layout can never be silently flipped)."""

    tp: np.ndarray
    fn: np.ndarray
    fp: np.ndarray
    tn: np.ndarray

    @classmethod
    def of(cls, counts: Sequence[ConfusionCounts] | ConfusionCounts) -> "Cells":
        if isinstance(counts, ConfusionCounts):
            counts = [counts]
        return cls(*(np.array([getattr(c, name) for c in counts], dtype=float) for name in CELL_ORDER))

    @classmethod
    def from_draws(cls, draws: np.ndarray) -> "Cells":
        """Multinomial draws whose last axis follows ``CELL_ORDER``."""
        draws = np.asarray(draws, dtype=float)
        return cls(draws[..., 0], draws[..., 1], draws[..., 2], draws[..., 3])

    def counts(self, index: int = 0) -> ConfusionCounts:
        values = [np.ravel(getattr(self, name))[index] for name in CELL_ORDER]
        values = [int(v) if float(v).is_integer() else float(v) for v in values]
        return ConfusionCounts(*values)

    @property
    def n(self) -> np.ndarray:
        return self.tp + self.fn + self.fp + self.tn

    @property
    def positives(self) -> np.ndarray:            # P: actual positives
        return self.tp + self.fn

    @property
    def negatives(self) -> np.ndarray:            # N: actual negatives
        return self.fp + self.tn

    @property
    def predicted_positive(self) -> np.ndarray:   # P̂
        return self.tp + self.fp

    @property
    def predicted_negative(self) -> np.ndarray:   # N̂
        return self.fn + self.tn


def probabilities(counts: ConfusionCounts) -> np.ndarray:
    """Cell probabilities in ``CELL_ORDER`` (the reference's performance distribution)."""
    values = np.array([getattr(counts, name) for name in CELL_ORDER], dtype=float)
    total = values.sum()
    if total <= 0:
        raise ValueError("a confusion matrix with no rows has no cell probabilities")
    return values / total


def flip(counts: ConfusionCounts) -> ConfusionCounts:
    """Swap the roles of the two classes (TP↔TN, FN↔FP): the *negative* prediction becomes the benefit."""
    return ConfusionCounts(tp=counts.tn, fn=counts.fp, fp=counts.fn, tn=counts.tp)


def divide(numerator, denominator) -> np.ndarray:
    """numerator/denominator with NaN (undefined) where the denominator is 0."""
    numerator, denominator = np.broadcast_arrays(np.asarray(numerator, float), np.asarray(denominator, float))
    out = np.full(numerator.shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


@dataclass(frozen=True)
class CMMetric:
    key: str
    label: str
    formula: str
    family: str                       # "binomial", "jrm", "benefit" or "other"
    cells: tuple[str, ...] = ()       # binomial: the two summed cells; JRM: (numerator, other) so M = c_i/(c_i + c_j)
    undefined_when: str = ""

    def __call__(self, cells: Cells) -> np.ndarray:
        return _FUNCTIONS[self.key](cells)


def _binomial(a: str, b: str) -> Callable[[Cells], np.ndarray]:
    return lambda c: divide(getattr(c, a) + getattr(c, b), c.n)


def _jrm(a: str, b: str) -> Callable[[Cells], np.ndarray]:
    return lambda c: divide(getattr(c, a), getattr(c, a) + getattr(c, b))


def mcc(c: Cells) -> np.ndarray:
    denominator = c.predicted_positive * c.positives * c.negatives * c.predicted_negative
    return divide(c.tp * c.tn - c.fp * c.fn, np.sqrt(denominator))


def f1(c: Cells) -> np.ndarray:
    return divide(2 * c.tp, 2 * c.tp + c.fp + c.fn)


def prevalence_threshold(c: Cells) -> np.ndarray:
    """PT = (√(TPR·FPR) − FPR)/(TPR − FPR); undefined with TPR or FPR, and where TPR = FPR (TP·TN = FP·FN)."""
    tpr, fpr = divide(c.tp, c.positives), divide(c.fp, c.negatives)
    out = divide(np.sqrt(tpr * fpr) - fpr, tpr - fpr)
    out[c.tp * c.tn == c.fp * c.fn] = np.nan          # exact test: the float difference TPR − FPR can miss 0
    return out


def marginal_benefit(c: Cells) -> np.ndarray:
    """𝓑 = b − E[b] = (FP − FN)/n (Definition 3.6): > 0 an unjust surplus of benefit, < 0 an unjust lack."""
    return divide(c.fp - c.fn, c.n)


METRICS: dict[str, CMMetric] = {m.key: m for m in [
    CMMetric("acc", "Accuracy", "(TP + TN)/n", "binomial", ("tp", "tn")),
    CMMetric("prev", "Prevalence", "(TP + FN)/n", "binomial", ("tp", "fn")),
    CMMetric("ppr", "Positive prediction rate", "(TP + FP)/n", "binomial", ("tp", "fp")),
    CMMetric("tpr", "TPR (recall)", "TP/(TP + FN)", "jrm", ("tp", "fn"), "no actual positives (TP + FN = 0)"),
    CMMetric("fnr", "FNR", "FN/(FN + TP)", "jrm", ("fn", "tp"), "no actual positives (TP + FN = 0)"),
    CMMetric("tnr", "TNR (specificity)", "TN/(TN + FP)", "jrm", ("tn", "fp"), "no actual negatives (FP + TN = 0)"),
    CMMetric("fpr", "FPR", "FP/(FP + TN)", "jrm", ("fp", "tn"), "no actual negatives (FP + TN = 0)"),
    CMMetric("ppv", "PPV (precision)", "TP/(TP + FP)", "jrm", ("tp", "fp"), "no positive predictions (TP + FP = 0)"),
    CMMetric("fdr", "FDR", "FP/(FP + TP)", "jrm", ("fp", "tp"), "no positive predictions (TP + FP = 0)"),
    CMMetric("npv", "NPV", "TN/(TN + FN)", "jrm", ("tn", "fn"), "no negative predictions (FN + TN = 0)"),
    CMMetric("for", "FOR", "FN/(FN + TN)", "jrm", ("fn", "tn"), "no negative predictions (FN + TN = 0)"),
    CMMetric("benefit", "Marginal benefit 𝓑", "(FP − FN)/n", "benefit"),
    CMMetric("mcc", "MCC", "(TP·TN − FP·FN)/√((TP+FP)(TP+FN)(TN+FP)(TN+FN))", "other", (),
             "a row or column of the confusion matrix is empty"),
    CMMetric("f1", "F1", "2TP/(2TP + FP + FN)", "other", (), "only true negatives (TN = n)"),
    CMMetric("pt", "Prevalence threshold", "(√(TPR·FPR) − FPR)/(TPR − FPR)", "other", (),
             "TPR or FPR undefined, or TPR = FPR"),
]}

_FUNCTIONS: dict[str, Callable[[Cells], np.ndarray]] = {
    **{m.key: _binomial(*m.cells) for m in METRICS.values() if m.family == "binomial"},
    **{m.key: _jrm(*m.cells) for m in METRICS.values() if m.family == "jrm"},
    "benefit": marginal_benefit, "mcc": mcc, "f1": f1, "pt": prevalence_threshold,
}


def value(key: str, counts: ConfusionCounts) -> float | None:
    """One metric of one confusion matrix; None when undefined."""
    out = float(METRICS[key](Cells.of(counts))[0])
    return out if np.isfinite(out) else None
