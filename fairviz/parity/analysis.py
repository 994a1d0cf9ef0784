"""Group parity (seed 002 ch. 3): the Objective Fairness Index, Disparate Impact and the Table 3.2 metrics.

A prediction is a *benefit* (hired, granted, released): by default the positive prediction (score ≥ τ); with
``benefit="negative"`` the classes are swapped (TP↔TN, FN↔FP), as the thesis does for COMPAS, where "low risk"
is the beneficial outcome. From a group's counts:

- benefit b = P̂/n (what the group got), expected benefit E[b] = P/n (what its labels warrant);
- marginal benefit 𝓑 = b − E[b] = (FP − FN)/n (> 0 unjust surplus, < 0 unjust lack);
- OFI(i, j) = 𝓑_i − 𝓑_j ∈ [−2, 2], DI(i, j) = b_i/b_j (Definition 3.1), DPPL(i, j) = b_i − b_j,
  and the identity OFI = DPPL − (Prev_i − Prev_j): OFI is the disparity left once base rates are accounted for.

Every pair metric is ordered: (i, j) means "i minus j" (or i over j). ``orientation`` says which way favours
i: +1 when a larger score favours i, −1 when it disfavours i (TE, DCA, DCR, PPV gap), 0 when undirected.
Undefined values are NaN with a reason, never 0.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Callable, Sequence

import numpy as np
from scipy import stats as sps

from fairviz.core.confusion_metrics import Cells, divide
from fairviz.core.counts import ConfusionCounts
from fairviz.data.groups import group_counts
from fairviz.data import Predictions
from fairviz.core.wording import fmt, fmt_p, significance_words  # the shared wording of every page

FOUR_FIFTHS = (0.8, 1.25)
OFI_TOLERANCE = 0.02        # A1: not from the seed, which gives no tolerance for "OFI ≈ 0"
SMALL_GROUP = 30
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class ParityParams:
    threshold: float = 0.5
    benefit: str = "positive"            # which prediction is the benefit: "positive" (score ≥ τ) or "negative"
    di_variant: str = "def31"            # "def31": P̂/n (Definition 3.1); "cikm": P̂/P (the published Fig. 3.2)
    di_zero_convention: bool = False     # DI = 1 when neither group gets any benefit (Table 3.1, Scenario B)
    ofi_tolerance: float = OFI_TOLERANCE
    alpha: float = 0.05


# ----------------------------------------------------------------------------------------------- per-group quantities

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


# ----------------------------------------------------------------------------------------------- pair metrics

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
    PairMetric("ppv_diff", "PPV gap (predictive parity)", "TP_i/P̂_i − TP_j/P̂_j", 0.0, -1, "difference", "ppv",
               (-1.0, 1.0), "True predictive parity: > 0 when a smaller share of i's benefits is unearned, "
                            "i.e. a stricter bar for i. Not in Table 3.2 (added because 'PP' there is the TPR gap)."),
]}
TABLE_32 = ("accd", "mccd", "di", "pp", "te", "eo_fpr_gap", "eo_max_gap", "aaod", "dca", "dcr", "dppl", "ofi")


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
             di_variant: str = "def31", di_zero_convention: bool = False) -> PairwiseMatrix:
    """The group × group matrix of one metric from each group's counts (already in the benefit orientation)."""
    cells = Cells.of(list(counts))
    return _pairwise(PAIR_METRICS[metric], tuple(names), _per_group(cells, names), di_variant, di_zero_convention)


def _per_group(cells: Cells, names: Sequence[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each quantity per group and, where it is undefined, why ("'Asian': FP = 0, …")."""
    out = {}
    for key, quantity in _QUANTITIES.items():
        values = quantity.compute(cells)
        reasons = np.array([f"'{name}': {quantity.undefined}" if not np.isfinite(v) else ""
                            for name, v in zip(names, values)], dtype=object)
        out[key] = (values, reasons)
    return out


def _pairwise(metric: PairMetric, names: tuple[str, ...], per_group: dict,
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


# ----------------------------------------------------------------------------------------------- scalar helpers

def pair_value(metric: str, cm_i: ConfusionCounts, cm_j: ConfusionCounts, **options) -> float | None:
    """One metric for one ordered pair; None when undefined."""
    return pairwise(metric, ("i", "j"), [cm_i, cm_j], **options).value("i", "j")


def marginal_benefit(cm: ConfusionCounts) -> float | None:
    return None if cm.n == 0 else (cm.fp - cm.fn) / cm.n


def ofi(cm_i, cm_j) -> float | None:
    return pair_value("ofi", cm_i, cm_j)


def di(cm_i, cm_j, zero_convention: bool = False, variant: str = "def31") -> float | None:
    return pair_value("di", cm_i, cm_j, di_variant=variant, di_zero_convention=zero_convention)


def dppl(cm_i, cm_j) -> float | None:
    return pair_value("dppl", cm_i, cm_j)


def te(cm_i, cm_j) -> float | None:
    return pair_value("te", cm_i, cm_j)


def dca(cm_i, cm_j) -> float | None:
    return pair_value("dca", cm_i, cm_j)


def dcr(cm_i, cm_j) -> float | None:
    return pair_value("dcr", cm_i, cm_j)


def four_fifths(di_value: float | None) -> str:
    """The four-fifths rule (29 CFR §1607.4) on DI(i, j): 'for i', 'for j', 'none' or 'undefined'."""
    if di_value is None or not np.isfinite(di_value):
        return "undefined"
    if di_value < FOUR_FIFTHS[0]:
        return "for j"
    if di_value > FOUR_FIFTHS[1]:
        return "for i"
    return "none"


@dataclass(frozen=True)
class OFITest:
    """A1 (not in the seed): a two-sample normal test of OFI with Var(𝓑_g) = (p₊ + p₋ − (p₊ − p₋)²)/n_g."""
    se: float
    z: float
    p_value: float
    ci: tuple[float, float]


def _benefit_variance(cm: ConfusionCounts) -> float:
    """Var(𝓑) estimated from the group's own rates: (p₊ + p₋ − (p₊ − p₋)²)/n."""
    if cm.n == 0:
        return float("nan")
    up, down = cm.fp / cm.n, cm.fn / cm.n
    return (up + down - (up - down) ** 2) / cm.n


def ofi_test(cm_i: ConfusionCounts, cm_j: ConfusionCounts, level: float = 0.95) -> OFITest:
    value = ofi(cm_i, cm_j)
    se = float(np.sqrt(_benefit_variance(cm_i) + _benefit_variance(cm_j)))
    if value is None or not np.isfinite(se):
        return OFITest(np.nan, np.nan, np.nan, (np.nan, np.nan))
    if se == 0:
        return OFITest(0.0, 0.0 if value == 0 else np.inf, 1.0 if value == 0 else 0.0, (value, value))
    z = value / se
    half = sps.norm.ppf(0.5 + level / 2) * se
    return OFITest(se, float(z), float(2 * sps.norm.sf(abs(z))), (value - half, value + half))


# ----------------------------------------------------------------------------------------------- the reading

@dataclass(frozen=True)
class PairReading:
    """The diagnostic reading of OFI with DI for one ordered pair (seed §3.2.3 and §3.6)."""

    group_i: str
    group_j: str
    counts_i: ConfusionCounts
    counts_j: ConfusionCounts
    values: dict                 # metric key → float | None
    reasons: dict                # metric key → why undefined ("" when defined)
    benefit_i: float
    benefit_j: float
    prevalence_gap: float        # Prev_i − Prev_j: the part of DPPL from base rates
    test: OFITest
    di_rule: str                 # four_fifths(DI)
    kind: str                    # "algorithmic", "possible", "small", "systemic", "none"
    headline: str
    text: str

    @property
    def box(self) -> str:
        return {"algorithmic": "bad", "systemic": "warn", "possible": "warn", "small": "info"}.get(self.kind, "good")


def read_pair(group_i: str, group_j: str, cm_i: ConfusionCounts, cm_j: ConfusionCounts,
              params: ParityParams = ParityParams(), values: dict | None = None,
              reasons: dict | None = None) -> PairReading:
    if values is None:
        matrices = {k: pairwise(k, (group_i, group_j), [cm_i, cm_j], params.di_variant, params.di_zero_convention)
                    for k in PAIR_METRICS}
        values = {k: m.value(group_i, group_j) for k, m in matrices.items()}
        reasons = {k: m.reason(group_i, group_j) for k, m in matrices.items()}
    reasons = reasons or {}
    test = ofi_test(cm_i, cm_j)
    o, d, dp = values["ofi"], values["di"], values["dppl"]
    b_i, b_j = marginal_benefit(cm_i), marginal_benefit(cm_j)
    prev_gap = cm_i.positives / cm_i.n - cm_j.positives / cm_j.n
    rule = four_fifths(d)
    side, other = (group_i, group_j) if o > 0 else (group_j, group_i)
    signif = significance_words(test.p_value, params.alpha)
    kind = classify(o, test.p_value, rule, params.ofi_tolerance, params.alpha)
    headline = {
        "algorithmic": f"Algorithmic bias in favour of {side} (OFI = {o:+.3f})",
        "possible": f"OFI leans towards {side} ({o:+.3f}), but the groups are too small to tell",
        "small": f"A real but small OFI ({o:+.3f}, within ±{params.ofi_tolerance:g})",
        "systemic": "No algorithmic bias, but a disparity outside the model (OFI ≈ 0, DI ≠ 1)",
        "none": "No bias: OFI ≈ 0 and DI within the four-fifths band"}[kind]
    parts = [
        f"{_benefit_words(group_i, b_i)}; {_benefit_words(group_j, b_j)}. OFI = 𝓑_i − 𝓑_j = {o:+.3f} "
        f"(95% CI [{test.ci[0]:+.3f}, {test.ci[1]:+.3f}]), {signif}.",
        f"The gap in benefit rates, DPPL = {fmt(dp)}, splits into {prev_gap:+.3f} from different base rates "
        f"(outside the model) and {o:+.3f} from the model (OFI = DPPL − ΔPrev).",
    ]
    if d is None:
        parts.append(f"DI is undefined: {reasons.get('di', '')}.")
    else:
        parts.append(f"DI = {d:.3f}: " + {
            "for i": f"above 5/4, so the four-fifths rule flags bias for {group_i}.",
            "for j": f"below 4/5, so the four-fifths rule flags bias for {group_j}.",
            "none": "inside the four-fifths band [0.8, 1.25]."}[rule])
    if kind == "algorithmic":
        parts.append(f"OFI ≠ 0 means the classifier itself is at fault: relative to the labels it favours {side} "
                     f"over {other}.")
    elif kind == "systemic":
        parts.append("With OFI ≈ 0 the model treats both groups as their labels warrant; the unequal benefit rates "
                     "come from different base rates — a systemic or label disparity, which may call for reparative "
                     "measures rather than a model fix.")
    elif kind == "possible":
        parts.append(f"|OFI| exceeds the ±{params.ofi_tolerance:g} tolerance, but at these group sizes "
                     f"(n = {cm_i.n:,} and {cm_j.n:,}) sampling noise could produce it; see Sample-size significance.")
    elif kind == "small":
        parts.append(f"The difference is statistically clear (p {fmt_p(test.p_value)}) but smaller than the "
                     f"±{params.ofi_tolerance:g} tolerance set for a meaningful OFI.")
    return PairReading(group_i, group_j, cm_i, cm_j, dict(values), dict(reasons or {}), b_i, b_j, prev_gap, test,
                       rule, kind, headline, " ".join(parts))


def classify(ofi_value: float, p_value: float, di_rule: str, tolerance: float = OFI_TOLERANCE,
             alpha: float = 0.05) -> str:
    """The reading grid of OFI with DI (seed §3.2.3, with A1's tolerance and noise test):
    'algorithmic' (|OFI| beyond the tolerance and beyond noise), 'possible' (beyond the tolerance, within noise),
    'small' (beyond noise, within the tolerance), 'systemic' (OFI ≈ 0 while DI leaves the four-fifths band),
    'none'."""
    within = abs(ofi_value) <= tolerance
    noise = not (p_value < alpha)
    if not within:
        return "possible" if noise else "algorithmic"
    if not noise:
        return "small"
    return "systemic" if di_rule in ("for i", "for j") else "none"


def _benefit_words(group: str, b: float) -> str:
    if abs(b) < 5e-4:
        return f"{group} get about the benefit their labels warrant (𝓑 = {b:+.3f})"
    return (f"{group} get {abs(100 * b):.1f} percentage points {'more' if b > 0 else 'less'} benefit than their "
            f"labels warrant (𝓑 = {b:+.3f})")


# ----------------------------------------------------------------------------------------------- the analysis

@dataclass(frozen=True)
class GroupParity:
    name: str
    counts: ConfusionCounts          # in the benefit orientation
    benefit_rate: float              # b = P̂/n
    expected_benefit: float          # E[b] = P/n (prevalence)
    marginal_benefit: float          # 𝓑 = b − E[b]

    @property
    def n(self) -> int:
        return self.counts.n


@dataclass(frozen=True)
class ParityAudit:
    attribute: str
    params: ParityParams
    groups: list[GroupParity]
    matrices: dict                   # metric key → PairwiseMatrix
    warnings: tuple[str, ...] = ()
    pair_groups: int | None = None   # pair tables cover the pairs among this many largest groups (None: all)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.groups)

    def group(self, name: str) -> GroupParity:
        return self.groups[self.names.index(name)]

    def values(self, i: str, j: str) -> dict:
        return {k: m.value(i, j) for k, m in self.matrices.items()}

    def reading(self, i: str, j: str) -> PairReading:
        reasons = {k: m.reason(i, j) for k, m in self.matrices.items()}
        return read_pair(i, j, self.group(i).counts, self.group(j).counts, self.params, self.values(i, j), reasons)

    def pairs(self) -> list[tuple[str, str]]:
        """Unordered pairs as (i, j) with i before j in the group order (largest group first)."""
        return list(combinations(self.names[:self.pair_groups], 2))

    def pair_table(self, limit: int | None = None) -> list[dict]:
        """One record per unordered pair (i before j): every metric (None when undefined), the OFI test, the
        four-fifths verdict and the reading — vectorised, so thousands of pairs cost milliseconds. With ``limit``,
        only the pairs with the largest |OFI|."""
        size = len(self.groups) if self.pair_groups is None else min(len(self.groups), self.pair_groups)
        rows, cols = np.triu_indices(size, 1)
        counts = [g.counts for g in self.groups]
        var = np.array([_benefit_variance(c) for c in counts])
        ofi_values = self.matrices["ofi"].values[rows, cols]
        se = np.sqrt(var[rows] + var[cols])
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(se > 0, ofi_values / se, np.where(ofi_values == 0, 0.0, np.inf))
        p_values = 2 * sps.norm.sf(np.abs(z))
        order = np.argsort(-np.abs(ofi_values), kind="stable")[:limit] if limit else np.arange(rows.size)
        out = []
        for k in order:
            i, j = rows[k], cols[k]
            values = {key: (float(m.values[i, j]) if np.isfinite(m.values[i, j]) else None)
                      for key, m in self.matrices.items()}
            rule = four_fifths(values["di"])
            out.append({"group_i": self.names[i], "group_j": self.names[j], **values,
                        "parity_undefined": {key: str(m.reasons[i, j]) for key, m in self.matrices.items()
                                             if m.reasons[i, j]} or None,
                        "ofi_p_value": float(p_values[k]),
                        "ofi_ci": [float(ofi_values[k] - 1.959963984540054 * se[k]),
                                   float(ofi_values[k] + 1.959963984540054 * se[k])],
                        "four_fifths": rule,
                        "parity_reading": classify(ofi_values[k], p_values[k], rule, self.params.ofi_tolerance,
                                                   self.params.alpha)})
        return out

    def most_disparate(self) -> tuple[str, str]:
        """The ordered pair with the largest |OFI|, oriented so that OFI > 0 (row i is the favoured group)."""
        ofi_values = np.nan_to_num(self.matrices["ofi"].values, nan=-np.inf)     # OFI(j, i) = −OFI(i, j)
        i, j = np.unravel_index(int(np.argmax(ofi_values)), ofi_values.shape)
        return self.names[i], self.names[j]


def analyse(pred: Predictions, attribute: str | None = None, params: ParityParams = ParityParams(),
            progress: Progress | None = None) -> ParityAudit:
    report = progress or (lambda *_: None)
    view = pred.groups(attribute)
    report(0.1, "Counting confusion matrices")
    counts = group_counts(pred, view, params.threshold, params.benefit)
    report(0.5, "Pairwise metrics")
    audit = from_counts(view.attribute, view.names, counts, params)
    if len(view.names) > pred.limits.max_pair_groups:       # the matrices stay whole; the pair table is bounded
        audit = replace(audit, pair_groups=pred.limits.max_pair_groups,
                        warnings=audit.warnings + (pred.limits.pair_note(view.attribute, len(view.names)),))
    report(1.0, "Done")
    return audit


def from_counts(attribute: str, names: Sequence[str], counts: Sequence[ConfusionCounts],
                params: ParityParams = ParityParams()) -> ParityAudit:
    """The parity audit of groups given by their counts (already in the benefit orientation)."""
    names = tuple(names)
    cells = Cells.of(list(counts))
    per_group = _per_group(cells, names)
    matrices = {k: _pairwise(m, names, per_group, params.di_variant, params.di_zero_convention)
                for k, m in PAIR_METRICS.items()}
    groups = []
    for name, c in zip(names, counts):
        b = c.predicted_positive / c.n if c.n else float("nan")
        e = c.positives / c.n if c.n else float("nan")
        groups.append(GroupParity(name, c, b, e, b - e))
    warnings = []
    small = [f"'{g.name}' (n = {g.n:,})" for g in groups if g.n < SMALL_GROUP]
    if small:
        warnings.append(f"Small group{'s' if len(small) > 1 else ''}: {', '.join(small)}. Their metrics swing with a "
                        "single row; check them on the Sample-size significance page.")
    return ParityAudit(attribute, params, groups, matrices, tuple(warnings))


# ----------------------------------------------------------------------------------------------- scenarios

@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    group_i: ConfusionCounts
    group_j: ConfusionCounts
    thesis: str                      # what the thesis prints for it


SCENARIOS: dict[str, Scenario] = {s.key: s for s in [
    Scenario("A", "Table 3.1, Scenario A: the test is used (Ricci v. DeStefano)", ConfusionCounts(1, 0, 0, 5),
             ConfusionCounts(7, 0, 1, 10), "OFI −0.06, DI 0.38; Ricci v. DeStefano: likely no bias"),
    Scenario("B", "Table 3.1, Scenario B: the test is discarded", ConfusionCounts(0, 1, 0, 5),
             ConfusionCounts(0, 7, 0, 11), "OFI 0.22, DI NaN (1 by DI's convention); Ricci: bias for i"),
    Scenario("alpha", "Table 3.1, Scenario α: B plus one correct promotion per group", ConfusionCounts(1, 1, 0, 5),
             ConfusionCounts(1, 7, 0, 11), "OFI 0.23, DI 2.71; Ricci: bias for i"),
    Scenario("C", "Table 3.3, Scenario C", ConfusionCounts(1, 2, 1, 1), ConfusionCounts(1, 1, 2, 2),
             "TE 1.5, DCA 0.83, OFI −0.37 (all: bias against i)"),
    Scenario("D", "Table 3.3, Scenario D: j gains three true negatives", ConfusionCounts(1, 2, 1, 1),
             ConfusionCounts(1, 1, 2, 4), "TE 1.5, DCA 0.83 (unchanged), OFI −0.33 (moves)"),
]}


@dataclass(frozen=True)
class ScenarioResult:
    ofi: float | None
    di: float | None
    di_convention: float | None      # with DI = 1 when neither group benefits
    te: float | None
    dca: float | None
    dppl: float | None
    benefit_i: float | None
    benefit_j: float | None
    reasons: dict = field(default_factory=dict)


def scenario(cm_i: ConfusionCounts, cm_j: ConfusionCounts) -> ScenarioResult:
    """OFI, DI, TE, DCA and DPPL of two edited confusion matrices (the scenario builder)."""
    if cm_i.n <= 0 or cm_j.n <= 0:
        raise ValueError("each group needs at least one row")
    matrices = {k: pairwise(k, ("i", "j"), [cm_i, cm_j]) for k in ("ofi", "di", "te", "dca", "dppl")}
    return ScenarioResult(
        ofi=matrices["ofi"].value("i", "j"), di=matrices["di"].value("i", "j"),
        di_convention=di(cm_i, cm_j, zero_convention=True), te=matrices["te"].value("i", "j"),
        dca=matrices["dca"].value("i", "j"), dppl=matrices["dppl"].value("i", "j"),
        benefit_i=marginal_benefit(cm_i), benefit_j=marginal_benefit(cm_j),
        reasons={k: m.reason("i", "j") for k, m in matrices.items()})
