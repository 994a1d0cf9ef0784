"""Candidate statements per class, one vs rest, read from the record of parity per class (``parity_multiclass``) and
MATCH per class (``class_match``), under the benefit findings' rules: each group against the section's reference
group, every raw p-value into one Benjamini–Hochberg family (``analysis.summarise``), a materiality threshold per kind
and the size floor.

Per class, the true-positive-rate gap (two-proportion score test and Newcombe interval on the one-vs-rest counts, as
the rate gaps at τ) and the OFI (its Wald z-test); and GAP(TPR) over classes (its permutation test), a statement about
every group at once (``ALL_GROUPS``), held to the size floor by the smallest group.
"""
from __future__ import annotations

from fairviz.core.stats import permutations_can_reject
from fairviz.findings.candidates import _newcombe, _score_test, section_reference, section_view
from fairviz.findings.results import ALL_GROUPS, Candidate, FindingsParams, SmallGroup
from fairviz.parity.ofi import OFI_TEST


def class_candidates(data: dict, params: FindingsParams) -> tuple[str, list[Candidate], list[SmallGroup]]:
    record = data["parity_multiclass"]
    reference = section_reference(record, params)
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
                view=section_view(data, "class_tpr", group, reference, class_name), class_name=class_name))
        if cell.get("ofi") is not None:
            out.append(Candidate(
                "class_ofi", data["attribute"], group, reference, cell["ofi"], None, cell.get("ofi_p_value"),
                sizes[group], sizes[reference], test=f"OFI [3] ch. 3 (one vs rest): {OFI_TEST}",
                view=section_view(data, "class_ofi", group, reference, class_name), class_name=class_name))
    gap = (record.get("gaps") or {}).get("tpr")
    if gap and gap.get("gap") is not None:
        smallest = min((n for g, n in sizes.items() if g != reference), default=0)
        permuted = permutations_can_reject(record["params"].get("permutations"), params.alpha)
        out.append(Candidate("gap_tpr", data["attribute"], ALL_GROUPS, reference, gap["gap"], None,
                             gap.get("p_value") if permuted else None, smallest, sizes[reference],
                             test="permutation test of GAP(TPR) (group labels shuffled)",
                             view=section_view(data, "gap_tpr", ALL_GROUPS, reference)))
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
