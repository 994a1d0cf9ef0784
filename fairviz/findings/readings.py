"""The findings in words: each sentence names the groups, the real label values and the decision."""
from __future__ import annotations

from fairviz.core.display import Text, join, text
from fairviz.core.stats import fewest_permutations
from fairviz.core.wording import fmt_p
from fairviz.data.tasks import spec_of
from fairviz.findings.results import (KIND_TITLES, MULTICLASS_KINDS, REGRESSION_KINDS, TASK_KINDS, AttributesSummary,
                                      Finding, FindingsAudit, SliceFinding, SmallGroup)

_EFFECT_NAMES = {"residual_distance": "F_dist", "ofi": "OFI", "class_ofi": "OFI", "gap_tpr": "GAP",
                 "bias_gap": "gap ÷ reference MAE", "mae_gap": "gap ÷ reference MAE",
                 "prediction_w1": "W1 ÷ reference MAE"}
_DISTANCES = ("residual_distance", "prediction_w1", "gap_tpr")       # ≥ 0: no sign


def _evidence(f: Finding) -> Text:
    c = f.candidate
    ci = f"95% CI [{c.ci[0]:+.3f}, {c.ci[1]:+.3f}], " if c.ci else ""
    adjusted = f", adjusted p {fmt_p(f.p_adjusted)}" if f.p_adjusted is not None else ""
    p = fmt_p(c.p_value) if c.p_value is not None else "untested"
    return text(" ({kind} {effect}, {ci}p {p}{adjusted}; n = {ng:,} and {nr:,})",
                kind=_EFFECT_NAMES.get(c.kind, "gap"),
                effect=f"{c.effect:+.3f}" if c.kind not in _DISTANCES else f"{c.effect:.3f}",
                ci=ci, p=p, adjusted=adjusted, ng=c.n_group, nr=c.n_reference)


def _method_head(c, audit: FindingsAudit, level: str) -> Text:
    """The sentence of a regression or multiclass finding: the target (or class) and the groups by name."""
    target = audit.target or "the target"
    units = f" {audit.units}" if audit.units else ""
    if c.kind == "bias_gap":
        return text("Predictions of {t} for **{g}** are off by {gv:+.4g}{u} on average (prediction − {t}) against "
                    "{rv:+.4g}{u} for **{r}**", level, t=target, g=c.group, gv=c.group_value, rv=c.reference_value,
                    u=units, r=c.reference)
    if c.kind == "mae_gap":
        return text("Predictions of {t} for **{g}** miss by {gv:.4g}{u} on average (MAE) against {rv:.4g}{u} for "
                    "**{r}**", level, t=target, g=c.group, gv=c.group_value, rv=c.reference_value, u=units,
                    r=c.reference)
    if c.kind == "prediction_w1":
        return text("The predicted {t} of **{g}** and **{r}** are distributed differently: {w:.4g}{u} apart on "
                    "average (Wasserstein-1)", level, t=target, g=c.group, r=c.reference, w=c.effect * c.scale,
                    u=units)
    if c.kind == "class_tpr":
        return text("**{g}** rows of class **{k}** are predicted {k} at {gv:.2f} vs {rv:.2f} for **{r}** (true "
                    "positive rate, one vs rest)", level, g=c.group, k=c.class_name, gv=c.group_value,
                    rv=c.reference_value, r=c.reference)
    if c.kind == "class_ofi":
        return text("For class **{k}**, **{g}** is predicted {k} {more} than its labels warrant, relative to **{r}** "
                    "(Objective Fairness Index, one vs rest)", level, k=c.class_name, g=c.group,
                    more="more" if c.effect > 0 else "less", r=c.reference)
    return text("The groups of '{a}' are recognised unequally across the classes of {t}: GAP(TPR) {v:.3f} (root mean "
                "square over classes of how far each group's true positive rate sits from the class's)", level,
                a=c.attribute, t=target, v=c.effect)


def finding_text(f: Finding, audit: FindingsAudit, level: str = "finding") -> Text:
    c, w = f.candidate, audit.words
    if c.kind in _METHOD_KINDS:
        head = _method_head(c, audit, level)
    elif c.kind == "fpr":
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
        # no "beyond the rate gaps": a regression has no rates, and F_dist says how far apart the curves are
        head = text("The residual distributions (prediction − truth) of **{g}** and **{r}** differ", level,
                    g=c.group, r=c.reference)
    else:
        head = text("Scores are calibrated differently: ECE {gv:.3f} for **{g}** vs {rv:.3f} for **{r}**", level,
                    g=c.group, gv=c.group_value, rv=c.reference_value, r=c.reference)
    return join(head, _evidence(f), ".", level=level)


_METHOD_KINDS = frozenset(REGRESSION_KINDS + MULTICLASS_KINDS)      # the kinds of a method without a decision at τ


def small_group_text(s: SmallGroup, floor: int) -> Text:
    if s.verdict is not None:
        return text("**{g}** (n = {n:,} < {floor:,}): too small to tell — {verdict}.", "note",
                    g=s.group, n=s.n, floor=floor, verdict=s.verdict)
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
    skipped = [k for k in kinds if k in audit.not_run]           # the quick audit skipped their section
    drawn = [k for k in kinds if k not in audit.not_run]         # their section ran with too few resamples
    parts = []
    if skipped:
        parts.append(text("Not tested here: {kinds} (their tests resample the rows; the full report has them).",
                          "note", kinds=", ".join(KIND_TITLES[k] for k in skipped)))
    if drawn:
        parts.append(text("Not tested: {kinds} (their tests resample the rows, and this audit drew too few "
                          "resamples to reach α = {a:g}; --resamples {need} or more tests them).", "note",
                          kinds=", ".join(KIND_TITLES[k] for k in drawn), a=audit.params.alpha,
                          need=fewest_permutations(audit.params.alpha)))
    return parts[0] if len(parts) == 1 else join(parts[0], " ", parts[1], level="note")


def policy_text(audit: FindingsAudit) -> Text:
    p = audit.params
    kinds = TASK_KINDS[audit.task]
    thresholds = ", ".join(f"{KIND_TITLES[k]} ≥ {v:g}" for k, v in p.materiality if k in kinds)
    if not spec_of(audit.task).thresholded:
        return text("A finding is significant after Benjamini–Hochberg over all {n} comparisons (α = {a:g}), material "
                    "({t}) and about groups of at least {floor:,} rows; each group is compared with {r} (the "
                    "reference).", "note", n=sum(f.candidate.p_value is not None for f in audit.findings),
                    a=p.alpha, t=thresholds, floor=p.min_group_size, r=audit.reference)
    return text("A finding is significant after Benjamini–Hochberg over all {n} comparisons (α = {a:g}), material "
                "({t}) and about groups of at least {floor:,} rows; each group is compared with {r} (the reference) "
                "at τ = {tau:.2f}.", "note", n=sum(f.candidate.p_value is not None for f in audit.findings),
                a=p.alpha, t=thresholds, floor=p.min_group_size, r=audit.reference, tau=audit.threshold)


def headline_text(audit: FindingsAudit) -> Text:
    if not spec_of(audit.task).thresholded:
        if not audit.top:
            return text("No material, significant disparity between groups of {floor:,}+ rows in '{a}'.", "finding",
                        floor=audit.params.min_group_size, a=audit.attribute)
        return text("{k} material, significant disparit{ies} in '{a}'; the largest:", "plain",
                    k=audit.material_count, ies="y" if audit.material_count == 1 else "ies", a=audit.attribute)
    if not audit.top:
        return text("No material, significant disparity between groups of {floor:,}+ rows in '{a}' at τ = {tau:.2f}.",
                    "finding", floor=audit.params.min_group_size, a=audit.attribute, tau=audit.threshold)
    return text("{k} material, significant disparit{ies} in '{a}' at τ = {tau:.2f}; the largest:", "plain",
                k=audit.material_count, ies="y" if audit.material_count == 1 else "ies", a=audit.attribute,
                tau=audit.threshold)


# ------------------------------------------------------------------------------------------ across attributes

def attributed_text(f: Finding, audit, level: str = "finding") -> Text:
    """A finding of the Summary across attributes: its sentence after the attribute it is about
    ("race: **African-American** defendants …")."""
    return join(text("{a}: ", level, a=f.candidate.attribute), finding_text(f, audit, level), level=level)


def across_headline_text(summary: AttributesSummary) -> Text:
    names = ", ".join(summary.attributes)
    at = f" at τ = {summary.threshold:.2f}" if spec_of(summary.task).thresholded else ""
    if not summary.top:
        return text("No material, significant disparity between groups of {floor:,}+ rows in any of {k} attribute"
                    "{s} ({names}){at}.", "finding", floor=summary.params.min_group_size, k=len(summary.attributes),
                    s="" if len(summary.attributes) == 1 else "s", names=names, at=at)
    return text("{m} material, significant disparit{ies} across {k} attribute{s} ({names}){at}; the largest:",
                "plain", m=summary.material_count, ies="y" if summary.material_count == 1 else "ies",
                k=len(summary.attributes), s="" if len(summary.attributes) == 1 else "s", names=names, at=at)


def across_policy_text(summary: AttributesSummary) -> Text:
    p = summary.params
    kinds = TASK_KINDS[summary.task]
    thresholds = ", ".join(f"{KIND_TITLES[k]} ≥ {v:g}" for k, v in p.materiality if k in kinds)
    references = "; ".join(f"{a}: {r}" for a, r in summary.references)
    return text("One family: a finding is significant after Benjamini–Hochberg over all {n} comparisons of all {k} "
                "attributes together (α = {a:g}), material ({t}) and about groups of at least {floor:,} rows; each "
                "group is compared with its attribute's reference ({refs}).", "note",
                n=sum(f.candidate.p_value is not None for f in summary.findings), k=len(summary.attributes),
                a=p.alpha, t=thresholds, floor=p.min_group_size, refs=references)


def across_unremarkable_text(summary: AttributesSummary) -> Text | None:
    kinds = summary.unremarkable_kinds()
    if not kinds:
        return None
    return text("Checked and unremarkable in every attribute (no material, significant gap for groups of {floor:,}+ "
                "rows): {kinds}.", "note", floor=summary.params.min_group_size,
                kinds=", ".join(KIND_TITLES[k] for k in kinds))


def failed_attribute_text(attribute: str, message: str) -> Text:
    return text("'{a}' could not be audited: {message}", "caveat", a=attribute, message=message)


def slice_finding_text(s: SliceFinding, level: str = "finding") -> Text:
    """A significant slice: its rows, its metric against the rest's, the difference with its interval, adjusted p."""
    ci = f", 95% CI [{s.ci[0]:+.3f}, {s.ci[1]:+.3f}]" if s.ci else ""
    return text("Slice **{slice}** ({n:,} rows): {metric} {v:.3f} vs {rest:.3f} for the rest of the data "
                "(difference {d:+.3f}{ci}; adjusted p {p}, {correction}).", level, slice=s.slice, n=int(round(s.n)),
                metric=s.metric, v=s.value, rest=s.rest, d=s.difference, ci=ci, p=fmt_p(s.p_adjusted),
                correction=s.correction)


def nothing_found_text(audit: FindingsAudit) -> Text:
    """One attribute's Summary in a line when it has no headline finding (Home's "Other attributes")."""
    at = f" at τ = {audit.threshold:.2f}" if spec_of(audit.task).thresholded else ""
    return text("{a}: nothing found (no material, significant disparity between groups of {floor:,}+ rows{at}).",
                "plain", a=audit.attribute, floor=audit.params.min_group_size, at=at)


def no_slice_text(metric: str = "false positive rate") -> Text:
    return text("Slices: none of up to two attributes' values combined differs from the rest in its {metric} after "
                "the correction (Benjamini–Yekutieli).", "plain", metric=metric)
