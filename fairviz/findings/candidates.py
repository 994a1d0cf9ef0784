"""Candidate statements from a decision at τ, each group compared with the reference group.

The candidates read the typed results the audit's checks computed (``AuditResults``): the parity result's OFI and
counts, the residual result's F_dist and its label-oriented counts at τ, the calibration result's ECE gaps and MATCH's
verdict on the small groups, so the findings come from the very numbers the pages and the report show. Rate gaps get
their interval and test here, from the groups' confusion counts at τ.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scipy.stats import norm
from statsmodels.stats.proportion import confint_proportions_2indep, test_proportions_2indep

from fairviz.calibration.results import CalibrationAudit
from fairviz.core.confusion_metrics import flip
from fairviz.core.counts import ConfusionCounts
from fairviz.core.stats import permutations_can_reject
from fairviz.findings.inputs import AuditResults, interval, number
from fairviz.findings.results import Candidate, FindingsParams, SmallGroup
from fairviz.findings.views import finding_view
from fairviz.parity.ofi import OFI_TEST
from fairviz.parity.results import ParityAudit
from fairviz.residuals.results import ResidualAudit
from fairviz.sample_size.results import SignificanceAudit

Z95 = norm.ppf(0.975)


def reference_group(sizes: dict[str, int], attribute: str, params: FindingsParams) -> str:
    """The policy's reference group when it is one of ``sizes``' groups, else the largest (the first of equals)."""
    if params.reference is not None:
        if params.reference not in sizes:
            raise ValueError(f"the reference group '{params.reference}' is not among the groups of "
                             f"'{attribute}' ({', '.join(map(str, sizes))})")
        return params.reference
    names = list(sizes)
    return max(names, key=lambda g: (sizes[g], -names.index(g)))


@dataclass(frozen=True)
class GroupCounts:
    """A group's size and its confusion counts at τ on the label (Y = 1, score ≥ τ)."""
    n: int
    counts: ConfusionCounts


def label_counts(audit: AuditResults) -> dict[str, GroupCounts]:
    """Every group's size and label-oriented counts at τ, in the audit's group order: the residual result's (it
    counts them at τ); the quick audit runs without it, so they come from the parity result's counts, which are in
    the benefit's orientation (a negative benefit swaps TP↔TN and FN↔FP)."""
    out: dict[str, GroupCounts] = {}
    residuals = audit.result("residuals", ResidualAudit)
    if residuals is not None and residuals.at_threshold is not None:
        out = {g.name: GroupCounts(int(g.n), residuals.at_threshold.counts[g.name]) for g in residuals.groups}
    parity = audit.result("parity", ParityAudit)
    for g in parity.groups if parity is not None else ():
        if g.name not in out:
            counts = flip(g.counts) if parity.params.benefit == "negative" else g.counts
            out[g.name] = GroupCounts(counts.n, counts)
    return out


@dataclass
class PairNumbers:
    """What the Summary reads of one group pair (i, j), "i minus j": the parity result's OFI and its test, the
    residual result's F_dist and its test."""
    ofi: float | None = None
    ofi_ci: list | None = None
    ofi_p: float | None = None
    f_dist: float | None = None
    f_dist_ci: list | None = None
    p_dist: float | None = None


def pair_numbers(audit: AuditResults) -> dict[tuple[str, str], PairNumbers]:
    """Every pair the residual and parity results compare, the residual result's first; one record per (i, j)."""
    out: dict[tuple[str, str], PairNumbers] = {}
    residuals = audit.result("residuals", ResidualAudit)
    for p in residuals.pairs if residuals is not None else ():
        out[(p.group_i, p.group_j)] = PairNumbers(f_dist=number(p.f_dist), f_dist_ci=interval(p.ci.get("f_dist")),
                                                  p_dist=number(p.p_dist))
    parity = audit.result("parity", ParityAudit)
    for row in parity.pair_table() if parity is not None else ():
        record = out.setdefault((row["group_i"], row["group_j"]), PairNumbers())
        record.ofi, record.ofi_ci = number(row["ofi"]), interval(row["ofi_ci"])
        record.ofi_p = number(row["ofi_p_value"])
    return out


# which check's result each kind reads: a kind whose check the quick audit skipped is named "not tested here"
KIND_CHECKS = {"residual_distance": "residuals", "calibration": "calibration", "ofi": "parity", "fpr": "parity",
               "fnr": "parity", "selection_rate": "parity"}


def candidates(audit: AuditResults, params: FindingsParams) -> tuple[str, list[Candidate], list[SmallGroup]]:
    groups = label_counts(audit)
    reference = reference_group({name: g.n for name, g in groups.items()}, audit.attribute, params)
    pairs = pair_numbers(audit)
    out: list[Candidate] = []
    for group in groups:
        if group == reference:
            continue
        out += _rate_gaps(audit, groups, group, reference)
        out += _pair_candidates(audit, pairs, groups[group].n, groups[reference].n, group, reference, params.alpha)
        out += _calibration_gap(audit, groups, group, reference)
    small = [_small_group(audit, name, g.n) for name, g in groups.items() if g.n < params.min_group_size]
    return reference, out, small


# ------------------------------------------------------------------------------------------------ rate gaps

_RATES = {  # kind → (numerator cells, denominator cells) of the label-oriented confusion counts at τ
    "fpr": (("fp",), ("fp", "tn")),
    "fnr": (("fn",), ("fn", "tp")),
    "selection_rate": (("tp", "fp"), ("tp", "fp", "tn", "fn")),
}


def _rate_gaps(audit: AuditResults, groups: dict[str, GroupCounts], group: str, reference: str) -> list[Candidate]:
    g, r = groups[group], groups[reference]
    out = []
    for kind, (num, den) in _RATES.items():
        k1, n1 = sum(getattr(g.counts, c) for c in num), sum(getattr(g.counts, c) for c in den)
        k2, n2 = sum(getattr(r.counts, c) for c in num), sum(getattr(r.counts, c) for c in den)
        if n1 == 0 or n2 == 0:
            continue                                   # undefined rate: nothing to compare
        p1, p2 = k1 / n1, k2 / n2
        out.append(Candidate(kind, audit.attribute, group, reference, p1 - p2, _newcombe(k1, n1, k2, n2),
                             _score_test(k1, n1, k2, n2), g.n, r.n, p1, p2,
                             test="two-proportion score test; Newcombe interval",
                             view=_view(audit, kind, group, reference)))
    return out


def _newcombe(k1, n1, k2, n2) -> tuple[float, float] | None:
    with np.errstate(divide="ignore", invalid="ignore"):   # statsmodels also forms an odds ratio we do not read
        low, high = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff")
    return (float(low), float(high)) if math.isfinite(low) and math.isfinite(high) else None


def _score_test(k1, n1, k2, n2) -> float | None:
    if k1 + k2 == 0 or k1 + k2 == n1 + n2:
        return 1.0                                     # both rates 0 (or 1): no evidence of a gap
    with np.errstate(divide="ignore", invalid="ignore"):
        p = float(test_proportions_2indep(k1, n1, k2, n2, method="score", compare="diff").pvalue)
    return p if math.isfinite(p) else None


# ------------------------------------------------------------------------------------------------ pair records

def _pair(pairs: dict[tuple[str, str], PairNumbers], group: str, reference: str) -> tuple[PairNumbers | None, float]:
    """The pair record of (group, reference) and the sign that turns its "i minus j" into "group minus reference"."""
    for (i, j), pair in pairs.items():
        if (i, j) == (group, reference):
            return pair, 1.0
        if (i, j) == (reference, group):
            return pair, -1.0
    return None, 1.0


def _oriented(ci, sign: float) -> tuple[float, float] | None:
    if not ci or any(v is None or not math.isfinite(v) for v in ci):
        return None
    low, high = sign * ci[0], sign * ci[1]
    return (min(low, high), max(low, high))


def _pair_candidates(audit: AuditResults, pairs: dict, n_g: int, n_r: int, group: str, reference: str,
                     alpha: float) -> list[Candidate]:
    """The OFI and F_dist of (group, reference), each when its result compared the pair."""
    pair, sign = _pair(pairs, group, reference)
    if pair is None:
        return []                                      # the pair cap left it out
    out = []
    if pair.ofi is not None:
        out.append(Candidate("ofi", audit.attribute, group, reference, sign * pair.ofi,
                             _oriented(pair.ofi_ci, sign), pair.ofi_p, n_g, n_r,
                             test=f"OFI [3] ch. 3: {OFI_TEST}",
                             view=_view(audit, "ofi", group, reference)))
    if pair.f_dist is not None:
        ci = _oriented(pair.f_dist_ci, 1.0)            # None when too few resamples gave none
        permutations = audit.result("residuals", ResidualAudit).params.resamples
        p = pair.p_dist if permutations_can_reject(permutations, alpha) else None
        out.append(Candidate("residual_distance", audit.attribute, group, reference, pair.f_dist, ci, p, n_g, n_r,
                             test="permutation test of F_dist (Wasserstein-1) [1] §5",
                             view=_view(audit, "residual_distance", group, reference)))
    return out


def _calibration_gap(audit: AuditResults, groups: dict[str, GroupCounts], group: str,
                     reference: str) -> list[Candidate]:
    """ECE gap with its bootstrap interval; its p-value is the normal approximation to that interval (the bootstrap
    gives no test of its own), named so in ``test``."""
    calibration = audit.result("calibration", CalibrationAudit)
    if calibration is None:
        return []
    ece = {row["group"]: number(row["ece"]) for row in calibration.group_rows()}
    record = next((p for p in calibration.pair_rows() if {p["group_i"], p["group_j"]} == {group, reference}), None)
    if record is None or number(record["ece_diff"]) is None or group not in ece or reference not in ece:
        return []
    sign = 1.0 if record["group_i"] == group else -1.0
    ci = _oriented(interval(record["ece_diff_ci"]), sign)
    effect = sign * number(record["ece_diff"])
    p = None
    if ci is not None and ci[1] > ci[0]:
        se = (ci[1] - ci[0]) / (2 * Z95)
        p = float(2 * norm.sf(abs(effect) / se))
    return [Candidate("calibration", audit.attribute, group, reference, effect, ci, p,
                      groups[group].n, groups[reference].n, ece[group], ece[reference],
                      test="bootstrap interval of the ECE gap; p from its normal approximation",
                      view=_view(audit, "calibration", group, reference))]


def _view(audit: AuditResults, kind: str, group: str, reference: str) -> tuple[tuple[str, str], ...]:
    return finding_view(kind, audit.attribute, group, reference, audit.threshold, audit.benefit)


def section_reference(names, reference: str, attribute: str, params: FindingsParams) -> str:
    """The reference group of a method that chose its own (error parity, parity per class): it compared against
    ``params.reference`` when one was given."""
    names = list(names)
    if params.reference is not None and params.reference not in names:
        raise ValueError(f"the reference group '{params.reference}' is not among the groups of "
                         f"'{attribute}' ({', '.join(map(str, names))})")
    return reference


def section_view(audit: AuditResults, kind: str, group: str, reference: str, class_name: str | None = None) -> tuple:
    """The page view of such a method's finding (no benefit to orient: "positive"), with its class when it has
    one."""
    view = finding_view(kind, audit.attribute, group, reference, audit.threshold, "positive")
    return view + ((("class", class_name),) if class_name is not None else ())


def _small_group(audit: AuditResults, group: str, n: int) -> SmallGroup:
    """A group under the size floor, with its benefit rate and MATCH's adjusted p of its selection rate."""
    parity = audit.result("parity", ParityAudit)
    benefit_rate = number(parity.group(group).benefit_rate) if parity is not None and group in parity.names else None
    significance = audit.result("sample_size", SignificanceAudit)
    match = significance.match.get(group, "ppr") if significance is not None else None
    return SmallGroup(audit.attribute, group, n, benefit_rate, number(match.p_adjusted) if match else None)
