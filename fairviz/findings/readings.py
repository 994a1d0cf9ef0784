"""The findings in words: each sentence names the groups, the real label values and the decision."""
from __future__ import annotations

from fairviz.core.display import Text, join, text
from fairviz.core.wording import fmt_p
from fairviz.findings.results import KIND_TITLES, Finding, FindingsAudit, SmallGroup


def _evidence(f: Finding) -> Text:
    c = f.candidate
    ci = f"95% CI [{c.ci[0]:+.3f}, {c.ci[1]:+.3f}], " if c.ci else ""
    adjusted = f", adjusted p {fmt_p(f.p_adjusted)}" if f.p_adjusted is not None else ""
    p = fmt_p(c.p_value) if c.p_value is not None else "untested"
    return text(" ({kind} {effect}, {ci}p {p}{adjusted}; n = {ng:,} and {nr:,})",
                kind={"residual_distance": "F_dist", "ofi": "OFI"}.get(c.kind, "gap"),
                effect=f"{c.effect:+.3f}" if c.kind != "residual_distance" else f"{c.effect:.3f}",
                ci=ci, p=p, adjusted=adjusted, ng=c.n_group, nr=c.n_reference)


def finding_text(f: Finding, audit: FindingsAudit, level: str = "finding") -> Text:
    c, w = f.candidate, audit.words
    if c.kind == "fpr":
        head = text("**{g}** {unit} {neg} were {pp} at {gv:.2f} vs {rv:.2f} for **{r}**", level,
                    g=c.group, unit=w.unit, neg=w.label_negative, pp=w.predicted_positive,
                    gv=c.group_value, rv=c.reference_value, r=c.reference)
    elif c.kind == "fnr":
        head = text("**{g}** {unit} {pos} were {pn} at {gv:.2f} vs {rv:.2f} for **{r}**", level,
                    g=c.group, unit=w.unit, pos=w.label_positive, pn=w.predicted_negative,
                    gv=c.group_value, rv=c.reference_value, r=c.reference)
    elif c.kind == "selection_rate":
        head = text("**{g}** {unit} were {pp} at {gv:.2f} vs {rv:.2f} for **{r}**", level,
                    g=c.group, unit=w.unit, pp=w.predicted_positive, gv=c.group_value, rv=c.reference_value,
                    r=c.reference)
    elif c.kind == "ofi":
        more = "more" if c.effect > 0 else "less"
        head = text("**{g}** gets {more} of the benefit than its labels warrant, relative to **{r}** (Objective "
                    "Fairness Index)", level, g=c.group, more=more, r=c.reference)
    elif c.kind == "residual_distance":
        head = text("The residual distributions of **{g}** and **{r}** differ beyond the rate gaps", level,
                    g=c.group, r=c.reference)
    else:
        head = text("Scores are calibrated differently: ECE {gv:.3f} for **{g}** vs {rv:.3f} for **{r}**", level,
                    g=c.group, gv=c.group_value, rv=c.reference_value, r=c.reference)
    return join(head, _evidence(f), ".", level=level)


def small_group_text(s: SmallGroup, floor: int) -> Text:
    if s.match_p_adjusted is None:
        verdict = "MATCH could not test it"
    elif s.match_p_adjusted < 0.05:
        verdict = f"MATCH: its benefit rate differs from the rest beyond sampling noise (adjusted p {fmt_p(s.match_p_adjusted)})"
    else:
        verdict = f"MATCH: not distinguishable from sampling noise at this size (adjusted p {fmt_p(s.match_p_adjusted)})"
    rate = f"benefit rate {s.benefit_rate:.2f}; " if s.benefit_rate is not None else ""
    return text("**{g}** (n = {n:,} < {floor:,}): too small to tell — {rate}{verdict}.", "note",
                g=s.group, n=s.n, floor=floor, rate=rate, verdict=verdict)


def unremarkable_text(audit: FindingsAudit) -> Text | None:
    kinds = audit.unremarkable_kinds()
    if not kinds:
        return None
    return text("Checked and unremarkable (no material, significant gap for groups of {floor:,}+ rows vs {r}): "
                "{kinds}.", "note", floor=audit.params.min_group_size, r=audit.reference,
                kinds=", ".join(KIND_TITLES[k] for k in kinds))


def untested_text(audit: FindingsAudit) -> Text | None:
    kinds = audit.untested_kinds()
    if not kinds:
        return None
    return text("Not tested here: {kinds} (their tests resample the rows; the full report has them).", "note",
                kinds=", ".join(KIND_TITLES[k] for k in kinds))


def policy_text(audit: FindingsAudit) -> Text:
    p = audit.params
    thresholds = ", ".join(f"{KIND_TITLES[k]} ≥ {v:g}" for k, v in p.materiality)
    return text("A finding is significant after Benjamini–Hochberg over all {n} comparisons (α = {a:g}), material "
                "({t}) and about groups of at least {floor:,} rows; each group is compared with {r} (the reference) "
                "at τ = {tau:.2f}.", "note", n=sum(f.candidate.p_value is not None for f in audit.findings),
                a=p.alpha, t=thresholds, floor=p.min_group_size, r=audit.reference, tau=audit.threshold)


def headline_text(audit: FindingsAudit) -> Text:
    if not audit.top:
        return text("No material, significant disparity between groups of {floor:,}+ rows in '{a}' at τ = {tau:.2f}.",
                    "finding", floor=audit.params.min_group_size, a=audit.attribute, tau=audit.threshold)
    return text("{k} material, significant disparit{ies} in '{a}' at τ = {tau:.2f}; the largest:", "plain",
                k=audit.material_count, ies="y" if audit.material_count == 1 else "ies", a=audit.attribute,
                tau=audit.threshold)
