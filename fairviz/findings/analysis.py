"""From candidates to findings: Benjamini–Hochberg over every candidate, then materiality and the size floor."""
from __future__ import annotations

from statsmodels.stats.multitest import multipletests

from fairviz.findings.candidates import KIND_CHECKS, candidates
from fairviz.findings.class_candidates import class_candidates
from fairviz.findings.error_candidates import error_candidates
from fairviz.findings.inputs import AuditResults
from fairviz.findings.results import (TASK_KINDS, AttributesSummary, Candidate, Finding, FindingsAudit, FindingsParams,
                                      OutcomeWords, SliceFinding, SmallGroup)
from fairviz.parity.error_parity import RegressionParity
from fairviz.parity.one_vs_rest import MulticlassParity
from fairviz.parity.results import ParityAudit

# by the parity method's result: the reader that forms the Summary's candidates from the audit's typed results (a
# decision at τ reads the residual, calibration and MATCH results beside it)
READERS = {ParityAudit: candidates, RegressionParity: error_candidates, MulticlassParity: class_candidates}


def _reader(audit: AuditResults):
    return READERS.get(type(audit.results.get("parity")))


def has_candidates(audit: AuditResults) -> bool:
    """Whether the audit computed what the Summary reads (its parity method's result, of a method the Summary has a
    reader for). A task whose checks give the Summary no candidates (a task registered without a reader here) has
    none: its audit has no Summary, which the release gate counts as not checked."""
    return _reader(audit) is not None


def summarise(audit: AuditResults, params: FindingsParams = FindingsParams(),
              words: OutcomeWords | None = None) -> FindingsAudit:
    """The findings of one attribute's audit (its checks' typed results). Headline findings are significant after
    BH at ``alpha`` over all candidates, at least material, and about two groups of at least ``min_group_size`` rows;
    ranked by effect in units of the materiality threshold."""
    reference, found, small = candidates_of(audit, params)
    return FindingsAudit(audit.attribute, reference, audit.threshold, audit.benefit, params,
                         words or default_words(audit), judged(found, params), tuple(small),
                         not_run=not_run_kinds(audit), task=audit.task, target=audit.label, units=audit.units)


def candidates_of(audit: AuditResults, params: FindingsParams) -> tuple[str, list[Candidate], list[SmallGroup]]:
    """One attribute's reference group, candidates and groups under the size floor, by its parity method."""
    read = _reader(audit)
    if read is None:
        raise LookupError(f"no Summary reads the parity results of '{audit.attribute}'")
    return read(audit, params)


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


def not_run_kinds(audit: AuditResults) -> tuple[str, ...]:
    """Kinds whose check the audit skipped (the quick audit): the Summary names them "not tested here"."""
    kinds = TASK_KINDS[audit.task]
    return tuple(kind for kind, check in KIND_CHECKS.items() if check in audit.skipped and kind in kinds)


def summarise_attributes(records: dict[str, AuditResults], params: dict[str, FindingsParams],
                         words: OutcomeWords | None = None, failed: dict[str, str] | None = None,
                         slices: tuple[SliceFinding, ...] = ()) -> AttributesSummary:
    """The Summary across attributes from each attribute's typed results and its policy (the same alpha, floor and
    materiality; its own reference group). Every attribute's candidates are one family for Benjamini–Hochberg; an
    attribute whose candidates cannot be formed (an unknown reference) joins ``failed``."""
    failed = dict(failed or {})
    found, small, references, not_run = [], [], {}, set()
    for attribute, audit in records.items():
        try:
            reference, candidates_, small_ = candidates_of(audit, params[attribute])
        except (ValueError, ArithmeticError, LookupError, TypeError) as err:
            failed[attribute] = str(err) or type(err).__name__
            continue
        references[attribute] = reference
        found += candidates_
        small += small_
        not_run |= set(not_run_kinds(audit))
    policy = next(iter(params.values()), FindingsParams())
    first = next(iter(records.values()), None)
    if first is None:
        return AttributesSummary((), (), 0.5, "positive", policy, words or OutcomeWords(), judged(found, policy),
                                 tuple(small), tuple(failed.items()), (), slices=tuple(slices))
    return AttributesSummary(tuple(references), tuple(references.items()), first.threshold, first.benefit, policy,
                             words or default_words(first), judged(found, policy), tuple(small), tuple(failed.items()),
                             tuple(k for k in KIND_CHECKS if k in not_run), first.task, first.label, first.units,
                             tuple(slices))


def default_words(audit: AuditResults) -> OutcomeWords:
    """Words from the mapping when the data set says nothing more: the label column's values and the threshold."""
    label, positive, tau = audit.label, audit.positive_label, audit.threshold
    return OutcomeWords("rows", f"with {label} = {positive}", f"with {label} ≠ {positive}",
                        f"scored ≥ {tau:.2f}", f"scored < {tau:.2f}")
