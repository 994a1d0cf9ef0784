"""From candidates to findings: Benjamini–Hochberg over every candidate, then materiality and the size floor."""
from __future__ import annotations

from statsmodels.stats.multitest import multipletests

from fairviz.findings.candidates import KIND_SECTIONS, candidates
from fairviz.findings.results import Finding, FindingsAudit, FindingsParams, OutcomeWords
from fairviz.findings.tasks import TASK_RECORDS, task_candidates


def has_candidates(data: dict) -> bool:
    """Whether the audit wrote the records the Summary reads (binary: ``groups``; else its parity section's)."""
    task = data.get("task", "binary")
    return "groups" in data if task == "binary" else TASK_RECORDS[task] in data


def summarise(data: dict, params: FindingsParams = FindingsParams(),
              words: OutcomeWords | None = None) -> FindingsAudit:
    """The findings of one audit (its JSON dict). Headline findings are significant after BH at ``alpha`` over all
    candidates, at least material, and about two groups of at least ``min_group_size`` rows; ranked by effect in
    units of the materiality threshold."""
    task = data.get("task", "binary")
    reference, found, small = candidates(data, params) if task == "binary" else task_candidates(data, params)
    tested = [i for i, c in enumerate(found) if c.p_value is not None]
    adjusted = [None] * len(found)
    if tested:
        _, p_adj, _, _ = multipletests([found[i].p_value for i in tested], alpha=params.alpha, method="fdr_bh")
        for i, p in zip(tested, p_adj):
            adjusted[i] = float(p)
    findings = []
    for candidate, p_adj in zip(found, adjusted):
        threshold = params.threshold(candidate.kind)
        findings.append(Finding(
            candidate, p_adj,
            significant=p_adj is not None and p_adj < params.alpha,
            material=abs(candidate.effect) >= threshold,
            large_enough=min(candidate.n_group, candidate.n_reference) >= params.min_group_size,
            strength=abs(candidate.effect) / threshold if threshold > 0 else float("inf")))
    findings.sort(key=lambda f: (not f.headline, -f.strength if f.headline else (f.p_adjusted or 1.0)))
    settings = data.get("parity_settings") or {}
    skipped = set(data.get("sections_skipped", ()))
    not_run = tuple(kind for kind, section in KIND_SECTIONS.items() if section in skipped)
    if task != "binary":
        not_run = tuple(k for k in not_run if k == "residual_distance" and task == "regression")
    mapping = data.get("mapping", {})
    return FindingsAudit(data["attribute"], reference, data["threshold"], settings.get("benefit", "positive"),
                         params, words or default_words(data), tuple(findings), tuple(small), not_run=not_run,
                         task=task, target=mapping.get("label"), units=data.get("units"))


def default_words(data: dict) -> OutcomeWords:
    """Words from the mapping when the data set says nothing more: the label column's values and the threshold."""
    mapping = data.get("mapping", {})
    label, positive = mapping.get("label", "label"), mapping.get("positive_label", 1)
    tau = data["threshold"]
    return OutcomeWords("rows", f"with {label} = {positive}", f"with {label} ≠ {positive}",
                        f"scored ≥ {tau:.2f}", f"scored < {tau:.2f}")
