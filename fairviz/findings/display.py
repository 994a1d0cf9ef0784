"""The Summary: the audit's top findings first — on Home, atop the HTML report, first in the terminal, and as
``findings`` in the JSON. Rows and sentences come from one ``FindingsAudit``; which sections its quick audit runs
(``summary_sections``)."""
from __future__ import annotations

from dataclasses import replace

from fairviz.core.display import Bullets, Group, Item
from fairviz.data import DataError, Sample
from fairviz.data.tasks import BINARY, MULTICLASS, REGRESSION, spec_of
from fairviz.findings.readings import (finding_text, headline_text, policy_text, small_group_text, unremarkable_text,
                                      untested_text)
from fairviz.findings.results import TASK_KINDS, FindingsAudit, FindingsParams, OutcomeWords


def findings_settings(sample: Sample | None, attribute: str, base: FindingsParams = FindingsParams()
                    ) -> tuple[FindingsParams, OutcomeWords | None]:
    """A bundled sample's own reference group and words (COMPAS: Caucasian, "defendants who did not reoffend"),
    unless the user chose a reference already."""
    if sample is None:
        return base, None
    reference = base.reference or sample.reference_groups.get(attribute)
    words = OutcomeWords(**sample.words) if sample.words else None
    return replace(base, reference=reference), words


QUICK_SECTIONS = ("parity", "significance")
# by task: a numeric target's or the classes' parity section holds every candidate; MATCH per class judges the small
# groups
TASK_QUICK_SECTIONS = {BINARY.name: QUICK_SECTIONS, REGRESSION.name: ("parity_regression",),
                       MULTICLASS.name: ("parity_multiclass", "class_match")}


def summary_sections(pred, attribute: str, params: FindingsParams = FindingsParams()) -> tuple[str, ...]:
    """The sections the Summary's quick audit runs: parity, whose closed-form tests (rate gaps, OFI) are every candidate
    it can rank without resampling, and significance only when a group is under the size floor (MATCH's verdict is
    all the Summary reads of it: 0.15 s at 1M rows). F_dist and the ECE gap are tested by resampling, which the
    quick audit skips, so their sections do not run and the Summary names them "not tested here"."""
    quick = TASK_QUICK_SECTIONS.get(getattr(pred, "task", BINARY.name), QUICK_SECTIONS)
    try:
        sizes = pred.groups(attribute).sizes
    except DataError:
        return quick                                  # the sections say what is wrong with the attribute
    return quick if min(sizes) < params.min_group_size else quick[:1]


def finding_row(f, audit, sentence: str | None = None) -> dict:
    """One finding as JSON (its sentence: ``finding_text``'s unless given)."""
    c = f.candidate
    extra = {} if spec_of(audit.task).thresholded else {"class": c.class_name, "scale": c.scale}
    return {"kind": c.kind, "attribute": c.attribute, "group": c.group, "reference": c.reference,
            "effect": c.effect, "ci": list(c.ci) if c.ci else None, "p_value": c.p_value,
            "p_adjusted": f.p_adjusted, "n_group": c.n_group, "n_reference": c.n_reference,
            "group_value": c.group_value, "reference_value": c.reference_value, "significant": f.significant,
            "material": f.material, "large_enough": f.large_enough, "headline": f.headline,
            "strength": f.strength, "test": c.test, "view": dict(c.view),
            "sentence": sentence if sentence is not None else finding_text(f, audit).plain(), **extra}


def findings_to_dict(audit: FindingsAudit) -> dict:
    def row(f):
        return finding_row(f, audit)

    return {
        "attribute": audit.attribute,
        "reference": audit.reference,
        "threshold": audit.threshold,
        "benefit": audit.benefit,
        "policy": {"alpha": audit.params.alpha, "correction": "benjamini-hochberg",
                   "min_group_size": audit.params.min_group_size,
                   "materiality": {k: v for k, v in audit.params.materiality if k in TASK_KINDS[audit.task]}},
        "top": [row(f) for f in audit.top],
        "material_count": audit.material_count,
        "unremarkable": list(audit.unremarkable_kinds()),
        "untested": list(audit.untested_kinds()),
        "too_small": [{"group": s.group, "n": s.n, "benefit_rate": s.benefit_rate,
                       "match_p_adjusted": s.match_p_adjusted,
                       "sentence": small_group_text(s, audit.params.min_group_size).plain()}
                      for s in audit.small_groups],
        "candidates": [row(f) for f in audit.findings],
    }


def display(audit: FindingsAudit) -> list[Item]:
    """Headline, the top findings, what was checked and found unremarkable, the groups too small to tell, and the
    policy; every candidate as detail."""
    items: list[Item] = [headline_text(audit)]
    if audit.top:
        items.append(Bullets(tuple(finding_text(f, audit, "plain") for f in audit.top), "finding"))
    for note in (unremarkable_text(audit), untested_text(audit)):
        if note is not None:
            items.append(note)
    if audit.small_groups:
        items.append(Bullets(tuple(small_group_text(s, audit.params.min_group_size) for s in audit.small_groups),
                             "note"))
    items.append(policy_text(audit))
    others = [f for f in audit.findings if f not in audit.top]
    if others:
        items.append(Group("Every comparison tested", tuple(
            finding_text(f, audit, "note") for f in others), key="findings.all", collapsed=True))
    return items

