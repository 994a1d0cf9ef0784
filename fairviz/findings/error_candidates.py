"""Candidate statements about errors in a numeric target's units, read from the typed result of error and prediction
parity (``RegressionParity``), under the benefit findings' rules: each group against the section's reference group,
every raw p-value into one Benjamini–Hochberg family (``analysis.summarise``), a materiality threshold per kind and
the size floor.

The bias gap and the MAE gap (permutation tests; bootstrap intervals) and the distance between the groups'
predictions (W1, permutation test), each divided by the reference group's MAE, so that one threshold (a tenth of the
typical error by default) holds for a target in any units; and F_dist when the residual section wrote it
(``residual_distance``, as with a decision at τ).
"""
from __future__ import annotations

import math

from scipy.stats import ttest_ind_from_stats

from fairviz.core.stats import permutations_can_reject
from fairviz.findings.candidates import _pair_candidates, pair_numbers, section_reference, section_view
from fairviz.findings.inputs import AuditResults, interval, number
from fairviz.findings.results import Candidate, FindingsParams, SmallGroup
from fairviz.parity.error_parity import RegressionGroup, RegressionParity
from fairviz.residuals.results import ResidualAudit

ERROR_TESTS = {
    "bias_gap": ("bias_gap", "bias",
                 "permutation test of the bias gap; bootstrap interval; both ÷ the reference's MAE"),
    "mae_gap": ("mae_gap", "mae", "permutation test of the MAE gap; bootstrap interval; both ÷ the reference's MAE"),
    "prediction_w1": ("w1", None, "permutation test of W1 between the groups' predictions; ÷ the reference's MAE"),
}


WELCH_TESTS = {
    "bias_gap": "Welch's t-test of the bias gap (too few resamples for its permutation test); ÷ the reference's MAE",
    "mae_gap": "Welch's t-test of the MAE gap (too few resamples for its permutation test); ÷ the reference's MAE",
}


def welch_p(group: RegressionGroup, reference: RegressionGroup, mean: str) -> float | None:
    """Welch's t-test (two-sided) of the groups' mean residual (``mean`` "bias") or mean absolute residual ("mae"):
    n, that mean and the mean square (the group's MSE) give the sample variance (MSE − mean²)·n/(n − 1), of the
    residual or of its absolute value alike. None when a group has fewer than 2 rows or neither varies."""
    moments = []
    for record in (group, reference):
        n = int(record.n)
        if n < 2:
            return None
        variance = max(record.mse - getattr(record, mean) ** 2, 0.0) * n / (n - 1)
        moments += [getattr(record, mean), math.sqrt(variance), n]
    p = float(ttest_ind_from_stats(*moments, equal_var=False).pvalue)
    return p if math.isfinite(p) else None


def error_candidates(audit: AuditResults, params: FindingsParams) -> tuple[str, list[Candidate], list[SmallGroup]]:
    result: RegressionParity = audit.result("parity", RegressionParity)
    groups = {g.name: g for g in result.groups}
    reference = section_reference(groups, result.reference, audit.attribute, params)
    scale = number(groups[reference].mae)
    permuted = permutations_can_reject(result.params.permutations, params.alpha)
    residuals = audit.result("residuals", ResidualAudit)
    residual_sizes = {g.name: int(g.n) for g in residuals.groups} if residuals is not None else {}
    pairs = pair_numbers(audit)
    out: list[Candidate] = []
    for pair in result.pairs:
        if not pair.against_reference or not scale:
            continue                               # a perfect reference (MAE 0) gives no scale to read gaps in
        group = pair.group
        for kind, (key, value, test) in ERROR_TESTS.items():
            if number(pair.values.get(key)) is None:
                continue
            p = number(pair.p_values.get(key))
            if not permuted:                       # too few permutations to reject: a mean gap has Welch's t-test
                p, test = (welch_p(groups[group], groups[reference], value), WELCH_TESTS[kind]) if value else \
                    (None, test)
            out.append(Candidate(
                kind, audit.attribute, group, reference, number(pair.values[key]) / scale,
                _scaled(interval(pair.intervals.get(key)), scale), p, int(pair.n_group), int(pair.n_other),
                number(getattr(groups[group], value)) if value else None,
                number(getattr(groups[reference], value)) if value else None,
                test=test, view=section_view(audit, kind, group, reference), scale=scale))
        if {group, reference} <= set(residual_sizes):     # the residual check ran: its F_dist of the pair
            out += [c for c in _pair_candidates(audit, pairs, residual_sizes[group], residual_sizes[reference],
                                                group, reference, params.alpha) if c.kind == "residual_distance"]
    small = [SmallGroup(audit.attribute, name, int(g.n), None, None, _error_verdict(g, groups[reference]))
             for name, g in groups.items() if g.n < params.min_group_size]
    return reference, out, small


def _error_verdict(group: RegressionGroup, reference: RegressionGroup) -> str:
    ci = interval(group.intervals.get("mae")) or [None, None]
    bounds = (f" (95% CI {ci[0]:.3g} to {ci[1]:.3g})" if None not in ci else "")
    return (f"MAE {group.mae:.3g}{bounds} against {reference.mae:.3g} for {reference.name}; at this size "
            "the interval is too wide to rank it")


def _scaled(ci, scale: float) -> tuple[float, float] | None:
    if not ci or any(v is None or not math.isfinite(v) for v in ci):
        return None
    return (ci[0] / scale, ci[1] / scale)
