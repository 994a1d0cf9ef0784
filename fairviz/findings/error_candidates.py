"""Candidate statements about errors in a numeric target's units, read from the record of error and prediction
parity (``parity_regression``), under the benefit findings' rules: each group against the section's reference group,
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
from fairviz.findings.candidates import _pair_candidates, section_reference, section_view
from fairviz.findings.results import Candidate, FindingsParams, SmallGroup

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


def welch_p(group: dict, reference: dict, mean: str) -> float | None:
    """Welch's t-test (two-sided) of the groups' mean residual (``mean`` "bias") or mean absolute residual ("mae"),
    from each group's record: n, that mean and the mean square (its MSE) give the sample variance
    (MSE − mean²)·n/(n − 1), of the residual or of its absolute value alike. None when a group has fewer than 2
    rows or neither varies."""
    moments = []
    for record in (group, reference):
        n = int(record["n"])
        if n < 2:
            return None
        variance = max(record["mse"] - record[mean] ** 2, 0.0) * n / (n - 1)
        moments += [record[mean], math.sqrt(variance), n]
    p = float(ttest_ind_from_stats(*moments, equal_var=False).pvalue)
    return p if math.isfinite(p) else None


def error_candidates(data: dict, params: FindingsParams) -> tuple[str, list[Candidate], list[SmallGroup]]:
    record = data["parity_regression"]
    reference = section_reference(record, params)
    groups = {g["group"]: g for g in record["groups"]}
    scale = groups[reference]["mae"]
    permuted = permutations_can_reject(record["params"].get("permutations"), params.alpha)
    out: list[Candidate] = []
    for pair in record["pairs"]:
        if not pair["against_reference"] or not scale or not math.isfinite(scale):
            continue                               # a perfect reference (MAE 0) gives no scale to read gaps in
        group = pair["group"]
        for kind, (key, value, test) in ERROR_TESTS.items():
            if pair.get(key) is None:
                continue
            p = pair.get(f"{key}_p")
            if not permuted:                       # too few permutations to reject: a mean gap has Welch's t-test
                p, test = (welch_p(groups[group], groups[reference], value), WELCH_TESTS[kind]) if value else \
                    (None, test)
            out.append(Candidate(
                kind, data["attribute"], group, reference, pair[key] / scale, _scaled(pair.get(f"{key}_ci"), scale),
                p, int(pair["n_group"]), int(pair["n_other"]),
                groups[group][value] if value else None, groups[reference][value] if value else None,
                test=test, view=section_view(data, kind, group, reference), scale=scale))
        if "pairs" in data and isinstance(data.get("groups"), dict) and \
                {group, reference} <= set(data["groups"]) and all("n" in data["groups"][g] for g in (group, reference)):
            out += [c for c in _pair_candidates(data, group, reference, params.alpha)
                    if c.kind == "residual_distance"]
    small = [SmallGroup(data["attribute"], name, int(g["n"]), None, None, _error_verdict(g, groups[reference]))
             for name, g in groups.items() if g["n"] < params.min_group_size]
    return reference, out, small


def _error_verdict(group: dict, reference: dict) -> str:
    ci = group.get("mae_ci") or [None, None]
    interval = (f" (95% CI {ci[0]:.3g} to {ci[1]:.3g})" if None not in ci else "")
    return (f"MAE {group['mae']:.3g}{interval} against {reference['mae']:.3g} for {reference['group']}; at this size "
            "the interval is too wide to rank it")


def _scaled(ci, scale: float) -> tuple[float, float] | None:
    if not ci or any(v is None or not math.isfinite(v) for v in ci):
        return None
    return (ci[0] / scale, ci[1] / scale)
