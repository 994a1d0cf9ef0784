"""The sentences of group parity ([3] ch. 3): the reading of a pair (OFI with DI), the benefit orientation, what a
metric means. Written once; the page, the HTML report and the terminal render them. Names are data: they go into
fields, never into the template (``fairviz.core.display.text``)."""
from __future__ import annotations

from fairviz.core.counts import ConfusionCounts
from fairviz.core.display import Text, text
from fairviz.core.wording import fmt, fmt_p, significance_words
from fairviz.parity.di import four_fifths
from fairviz.parity.ofi import classify, marginal_benefit, ofi_test
from fairviz.parity.pair_metrics import PAIR_METRICS, metric_label, pairwise
from fairviz.parity.results import PairReading, ParityAudit, ParityParams

# how a pair's reading reads: always the point of the view, a finding (a caveat is a limit on what numbers mean,
# folded away on the page; a model at fault is what the presenter came to show)
READING_LEVEL: dict[str, str] = {}
RULE_WORDS = {"for i": "bias for i", "for j": "bias for j", "none": "no bias", "undefined": "undefined"}


def read_pair(group_i: str, group_j: str, cm_i: ConfusionCounts, cm_j: ConfusionCounts,
              params: ParityParams = ParityParams(), values: dict | None = None,
              reasons: dict | None = None) -> PairReading:
    if values is None:
        matrices = {k: pairwise(k, (group_i, group_j), [cm_i, cm_j], params.di_variant, params.di_zero_convention,
                                params.benefit) for k in PAIR_METRICS}
        values = {k: m.value(group_i, group_j) for k, m in matrices.items()}
        reasons = {k: m.reason(group_i, group_j) for k, m in matrices.items()}
    reasons = reasons or {}
    test = ofi_test(cm_i, cm_j)
    o, d, dp = values["ofi"], values["di"], values["dppl"]
    b_i, b_j = marginal_benefit(cm_i), marginal_benefit(cm_j)
    prev_gap = cm_i.positives / cm_i.n - cm_j.positives / cm_j.n
    rule = four_fifths(d)
    side, other = (group_i, group_j) if o > 0 else (group_j, group_i)
    signif = significance_words(test.p_value, params.alpha)
    kind = classify(o, test.p_value, rule, params.ofi_tolerance, params.alpha)
    headline = {
        "algorithmic": f"Algorithmic bias in favour of {side} (OFI = {o:+.3f})",
        "possible": f"OFI leans towards {side} ({o:+.3f}), but the groups are too small to tell",
        "small": f"A real but small OFI ({o:+.3f}, within ±{params.ofi_tolerance:g})",
        "systemic": "No algorithmic bias, but a disparity outside the model (OFI ≈ 0, DI ≠ 1)",
        "none": "No bias: OFI ≈ 0 and DI within the four-fifths band"}[kind]
    parts = [
        f"{_benefit_words(group_i, b_i)}; {_benefit_words(group_j, b_j)}. OFI = 𝓑_i − 𝓑_j = {o:+.3f} "
        f"(95% CI [{test.ci[0]:+.3f}, {test.ci[1]:+.3f}]), {signif}.",
        f"The gap in benefit rates, DPPL = {fmt(dp)}, splits into {prev_gap:+.3f} from different base rates "
        f"(outside the model) and {o:+.3f} from the model (OFI = DPPL − ΔPrev).",
    ]
    if d is None:
        parts.append(f"DI is undefined: {reasons.get('di', '')}.")
    else:
        parts.append(f"DI = {d:.3f}: " + {
            "for i": f"above 5/4, so the four-fifths rule flags bias for {group_i}.",
            "for j": f"below 4/5, so the four-fifths rule flags bias for {group_j}.",
            "none": "inside the four-fifths band [0.8, 1.25]."}[rule])
    if kind == "algorithmic":
        parts.append(f"OFI ≠ 0 means the classifier itself is at fault: relative to the labels it favours {side} "
                     f"over {other}.")
    elif kind == "systemic":
        parts.append("With OFI ≈ 0 the model treats both groups as their labels warrant; the unequal benefit rates "
                     "come from different base rates — a systemic or label disparity, which may call for reparative "
                     "measures rather than a model fix.")
    elif kind == "possible":
        parts.append(f"|OFI| exceeds the ±{params.ofi_tolerance:g} tolerance, but at these group sizes "
                     f"(n = {cm_i.n:,} and {cm_j.n:,}) sampling noise could produce it; see Sample-size significance.")
    elif kind == "small":
        parts.append(f"The difference is statistically clear (p {fmt_p(test.p_value)}) but smaller than the "
                     f"±{params.ofi_tolerance:g} tolerance set for a meaningful OFI.")
    return PairReading(group_i, group_j, cm_i, cm_j, dict(values), dict(reasons or {}), b_i, b_j, prev_gap, test,
                       rule, kind, headline, " ".join(parts))


def read_audit_pair(audit: ParityAudit, i: str, j: str) -> PairReading:
    """The reading of the pair (i, j) of an audit, from its matrices (the sentences build on the results, never the
    other way round)."""
    return read_pair(i, j, audit.group(i).counts, audit.group(j).counts, audit.params, audit.values(i, j),
                     audit.reasons(i, j))


def _benefit_words(group: str, b: float) -> str:
    if abs(b) < 5e-4:
        return f"{group} get about the benefit their labels warrant (𝓑 = {b:+.3f})"
    return (f"{group} get {abs(100 * b):.1f} percentage points {'more' if b > 0 else 'less'} benefit than their "
            f"labels warrant (𝓑 = {b:+.3f})")


def reading_text(reading: PairReading) -> Text:
    """The pair's headline in bold, then its reading."""
    return text("**{headline}.** {body}", READING_LEVEL.get(reading.kind, "finding"), headline=reading.headline,
                body=reading.text)


def benefit_statement(benefit: str, threshold: float, label: str, positive=1) -> Text:
    """Which prediction is the benefit and which label value says a person deserved it (the label's own values)."""
    positive = 1 if positive is None else positive
    if benefit == "negative":
        return text("Benefit = score < {threshold:.2f}; {label} ≠ {positive} means the person deserved it "
                    "(positive class after the flip). Metrics marked 'on the benefit' are taken in this flipped "
                    "orientation; TPR, FPR, FNR, PPV and the FPR, FNR and selection-rate gaps are on the label "
                    "({label} = {positive} positive, score ≥ {threshold:.2f} predicted positive), as on every page.",
                    "note", threshold=threshold, label=label, positive=positive)
    return text("Benefit = score ≥ {threshold:.2f}; {label} = {positive} means the person deserved it.", "note",
                threshold=threshold, label=label, positive=positive)


def metric_about(metric: str, benefit: str = "positive") -> Text:
    """What a heatmap's metric is and how its colours read (its label says when it is taken on the benefit)."""
    info = PAIR_METRICS[metric]
    return text("**{label}** = {formula}. {about} Colour: purple favours the row group, orange the column group (TE, "
                "DCA, DCR and the PPV gap are coloured by their negated score so colours agree); grey cells are "
                "undefined — hover for why. The framed cell is the pair read below.", "note",
                label=metric_label(metric, benefit), formula=info.formula, about=info.about)


def ofi_test_words(reading: PairReading) -> Text:
    """The OFI test's interval and p-value, and the four-fifths verdict on DI."""
    low, high = reading.test.ci
    return text("OFI 95% CI [{low:+.3f}, {high:+.3f}] (Wald z-test, p {p}); four-fifths rule on DI: "
                "{rule}.", "note", low=low, high=high, p=fmt_p(reading.test.p_value),
                rule=RULE_WORDS[reading.di_rule])


def undefined_words(metric: str, reason: str) -> Text:
    return text("{label} is undefined here: {reason}.", "note", label=PAIR_METRICS[metric].label, reason=reason)


def matrix_title(name: str, counts: ConfusionCounts) -> Text:
    return text("*{name}* (n = {n:,}), marginal benefit 𝓑 = {b:+.3f}", name=name, n=counts.n,
                b=(counts.fp - counts.fn) / counts.n)


PAIRS_NOTE = ("One row per pair (i before j in group-size order); every signed metric is 'i minus j' (DI: i over j). "
              "Empty cells are undefined (hover the heatmap for why). Reading: algorithmic = |OFI| beyond the "
              "tolerance and beyond noise; possible = beyond the tolerance but within noise; small = real but within "
              "the tolerance; systemic = OFI ≈ 0 while DI is outside the four-fifths band; none.")
GROUPS_NOTE = ("Counts are in the benefit orientation (TP = deserved and got the benefit, FP = got it without "
               "deserving it, FN = deserved it and was denied). TPR, FPR, FNR, PPV and accuracy are on the label "
               "(Y = 1 as the data defines it, predicted positive = score ≥ τ), as on every other page. Empty rates "
               "are undefined (a zero denominator), not 0. 𝓑 > 0: the group gets more benefit than its labels "
               "warrant; 𝓑 < 0: less.")
