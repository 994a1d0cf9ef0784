"""Candidate statements of regression and multiclass audits, read from the records their parity sections wrote
(``parity_regression``, ``parity_multiclass``, ``class_match``), under the binary findings' rules: each group against
the section's reference group, every raw p-value into one Benjamini–Hochberg family (``analysis.summarise``), a
materiality threshold per kind and the size floor.

- Regression: the bias gap and the MAE gap (permutation tests; bootstrap intervals) and the distance between the
  groups' predictions (W1, permutation test), each divided by the reference group's MAE, so that one threshold (a
  tenth of the typical error by default) holds for a target in any units; and F_dist when the residual section wrote
  it (``residual_distance``, as binary).
- Multiclass: per class, the true-positive-rate gap (two-proportion score test and Newcombe interval on the
  one-vs-rest counts, as the binary rate gaps) and the OFI (its Wald z-test); and GAP(TPR) over classes (its
  permutation test), a statement about every group at once (``ALL_GROUPS``), held to the size floor by the smallest
  group.
"""
from __future__ import annotations

import math

from scipy.stats import ttest_ind_from_stats

from fairviz.core.stats import permutations_can_reject
from fairviz.findings.candidates import _newcombe, _pair_candidates, _score_test
from fairviz.findings.results import ALL_GROUPS, Candidate, FindingsParams, SmallGroup
from fairviz.findings.views import finding_view
from fairviz.parity.ofi import OFI_TEST

TASK_RECORDS = {"regression": "parity_regression", "multiclass": "parity_multiclass"}


def task_reference(record: dict, params: FindingsParams) -> str:
    """The section's reference group (it compared against ``params.reference`` when one was given)."""
    names = [g["group"] for g in record["groups"]]
    if params.reference is not None and params.reference not in names:
        raise ValueError(f"the reference group '{params.reference}' is not among the groups of "
                         f"'{record['attribute']}' ({', '.join(map(str, names))})")
    return record["reference"]


def _view(data: dict, kind: str, group: str, reference: str, class_name: str | None = None) -> tuple:
    view = finding_view(kind, data["attribute"], group, reference, data["threshold"], "positive")
    return view + ((("class", class_name),) if class_name is not None else ())


def _scaled(ci, scale: float) -> tuple[float, float] | None:
    if not ci or any(v is None or not math.isfinite(v) for v in ci):
        return None
    return (ci[0] / scale, ci[1] / scale)


# ----------------------------------------------------------------------------------------------- regression

REGRESSION_TESTS = {
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


def regression_candidates(data: dict, params: FindingsParams) -> tuple[str, list[Candidate], list[SmallGroup]]:
    record = data["parity_regression"]
    reference = task_reference(record, params)
    groups = {g["group"]: g for g in record["groups"]}
    scale = groups[reference]["mae"]
    permuted = permutations_can_reject(record["params"].get("permutations"), params.alpha)
    out: list[Candidate] = []
    for pair in record["pairs"]:
        if not pair["against_reference"] or not scale or not math.isfinite(scale):
            continue                               # a perfect reference (MAE 0) gives no scale to read gaps in
        group = pair["group"]
        for kind, (key, value, test) in REGRESSION_TESTS.items():
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
                test=test, view=_view(data, kind, group, reference), scale=scale))
        if "pairs" in data and isinstance(data.get("groups"), dict) and \
                {group, reference} <= set(data["groups"]) and all("n" in data["groups"][g] for g in (group, reference)):
            out += [c for c in _pair_candidates(data, group, reference, params.alpha)
                    if c.kind == "residual_distance"]
    small = [SmallGroup(data["attribute"], name, int(g["n"]), None, None, _regression_verdict(g, groups[reference]))
             for name, g in groups.items() if g["n"] < params.min_group_size]
    return reference, out, small


def _regression_verdict(group: dict, reference: dict) -> str:
    ci = group.get("mae_ci") or [None, None]
    interval = (f" (95% CI {ci[0]:.3g} to {ci[1]:.3g})" if None not in ci else "")
    return (f"MAE {group['mae']:.3g}{interval} against {reference['mae']:.3g} for {reference['group']}; at this size "
            "the interval is too wide to rank it")


# ----------------------------------------------------------------------------------------------- multiclass

def multiclass_candidates(data: dict, params: FindingsParams) -> tuple[str, list[Candidate], list[SmallGroup]]:
    record = data["parity_multiclass"]
    reference = task_reference(record, params)
    sizes = {g["group"]: int(g["n"]) for g in record["groups"]}
    cells = {(c["class"], c["group"]): c for c in record["per_class"]}
    out: list[Candidate] = []
    for (class_name, group), cell in cells.items():
        if group == reference:
            continue
        ref = cells[(class_name, reference)]
        k1, n1, k2, n2 = cell["tp"], cell["tp"] + cell["fn"], ref["tp"], ref["tp"] + ref["fn"]
        if n1 and n2:
            out.append(Candidate(
                "class_tpr", data["attribute"], group, reference, k1 / n1 - k2 / n2, _newcombe(k1, n1, k2, n2),
                _score_test(k1, n1, k2, n2), sizes[group], sizes[reference], k1 / n1, k2 / n2,
                test="two-proportion score test; Newcombe interval (one vs rest)",
                view=_view(data, "class_tpr", group, reference, class_name), class_name=class_name))
        if cell.get("ofi") is not None:
            out.append(Candidate(
                "class_ofi", data["attribute"], group, reference, cell["ofi"], None, cell.get("ofi_p_value"),
                sizes[group], sizes[reference], test=f"OFI [3] ch. 3 (one vs rest): {OFI_TEST}",
                view=_view(data, "class_ofi", group, reference, class_name), class_name=class_name))
    gap = (record.get("gaps") or {}).get("tpr")
    if gap and gap.get("gap") is not None:
        smallest = min((n for g, n in sizes.items() if g != reference), default=0)
        permuted = permutations_can_reject(record["params"].get("permutations"), params.alpha)
        out.append(Candidate("gap_tpr", data["attribute"], ALL_GROUPS, reference, gap["gap"], None,
                             gap.get("p_value") if permuted else None, smallest, sizes[reference],
                             test="permutation test of GAP(TPR) (group labels shuffled)",
                             view=_view(data, "gap_tpr", ALL_GROUPS, reference)))
    small = [SmallGroup(data["attribute"], name, n, None, _class_match_p(data, name), _match_verdict(data, name))
             for name, n in sizes.items() if n < params.min_group_size]
    return reference, out, small


def _class_match_p(data: dict, group: str) -> float | None:
    found = [r["p_adjusted"] for r in (data.get("class_match") or {}).get("results", [])
             if r["group"] == group and r.get("p_adjusted") is not None]
    return min(found) if found else None


def _match_verdict(data: dict, group: str) -> str:
    p = _class_match_p(data, group)
    if p is None:
        return "MATCH per class could not test it"
    if p < 0.05:
        return (f"MATCH per class: some one-vs-rest rate differs from the population's beyond sampling noise "
                f"(smallest adjusted p {p:.3g})")
    return f"MATCH per class: not distinguishable from sampling noise at this size (smallest adjusted p {p:.3g})"


def task_candidates(data: dict, params: FindingsParams) -> tuple[str, list[Candidate], list[SmallGroup]]:
    task = data.get("task", "binary")
    return regression_candidates(data, params) if task == "regression" else multiclass_candidates(data, params)
