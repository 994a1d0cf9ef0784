"""From candidates to findings: Benjamini–Hochberg over every candidate, then materiality and the size floor."""
from __future__ import annotations

from statsmodels.stats.multitest import multipletests

from fairviz.data.tasks import BINARY, MULTICLASS, REGRESSION
from fairviz.findings.candidates import KIND_SECTIONS, candidates
from fairviz.findings.class_candidates import class_candidates
from fairviz.findings.error_candidates import error_candidates
from fairviz.findings.results import (TASK_KINDS, AttributesSummary, Candidate, Finding, FindingsAudit, FindingsParams,
                                      OutcomeWords, SliceFinding, SmallGroup)

# by task: the record the Summary reads (the parity section's: a decision at τ writes ``groups``) and its reader
CANDIDATE_RECORDS = {BINARY.name: ("groups", candidates), REGRESSION.name: ("parity_regression", error_candidates),
                     MULTICLASS.name: ("parity_multiclass", class_candidates)}


def _task(data: dict) -> str:
    return data.get("task", BINARY.name)


def has_candidates(data: dict) -> bool:
    """Whether the audit wrote the records the Summary reads (its task's parity section's). A task whose checks
    give the Summary no candidates (a task registered without a reader here) has none: its audit has no Summary,
    which the release gate counts as not checked."""
    record, _ = CANDIDATE_RECORDS.get(_task(data), (None, None))
    return record is not None and record in data


def summarise(data: dict, params: FindingsParams = FindingsParams(),
              words: OutcomeWords | None = None) -> FindingsAudit:
    """The findings of one audit (its JSON dict). Headline findings are significant after BH at ``alpha`` over all
    candidates, at least material, and about two groups of at least ``min_group_size`` rows; ranked by effect in
    units of the materiality threshold."""
    task = _task(data)
    reference, found, small = candidates_of(data, params)
    settings = data.get("parity_settings") or {}
    mapping = data.get("mapping", {})
    return FindingsAudit(data["attribute"], reference, data["threshold"], settings.get("benefit", "positive"),
                         params, words or default_words(data), judged(found, params), tuple(small),
                         not_run=not_run_kinds(data), task=task, target=mapping.get("label"), units=data.get("units"))


def candidates_of(data: dict, params: FindingsParams) -> tuple[str, list[Candidate], list[SmallGroup]]:
    """One attribute's reference group, candidates and groups under the size floor, by task."""
    _, read = CANDIDATE_RECORDS[_task(data)]
    return read(data, params)


def judged(found: list[Candidate], params: FindingsParams) -> tuple[Finding, ...]:
    """Every candidate judged: Benjamini–Hochberg over all that were tested (ONE family, whichever attributes they
    come from), then materiality and the size floor; headline findings first by strength, the rest by adjusted p."""
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
    return tuple(findings)


def not_run_kinds(data: dict) -> tuple[str, ...]:
    """Kinds whose section the audit skipped (the quick audit): the Summary names them "not tested here"."""
    skipped = set(data.get("sections_skipped", ()))
    kinds = TASK_KINDS[_task(data)]
    return tuple(kind for kind, section in KIND_SECTIONS.items() if section in skipped and kind in kinds)


def summarise_attributes(records: dict[str, dict], params: dict[str, FindingsParams],
                         words: OutcomeWords | None = None, failed: dict[str, str] | None = None,
                         slices: tuple[SliceFinding, ...] = ()) -> AttributesSummary:
    """The Summary across attributes from each attribute's audit record (its JSON dict) and its policy (the same
    alpha, floor and materiality; its own reference group). Every attribute's candidates are one family for
    Benjamini–Hochberg; an attribute whose candidates cannot be formed (an unknown reference) joins ``failed``."""
    failed = dict(failed or {})
    found, small, references, not_run = [], [], {}, set()
    for attribute, data in records.items():
        try:
            reference, candidates_, small_ = candidates_of(data, params[attribute])
        except (ValueError, ArithmeticError, LookupError, TypeError) as err:
            failed[attribute] = str(err) or type(err).__name__
            continue
        references[attribute] = reference
        found += candidates_
        small += small_
        not_run |= set(not_run_kinds(data))
    policy = next(iter(params.values()), FindingsParams())
    first = next(iter(records.values()), {})
    settings = first.get("parity_settings") or {}
    mapping = first.get("mapping", {})
    return AttributesSummary(tuple(references), tuple(references.items()), first.get("threshold", 0.5),
                             settings.get("benefit", "positive"), policy, words or (default_words(first) if first else OutcomeWords()),
                             judged(found, policy), tuple(small), tuple(failed.items()),
                             tuple(k for k in KIND_SECTIONS if k in not_run), _task(first),
                             mapping.get("label"), first.get("units"), tuple(slices))


def default_words(data: dict) -> OutcomeWords:
    """Words from the mapping when the data set says nothing more: the label column's values and the threshold."""
    mapping = data.get("mapping", {})
    label, positive = mapping.get("label", "label"), mapping.get("positive_label", 1)
    tau = data["threshold"]
    return OutcomeWords("rows", f"with {label} = {positive}", f"with {label} ≠ {positive}",
                        f"scored ≥ {tau:.2f}", f"scored < {tau:.2f}")
