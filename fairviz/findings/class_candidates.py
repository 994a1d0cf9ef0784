"""Candidate statements per class, one vs rest, read from the typed results of parity per class
(``MulticlassParity``) and MATCH per class (``ClassMatch``), under the benefit findings' rules: each group against the
section's reference group, every raw p-value into one Benjamini–Hochberg family (``analysis.summarise``), a materiality
threshold per kind and the size floor.

Per class, the true-positive-rate gap (two-proportion score test and Newcombe interval on the one-vs-rest counts, as
the rate gaps at τ) and the OFI (its Wald z-test); and GAP(TPR) over classes (its permutation test), a statement about
every group at once (``ALL_GROUPS``), held to the size floor by the smallest group.
"""
from __future__ import annotations

from fairviz.core.stats import permutations_can_reject
from fairviz.findings.candidates import _newcombe, _score_test, section_reference, section_view
from fairviz.findings.inputs import AuditResults, number
from fairviz.findings.results import ALL_GROUPS, Candidate, FindingsParams, SmallGroup
from fairviz.parity.ofi import OFI_TEST
from fairviz.parity.one_vs_rest import MulticlassParity
from fairviz.sample_size.class_match import ClassMatch


def class_candidates(audit: AuditResults, params: FindingsParams) -> tuple[str, list[Candidate], list[SmallGroup]]:
    result: MulticlassParity = audit.result("parity", MulticlassParity)
    sizes = {g.name: int(g.n) for g in result.groups}
    reference = section_reference(sizes, result.reference, audit.attribute, params)
    cells = {(c.class_name, c.group): c for c in result.per_class}
    out: list[Candidate] = []
    for (class_name, group), cell in cells.items():
        if group == reference:
            continue
        ref = cells[(class_name, reference)].counts
        k1, n1, k2, n2 = cell.counts.tp, cell.counts.tp + cell.counts.fn, ref.tp, ref.tp + ref.fn
        if n1 and n2:
            out.append(Candidate(
                "class_tpr", audit.attribute, group, reference, k1 / n1 - k2 / n2, _newcombe(k1, n1, k2, n2),
                _score_test(k1, n1, k2, n2), sizes[group], sizes[reference], k1 / n1, k2 / n2,
                test="two-proportion score test; Newcombe interval (one vs rest)",
                view=section_view(audit, "class_tpr", group, reference, class_name), class_name=class_name))
        if number(cell.ofi) is not None:
            out.append(Candidate(
                "class_ofi", audit.attribute, group, reference, number(cell.ofi), None, number(cell.ofi_p),
                sizes[group], sizes[reference], test=f"OFI [3] ch. 3 (one vs rest): {OFI_TEST}",
                view=section_view(audit, "class_ofi", group, reference, class_name), class_name=class_name))
    gap = result.gaps.get("tpr")
    if gap is not None and number(gap.value) is not None:
        smallest = min((n for g, n in sizes.items() if g != reference), default=0)
        permuted = permutations_can_reject(result.params.permutations, params.alpha)
        out.append(Candidate("gap_tpr", audit.attribute, ALL_GROUPS, reference, number(gap.value), None,
                             number(gap.p_value) if permuted else None, smallest, sizes[reference],
                             test="permutation test of GAP(TPR) (group labels shuffled)",
                             view=section_view(audit, "gap_tpr", ALL_GROUPS, reference)))
    small = [SmallGroup(audit.attribute, name, n, None, _class_match_p(audit, name), _match_verdict(audit, name))
             for name, n in sizes.items() if n < params.min_group_size]
    return reference, out, small


def _class_match_p(audit: AuditResults, group: str) -> float | None:
    match = audit.result("sample_size", ClassMatch)
    results = match.results() if match is not None else []
    found = [number(r.p_adjusted) for _, r in results if r.group == group and number(r.p_adjusted) is not None]
    return min(found) if found else None


def _match_verdict(audit: AuditResults, group: str) -> str:
    p = _class_match_p(audit, group)
    if p is None:
        return "MATCH per class could not test it"
    if p < 0.05:
        return (f"MATCH per class: some one-vs-rest rate differs from the population's beyond sampling noise "
                f"(smallest adjusted p {p:.3g})")
    return f"MATCH per class: not distinguishable from sampling noise at this size (smallest adjusted p {p:.3g})"
