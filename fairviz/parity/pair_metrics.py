"""The contrasts of Table 3.2 ([3] §3.3) as group × group matrices, computed from each group's confusion counts.

Table 3.2's metrics are taken on the benefit (counts in the benefit's orientation: with the negative prediction as
the benefit, TP↔TN and FN↔FP). The FPR, FNR and selection-rate gaps (``LABEL_GAPS``) are taken on the label, as the
data defines Y = 1 and a positive prediction (score ≥ τ): the same FPR every other page, the report and the JSON
name, whatever the benefit. With the positive prediction as the benefit both orientations agree.

Every pair metric is ordered: (i, j) means "i minus j" (or i over j). ``orientation`` says which way favours
i: +1 when a larger score favours i, −1 when it disfavours i (TE, DCA, DCR, PPV gap), 0 when undirected.
Undefined values are NaN with the reason, never 0.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from fairviz.core.confusion_metrics import Cells, divide
from fairviz.core.counts import ConfusionCounts

# Per-group quantities: each pair metric contrasts one of them between the two groups.

@dataclass(frozen=True)
class _Quantity:
    compute: Callable[[Cells], np.ndarray]
    undefined: str            # why it is undefined for a group (shown in the cell)


_QUANTITIES: dict[str, _Quantity] = {
    "benefit": _Quantity(lambda c: divide(c.fp - c.fn, c.n), "the group is empty"),
    "ppr": _Quantity(lambda c: divide(c.predicted_positive, c.n), "the group is empty"),
    "prev": _Quantity(lambda c: divide(c.positives, c.n), "the group is empty"),
    "acc": _Quantity(lambda c: divide(c.tp + c.tn, c.n), "the group is empty"),
    "mcc": _Quantity(lambda c: divide(c.tp * c.tn - c.fp * c.fn, np.sqrt(
        c.predicted_positive * c.positives * c.negatives * c.predicted_negative)),
        "MCC has an empty row or column (no actual or no predicted positives or negatives)"),
    "tpr": _Quantity(lambda c: divide(c.tp, c.positives), "no actual positives (P = 0), so TPR is undefined"),
    "fpr": _Quantity(lambda c: divide(c.fp, c.negatives), "no actual negatives (N = 0), so FPR is undefined"),
    "ppv": _Quantity(lambda c: divide(c.tp, c.predicted_positive), "no benefits given (P̂ = 0), so PPV is undefined"),
    "fn_per_fp": _Quantity(lambda c: divide(c.fn, c.fp), "FP = 0, so FN/FP is undefined"),
    "p_per_phat": _Quantity(lambda c: divide(c.positives, c.predicted_positive),
                            "no benefits given (P̂ = 0), so P/P̂ is undefined"),
    "n_per_nhat": _Quantity(lambda c: divide(c.negatives, c.predicted_negative),
                            "no benefits withheld (N̂ = 0), so N/N̂ is undefined"),
    "phat_per_p": _Quantity(lambda c: divide(c.predicted_positive, c.positives),
                            "no actual positives (P = 0), so P̂/P is undefined"),
}
# taken on the label's counts (the benefit's counts flipped back when the benefit is the negative prediction)
_LABEL_QUANTITIES: dict[str, _Quantity] = {
    "label_fpr": _Quantity(lambda c: divide(c.fp, c.negatives),
                           "no actual negatives on the label (N = 0), so FPR is undefined"),
    "label_fnr": _Quantity(lambda c: divide(c.fn, c.positives),
                           "no actual positives on the label (P = 0), so FNR is undefined"),
    "label_ppr": _Quantity(lambda c: divide(c.predicted_positive, c.n), "the group is empty"),
}


@dataclass(frozen=True)
class PairMetric:
    key: str
    label: str
    formula: str
    pivot: float              # the value meaning "no bias"
    orientation: int          # +1: above the pivot favours i; −1: above the pivot disfavours i; 0: undirected
    kind: str                 # "difference", "ratio" or "magnitude"
    quantity: str             # the per-group quantity it contrasts
    bounds: tuple[float, float] | None
    about: str

    def favours_i(self, value: float) -> bool | None:
        """True if ``value`` favours group i, False if it favours j, None at the pivot or when undirected."""
        if self.orientation == 0 or value is None or not np.isfinite(value) or np.isclose(value, self.pivot):
            return None
        return (value > self.pivot) == (self.orientation > 0)


PAIR_METRICS: dict[str, PairMetric] = {m.key: m for m in [
    PairMetric("ofi", "OFI", "𝓑_i − 𝓑_j = (FP_i − FN_i)/n_i − (FP_j − FN_j)/n_j", 0.0, 1, "difference", "benefit",
               (-2.0, 2.0), "Objective Fairness Index: the gap in unearned benefit (what each group got minus what its "
                            "labels warrant). > 0: bias for i; < 0: bias against i. Defined for every pair."),
    PairMetric("di", "DI", "(P̂_i/n_i) ÷ (P̂_j/n_j)", 1.0, 1, "ratio", "ppr", None,
               "Disparate Impact (Definition 3.1): ratio of benefit rates. The four-fifths rule flags DI < 0.8 "
               "(bias for j) and DI > 1.25 (bias for i). Ignores the labels."),
    PairMetric("dppl", "DPPL", "P̂_i/n_i − P̂_j/n_j", 0.0, 1, "difference", "ppr", (-1.0, 1.0),
               "Difference in positive proportions of predicted labels (statistical parity difference)."),
    PairMetric("accd", "ACCD", "ACC_i − ACC_j", 0.0, 1, "difference", "acc", (-1.0, 1.0),
               "Accuracy difference: > 0 when the model is more accurate for i."),
    PairMetric("mccd", "MCCD", "MCC_i − MCC_j", 0.0, 1, "difference", "mcc", (-2.0, 2.0),
               "Matthews-correlation difference: > 0 when the model is more informative for i."),
    PairMetric("pp", "PP (TPR gap; equal opportunity)", "TP_i/P_i − TP_j/P_j", 0.0, 1, "difference", "tpr",
               (-1.0, 1.0), "The thesis's 'Predictive Parity' is the TPR gap, i.e. the equal-opportunity "
                            "difference: > 0 when deserving members of i get the benefit more often."),
    PairMetric("eo_fpr_gap", "EO FPR gap", "FP_i/N_i − FP_j/N_j", 0.0, 1, "difference", "fpr", (-1.0, 1.0),
               "The other half of equalized odds: > 0 when undeserving members of i get the benefit more often."),
    PairMetric("eo_max_gap", "EO max gap", "max(|TPR_i − TPR_j|, |FPR_i − FPR_j|)", 0.0, 0, "magnitude", "tpr",
               (0.0, 1.0), "Equalized odds as a number (0 ⇔ equalized odds holds); undirected."),
    PairMetric("aaod", "AAOD", "½(|FPR_i − FPR_j| + |TPR_i − TPR_j|)", 0.0, 0, "magnitude", "tpr", (0.0, 1.0),
               "Average absolute odds difference; undirected."),
    PairMetric("te", "TE", "FN_i/FP_i − FN_j/FP_j", 0.0, -1, "difference", "fn_per_fp", None,
               "Treatment equality: > 0 when i's errors lean to withheld benefits, i.e. bias against i. "
               "Undefined when a group has no false positives."),
    PairMetric("dca", "DCA", "P_i/P̂_i − P_j/P̂_j", 0.0, -1, "difference", "p_per_phat", None,
               "Difference in conditional acceptance: > 0 when i has more deserving members per benefit given, "
               "i.e. bias against i."),
    PairMetric("dcr", "DCR", "N_j/N̂_j − N_i/N̂_i", 0.0, -1, "difference", "n_per_nhat", None,
               "Difference in conditional rejection (note: j first): > 0 is bias against i."),
    PairMetric("fpr_gap", "FPR gap (on the label)", "FPR_i − FPR_j, FPR = FP/N on the label (Y = 1, score ≥ τ)",
               0.0, 1, "difference", "label_fpr", (-1.0, 1.0),
               "False positive rate gap on the label, as every page, the report and the JSON name FPR: > 0 when "
               "i's actual negatives are predicted positive more often. The same as the EO FPR gap when the benefit "
               "is the positive prediction."),
    PairMetric("fnr_gap", "FNR gap (on the label)", "FNR_i − FNR_j, FNR = FN/P on the label (Y = 1, score < τ)",
               0.0, -1, "difference", "label_fnr", (-1.0, 1.0),
               "False negative rate gap on the label: > 0 when i's actual positives are predicted negative more "
               "often. The same as −PP when the benefit is the positive prediction."),
    PairMetric("ppr_gap", "Selection-rate gap (on the label)", "PPR_i − PPR_j, PPR = P̂/n with P̂ = score ≥ τ",
               0.0, 1, "difference", "label_ppr", (-1.0, 1.0),
               "Selection-rate (positive prediction rate) gap on the label: > 0 when more of i is predicted "
               "positive. The same as DPPL when the benefit is the positive prediction, −DPPL when it is the "
               "negative one."),
    PairMetric("ppv_diff", "PPV gap (predictive parity)", "TP_i/P̂_i − TP_j/P̂_j", 0.0, -1, "difference", "ppv",
               (-1.0, 1.0), "True predictive parity: > 0 when a smaller share of i's benefits is unearned, "
                            "i.e. a stricter bar for i. Not in Table 3.2 (added because 'PP' there is the TPR gap)."),
]}
TABLE_32 = ("accd", "mccd", "di", "pp", "te", "eo_fpr_gap", "eo_max_gap", "aaod", "dca", "dcr", "dppl", "ofi")
LABEL_GAPS = ("fpr_gap", "fnr_gap", "ppr_gap")    # on the label whatever the benefit
# Table 3.2's metrics whose per-group rates change meaning when the negative prediction is the benefit (accuracy,
# MCC, OFI, DI and DPPL are named by the benefit already, or do not change)
ON_THE_BENEFIT = ("pp", "eo_fpr_gap", "eo_max_gap", "aaod", "te", "dca", "dcr", "ppv_diff")


def oriented(metric: PairMetric, benefit: str) -> PairMetric:
    """A label gap's orientation (which way favours i) is the positive benefit's; a negative benefit reverses it:
    a false positive on the label is then a benefit wrongly withheld."""
    if benefit == "negative" and metric.key in LABEL_GAPS:
        return replace(metric, orientation=-metric.orientation)
    return metric


def metric_label(key: str, benefit: str = "positive") -> str:
    """A pair metric's label, saying "on the benefit" where its rates are not the label's (a negative benefit)."""
    label = PAIR_METRICS[key].label
    return f"{label} — on the benefit" if benefit == "negative" and key in ON_THE_BENEFIT else label


@dataclass(frozen=True)
class PairwiseMatrix:
    """M(i, j) for every ordered pair: row i, column j. NaN where undefined, with the reason."""

    metric: PairMetric
    groups: tuple[str, ...]
    values: np.ndarray           # (G, G) float
    reasons: np.ndarray          # (G, G) str, "" where defined

    def value(self, i: str, j: str) -> float | None:
        v = self.values[self.groups.index(i), self.groups.index(j)]
        return float(v) if np.isfinite(v) else None

    def reason(self, i: str, j: str) -> str:
        return str(self.reasons[self.groups.index(i), self.groups.index(j)])


def pairwise(metric: str, names: Sequence[str], counts: Sequence[ConfusionCounts],
             di_variant: str = "def31", di_zero_convention: bool = False, benefit: str = "positive") -> PairwiseMatrix:
    """The group × group matrix of one metric from each group's counts (already in the benefit orientation)."""
    cells = Cells.of(list(counts))
    return pairwise_matrix(oriented(PAIR_METRICS[metric], benefit), tuple(names),
                           per_group_quantities(cells, names, benefit),
                           di_variant, di_zero_convention)


def on_the_label(cells: Cells, benefit: str) -> Cells:
    """The benefit's cells back on the label: a negative benefit swapped TP↔TN and FN↔FP, so swap them again."""
    return Cells(tp=cells.tn, fn=cells.fp, fp=cells.fn, tn=cells.tp) if benefit == "negative" else cells


def per_group_quantities(cells: Cells, names: Sequence[str],
                         benefit: str = "positive") -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each quantity per group and, where it is undefined, why ("'Asian': FP = 0, …"); ``cells`` in the benefit's
    orientation, the label quantities from them flipped back."""
    out = {}
    label_cells = on_the_label(cells, benefit)
    for key, quantity in (*_QUANTITIES.items(), *_LABEL_QUANTITIES.items()):
        values = quantity.compute(label_cells if key in _LABEL_QUANTITIES else cells)
        reasons = np.array([f"'{name}': {quantity.undefined}" if not np.isfinite(v) else ""
                            for name, v in zip(names, values)], dtype=object)
        out[key] = (values, reasons)
    return out


def pairwise_matrix(metric: PairMetric, names: tuple[str, ...], per_group: dict,
              di_variant: str, di_zero_convention: bool) -> PairwiseMatrix:
    q, why = per_group[metric.quantity]
    if metric.key == "di":
        values, reasons = _di_matrix(per_group, di_variant, di_zero_convention)
        return PairwiseMatrix(metric, names, values, reasons)
    qi, qj = q[:, None], q[None, :]
    if metric.key in ("eo_max_gap", "aaod"):
        tpr, fpr = per_group["tpr"][0], per_group["fpr"][0]
        tpr_gap, fpr_gap = np.abs(tpr[:, None] - tpr[None, :]), np.abs(fpr[:, None] - fpr[None, :])
        values = np.maximum(tpr_gap, fpr_gap) if metric.key == "eo_max_gap" else 0.5 * (tpr_gap + fpr_gap)
        both = np.where(per_group["tpr"][1] != "", per_group["tpr"][1], per_group["fpr"][1])
        reasons = _first_reason(both[:, None], both[None, :], values)
        return PairwiseMatrix(metric, names, np.where(np.isfinite(values), values, np.nan), reasons)
    values = qj - qi if metric.key == "dcr" else qi - qj
    reasons = _first_reason(why[:, None], why[None, :], values)
    return PairwiseMatrix(metric, names, values, reasons)


def _first_reason(reason_i: np.ndarray, reason_j: np.ndarray, values: np.ndarray) -> np.ndarray:
    reason_i, reason_j = np.broadcast_arrays(reason_i, reason_j)
    joined = np.where(reason_i != "", reason_i, reason_j).astype(object)
    both = (reason_i != "") & (reason_j != "") & (reason_i != reason_j)
    joined[both] = reason_i[both] + "; " + reason_j[both]
    return np.where(np.isfinite(values), "", joined).astype(object)


def _di_matrix(per_group: dict, variant: str, zero_convention: bool) -> tuple[np.ndarray, np.ndarray]:
    if variant not in ("def31", "cikm"):
        raise ValueError(f"unknown DI variant {variant!r}: use 'def31' or 'cikm'")
    rate, rate_why = per_group["ppr"] if variant == "def31" else per_group["phat_per_p"]
    ri, rj = rate[:, None], rate[None, :]
    values = divide(np.broadcast_to(ri, (rate.size, rate.size)), np.broadcast_to(rj, (rate.size, rate.size)))
    neither = (ri == 0) & (rj == 0)
    if zero_convention:
        values = np.where(neither, 1.0, values)
    reasons = _first_reason(rate_why[:, None], rate_why[None, :], values)
    for i, j in zip(*np.nonzero(~np.isfinite(values))):
        if reasons[i, j]:
            continue
        if neither[i, j]:
            reasons[i, j] = "neither group gets any benefit (0/0); = 1 by DI's convention (Table 3.1, Scenario B)"
        else:
            reasons[i, j] = "the column group gets no benefit (P̂_j = 0), so the ratio divides by 0"
    return values, reasons


def pair_value(metric: str, cm_i: ConfusionCounts, cm_j: ConfusionCounts, **options) -> float | None:
    """One metric for one ordered pair; None when undefined."""
    return pairwise(metric, ("i", "j"), [cm_i, cm_j], **options).value("i", "j")


def dppl(cm_i, cm_j) -> float | None:
    return pair_value("dppl", cm_i, cm_j)


def te(cm_i, cm_j) -> float | None:
    return pair_value("te", cm_i, cm_j)


def dca(cm_i, cm_j) -> float | None:
    return pair_value("dca", cm_i, cm_j)


def dcr(cm_i, cm_j) -> float | None:
    return pair_value("dcr", cm_i, cm_j)
