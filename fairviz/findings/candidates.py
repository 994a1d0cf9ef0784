"""Candidate statements from every audit section, each group compared with the reference group.

The candidates read the audit's JSON records (``groups``, ``pairs``, ``calibration``, ``match``): the one interface
every section already writes, so the findings are computed from the very numbers the pages and the report show.
Rate gaps get their interval and test here, from the groups' confusion counts at τ.
"""
from __future__ import annotations

import math

import numpy as np

from scipy.stats import norm
from statsmodels.stats.proportion import confint_proportions_2indep, test_proportions_2indep

from fairviz.core.stats import permutations_can_reject
from fairviz.findings.results import Candidate, FindingsParams, SmallGroup
from fairviz.findings.views import finding_view
from fairviz.parity.ofi import OFI_TEST

Z95 = norm.ppf(0.975)


def reference_group(data: dict, params: FindingsParams) -> str:
    groups = data["groups"]
    if params.reference is not None:
        if params.reference not in groups:
            raise ValueError(f"the reference group '{params.reference}' is not among the groups of "
                             f"'{data['attribute']}' ({', '.join(map(str, groups))})")
        return params.reference
    return max(groups, key=lambda g: (groups[g]["n"], -list(groups).index(g)))


def with_label_counts(data: dict) -> dict:
    """The audit's records with every group's size and label-oriented confusion counts at τ. The residual section
    writes them; the quick audit runs without it, so they come from the parity section's counts, which are in the
    benefit's orientation: a negative benefit swaps TP↔TN and FN↔FP."""
    groups = data.get("groups", {})
    if all("tp" in record for record in groups.values()):
        return data
    flipped = (data.get("parity_settings") or {}).get("benefit") == "negative"
    swap = {"tp": "tn", "tn": "tp", "fp": "fn", "fn": "fp"} if flipped else {c: c for c in CELLS}
    filled = {}
    for name, record in groups.items():
        parity = record.get("parity")
        if "tp" in record or not parity:
            filled[name] = record
            continue
        counts = {cell: parity[swap[cell]] for cell in CELLS}
        filled[name] = {"n": sum(counts.values()), **counts, **record}
    return {**data, "groups": filled}


CELLS = ("tp", "fn", "fp", "tn")
# which section's records each kind reads: a kind whose section the quick audit skipped is named "not tested here"
KIND_SECTIONS = {"residual_distance": "residuals", "calibration": "calibration", "ofi": "parity", "fpr": "parity",
                 "fnr": "parity", "selection_rate": "parity"}


def candidates(data: dict, params: FindingsParams) -> tuple[str, list[Candidate], list[SmallGroup]]:
    data = with_label_counts(data)
    reference = reference_group(data, params)
    groups = data["groups"]
    out: list[Candidate] = []
    for group in groups:
        if group == reference:
            continue
        out += _rate_gaps(data, group, reference)
        out += _pair_candidates(data, group, reference, params.alpha)
        out += _calibration_gap(data, group, reference)
    small = [_small_group(data, g) for g in groups if groups[g]["n"] < params.min_group_size]
    return reference, out, small


# ------------------------------------------------------------------------------------------------ rate gaps

_RATES = {  # kind → (numerator cells, denominator cells) of the label-oriented confusion counts at τ
    "fpr": (("fp",), ("fp", "tn")),
    "fnr": (("fn",), ("fn", "tp")),
    "selection_rate": (("tp", "fp"), ("tp", "fp", "tn", "fn")),
}


def _rate_gaps(data: dict, group: str, reference: str) -> list[Candidate]:
    g, r = data["groups"][group], data["groups"][reference]
    out = []
    for kind, (num, den) in _RATES.items():
        k1, n1 = sum(g[c] for c in num), sum(g[c] for c in den)
        k2, n2 = sum(r[c] for c in num), sum(r[c] for c in den)
        if n1 == 0 or n2 == 0:
            continue                                   # undefined rate: nothing to compare
        p1, p2 = k1 / n1, k2 / n2
        out.append(Candidate(kind, data["attribute"], group, reference, p1 - p2, _newcombe(k1, n1, k2, n2),
                             _score_test(k1, n1, k2, n2), int(g["n"]), int(r["n"]), p1, p2,
                             test="two-proportion score test; Newcombe interval",
                             view=_view(data, kind, group, reference)))
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

def _pair(data: dict, group: str, reference: str) -> tuple[dict | None, float]:
    """The pair record of (group, reference) and the sign that turns its "i minus j" into "group minus reference"."""
    for pair in data.get("pairs", []):
        if (pair["group_i"], pair["group_j"]) == (group, reference):
            return pair, 1.0
        if (pair["group_i"], pair["group_j"]) == (reference, group):
            return pair, -1.0
    return None, 1.0


def _oriented(ci, sign: float) -> tuple[float, float] | None:
    if not ci or any(v is None or not math.isfinite(v) for v in ci):
        return None
    low, high = sign * ci[0], sign * ci[1]
    return (min(low, high), max(low, high))


def _pair_candidates(data: dict, group: str, reference: str, alpha: float) -> list[Candidate]:
    pair, sign = _pair(data, group, reference)
    if pair is None:
        return []                                      # the pair cap left it out
    n_g, n_r = int(data["groups"][group]["n"]), int(data["groups"][reference]["n"])
    out = []
    if pair.get("ofi") is not None:
        out.append(Candidate("ofi", data["attribute"], group, reference, sign * pair["ofi"],
                             _oriented(pair.get("ofi_ci"), sign), pair.get("ofi_p_value"), n_g, n_r,
                             test=f"OFI [3] ch. 3: {OFI_TEST}",
                             view=_view(data, "ofi", group, reference)))
    if pair.get("f_dist") is not None:
        ci = _oriented((pair.get("ci") or {}).get("f_dist"), 1.0)      # None when too few resamples gave none
        permutations = (data.get("rdf_settings") or {}).get("resamples")
        p = pair.get("p_value_dist") if permutations_can_reject(permutations, alpha) else None
        out.append(Candidate("residual_distance", data["attribute"], group, reference, pair["f_dist"], ci, p, n_g, n_r,
                             test="permutation test of F_dist (Wasserstein-1) [1] §5",
                             view=_view(data, "residual_distance", group, reference)))
    return out


def _calibration_gap(data: dict, group: str, reference: str) -> list[Candidate]:
    """ECE gap with its bootstrap interval; its p-value is the normal approximation to that interval (the bootstrap
    gives no test of its own), named so in ``test``."""
    calibration = data.get("calibration", {}).get("groups", {})
    pairs = data.get("calibration", {}).get("pairs", [])
    record = next((p for p in pairs if {p["group_i"], p["group_j"]} == {group, reference}), None)
    if record is None or record.get("ece_diff") is None or group not in calibration or reference not in calibration:
        return []
    sign = 1.0 if record["group_i"] == group else -1.0
    ci = _oriented(record.get("ece_diff_ci"), sign)
    effect = sign * record["ece_diff"]
    p = None
    if ci is not None and ci[1] > ci[0]:
        se = (ci[1] - ci[0]) / (2 * Z95)
        p = float(2 * norm.sf(abs(effect) / se))
    return [Candidate("calibration", data["attribute"], group, reference, effect, ci, p,
                      int(data["groups"][group]["n"]), int(data["groups"][reference]["n"]),
                      calibration[group]["ece"], calibration[reference]["ece"],
                      test="bootstrap interval of the ECE gap; p from its normal approximation",
                      view=_view(data, "calibration", group, reference))]


def _view(data: dict, kind: str, group: str, reference: str) -> tuple[tuple[str, str], ...]:
    benefit = (data.get("parity_settings") or {}).get("benefit", "positive")
    return finding_view(kind, data["attribute"], group, reference, data["threshold"], benefit)


def section_reference(record: dict, params: FindingsParams) -> str:
    """The reference group of a section that chose its own (error parity, parity per class): it compared against
    ``params.reference`` when one was given."""
    names = [g["group"] for g in record["groups"]]
    if params.reference is not None and params.reference not in names:
        raise ValueError(f"the reference group '{params.reference}' is not among the groups of "
                         f"'{record['attribute']}' ({', '.join(map(str, names))})")
    return record["reference"]


def section_view(data: dict, kind: str, group: str, reference: str, class_name: str | None = None) -> tuple:
    """The page view of such a section's finding (no benefit to orient: "positive"), with its class when it has one."""
    view = finding_view(kind, data["attribute"], group, reference, data["threshold"], "positive")
    return view + ((("class", class_name),) if class_name is not None else ())


def _small_group(data: dict, group: str) -> SmallGroup:
    record = data["groups"][group]
    match = data.get("match", {}).get(group, {}).get("ppr", {})
    return SmallGroup(data["attribute"], group, int(record["n"]), (record.get("parity") or {}).get("benefit_rate"),
                      match.get("p_adjusted"))
