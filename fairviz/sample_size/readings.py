"""The sentences of sample-size significance ([3] ch. 4): a MATCH verdict in words a meeting understands, the
section's summary, what jaggedness, holes and smoothing show. Written once; the page, the HTML report and the
terminal render them. Names are data: they go into fields, never into a template (``fairviz.core.display.text``)."""
from __future__ import annotations

from fairviz.core.display import Bullets, Text, text
from fairviz.core.wording import fmt, fmt_p
from fairviz.sample_size.cps import CURVE_LIMIT
from fairviz.sample_size.holes import configuration_count
from fairviz.sample_size.results import (ENUMERATION_LIMIT, METRIC_LABELS, ErrorCurves, Jaggedness, MatchAudit,
                                         MatchResult)

FLAGGED_SHOWN = 10              # the flagged scores listed under the summary (smallest adjusted p first)


def verdict(result: MatchResult, alpha: float = 0.05, reference: str = "the reference") -> str:
    """Words a meeting understands: never a bare pass/fail."""
    label = METRIC_LABELS.get(result.metric, result.metric)
    if result.score is None:
        chance = "" if result.undefined_probability is None else (
            f" (a group of {result.n:,} drawn from {reference} would leave it undefined with probability "
            f"{result.undefined_probability:.3g})")
        return f"{label} is undefined here: {result.note or 'no value'}{chance}."
    if result.p_value is None:
        return f"{label} = {fmt(result.score)} cannot be tested: {result.note}."
    p = result.p_adjusted if result.p_adjusted is not None else result.p_value
    share = f"{100 * result.cdf:.1f}%" if result.cdf is not None else "—"
    if result.metric == "ofi":
        base = (f"OFI against {reference} = {fmt(result.score)} at n = {result.n:,}; redrawing both from {reference}'s "
                f"error pattern gives at most this in {share} of draws.")
    else:
        base = (f"{label} = {fmt(result.score)} at n = {result.n:,} vs {fmt(result.reference_score)} for {reference}; "
                f"{share} of same-size groups drawn from {reference} score at most this.")
    adjusted = f"adjusted p {fmt_p(p)}" if result.p_adjusted is not None else f"p {fmt_p(p)}"
    if p < alpha:
        return (f"{base} Unlikely to be sampling noise at n = {result.n:,}: {_direction(result)} than {reference} "
                f"({adjusted}).")
    return f"{base} Not distinguishable from sampling noise at n = {result.n:,} ({adjusted})."


def verdict_text(result: MatchResult, audit: MatchAudit) -> Text:
    """The verdict as a paragraph: the point of the view, a finding whether or not the score is beyond noise (a
    caveat is a limit on what the numbers mean, folded away on the page)."""
    return text("{words}", "finding", words=verdict(result, audit.params.alpha, audit.reference_label))


def tested(audit: MatchAudit) -> int:
    return sum(r.p_value is not None for r in audit.results)


def match_summary(audit: MatchAudit) -> Text:
    """How many group × metric scores MATCH flags, and what the map's colours mean."""
    n = tested(audit)
    return text("**{flagged} of {tested}** group × metric scores differ from {reference} beyond sampling noise "
                "(Benjamini–Hochberg adjusted p < {alpha:g}, {tested} tests). Purple: the group scores higher than "
                "same-size groups from the reference would; orange: lower; pale: within noise.", "finding",
                flagged=len(audit.significant()), tested=n, reference=audit.reference_label,
                alpha=audit.params.alpha)


def flagged_bullets(audit: MatchAudit, limit: int = FLAGGED_SHOWN) -> Bullets | None:
    """The flagged scores, smallest adjusted p first, one line each; None when nothing is flagged."""
    flagged = sorted(audit.significant(), key=lambda r: r.p_adjusted)[:limit]
    if not flagged:
        return None
    return Bullets(tuple(text("{group} · {label} = {score} at n = {n:,}: {direction} than {reference} (adjusted p "
                              "{p})", group=r.group, label=METRIC_LABELS.get(r.metric, r.metric), score=fmt(r.score),
                              n=r.n, direction=_direction(r), reference=audit.reference_label,
                              p=fmt_p(r.p_adjusted)) for r in flagged))


def _direction(result: MatchResult) -> str:
    return "higher" if result.p_upper is not None and result.p_upper <= result.p_lower else "lower"


def result_details(result: MatchResult) -> Text:
    """How one MATCH result was computed: the percentile's meaning, the method, P(undefined), the normal error."""
    undefined = "—" if result.undefined_probability is None else f"{result.undefined_probability:.3g}"
    bound = (f". Berry–Esseen bound on the normal approximation's error: {result.error_bound:.3g}"
             if result.error_bound else "")
    return text("Percentile: the share of same-size groups from the reference scoring at most the observed value. "
                "Method: {method}. P(undefined at n = {n:,}) = {undefined}{bound}.", "note", method=result.method,
                n=result.n, undefined=undefined, bound=bound)


def is_reference(group: str) -> Text:
    return text("'{group}' is the reference group itself.", "finding", group=group)


OFI_NULL_NOTE = ("OFI against the reference redraws both the group and the reference from the reference's cells at "
                 "their own sizes (Monte Carlo), so a small reference's own noise counts too; the null is centred "
                 "on 0.")
METHODS_NOTE = ("Exact methods: binomial CDF (ACC, prevalence, PPR); the trinomial sum for 𝓑 ([3]'s normal formula "
                "Eq. 4.29 is dimensionally wrong and is replaced by Φ((k + ½ − nμ)/√(nσ²))); the joint-ratio sum for "
                "TPR, FPR, PPV, … (Theorem 4.9); enumeration of every matrix up to n = "
                f"{ENUMERATION_LIMIT} for MCC, F1 and PT, seeded Monte Carlo above. p-values are two-sided, "
                "2·min(P(S ≤ s), P(S ≥ s)); [3] gives only the percentile.")
HOLES_NOTE = ("Binomial metrics and 𝓑 are defined for every matrix; each joint-ratio metric has n + 1 holes, MCC 4n "
              "and F1 one. A 0/0 is indeterminate (Theorem 4.4: 1, 0 and ½ are all defensible), so fairviz shows "
              "'undefined' rather than picking one. Theorem 4.3's upper bound for the prevalence threshold fails "
              "from n = 4 on (17 holes > 10.3), so the enumerated counts are shown next to it. P(undefined) uses "
              "the reference's cell probabilities (PT: no closed form, blank).")


def cps_note(reference_label: str) -> Text:
    return text("CPS (Algorithm 1): α = CM_group + λ·CM_reference/|CM_reference|, then rescale α to the group's n. "
                "Reference: {reference}. Big groups barely move; small groups move towards the reference and lose "
                "their holes. Smoothed counts are real-valued.", "note", reference=reference_label)


def jaggedness_reading(j: Jaggedness, group: str) -> Text:
    """How wide a metric's band is over the smallest and the largest subsamples, and how often it is undefined."""
    label = METRIC_LABELS[j.metric]
    width = j.quantiles[90][0] - j.quantiles[10][0]
    last_width = j.quantiles[90][-1] - j.quantiles[10][-1]
    reading = text("**Reading.** Random subsamples of {small} people from '{group}' give {label} anywhere in "
                   "[{low}, {high}] (middle 80%, width {width}); at {large} people the band is {last} wide. The steps "
                   "in the bands are the jaggedness of small samples: only a few confusion matrices are possible, so "
                   "the metric jumps between few values.", small=int(j.sizes[0]), group=group, label=label,
                   low=fmt(j.quantiles[10][0]), high=fmt(j.quantiles[90][0]), width=fmt(width),
                   large=int(j.sizes[-1]), last=fmt(last_width))
    if j.undefined_share.max() > 0:
        reading = Text(reading.spans + text(" {label} is undefined in {share:.0f}% of subsamples of {small} — a hole, "
                                            "not a zero.", label=label, share=100 * j.undefined_share[0],
                                            small=int(j.sizes[0])).spans, reading.level)
    return reading


def too_small_to_subsample(group: str, n: int) -> Text:
    return text("'{group}' has only {n} rows: too few to subsample.", "finding", group=group, n=n)


def error_curves_reading(curves: ErrorCurves, group: str, lam: float, at_size: int = 10) -> Text:
    """Raw against CPS at one sample size, from the exact expected-error curves."""
    at = list(curves.sizes).index(at_size)
    raw, smooth = curves.mse["raw"][at], curves.mse[f"CPS λ = {lam:g}"][at]
    return text("**Reading.** For samples of {size} people drawn from '{group}', the raw {label} misses the group's "
                "value {target} by a mean squared error of {raw} (defined in {defined:.0f}% of samples); CPS with "
                "λ = {lam:g} gives {smooth}. Exact: every one of the up to {matrices:,} confusion matrices of each "
                "size is weighted by its multinomial probability — no simulation. ε = 1 is the usual add-one "
                "smoothing; ε = 1e-10 ([3]'s 'bashful' smoothing) keeps the raw values but fills holes with ½.",
                size=at_size, group=group, label=METRIC_LABELS[curves.metric], target=fmt(float(curves.target)),
                raw=fmt(raw, 4), defined=100 * curves.defined_mass["raw"][at], lam=lam, smooth=fmt(smooth, 4),
                matrices=configuration_count(CURVE_LIMIT))


def no_target(group: str, metric: str) -> Text:
    return text("{label} is undefined for the whole of '{group}', so there is no target to miss.", "finding",
                label=METRIC_LABELS[metric], group=group)


def label_statement(benefit: str, threshold: float, label: str, positive=1) -> Text:
    """How the Sample-size page's metrics are oriented: on the label, 𝓑 and OFI on the benefit."""
    positive = 1 if positive is None else positive
    benefit_words = "score < {threshold:.2f}" if benefit == "negative" else "score ≥ {threshold:.2f}"
    return text("Every metric is on the label ({label} = {positive} positive, score ≥ {threshold:.2f} predicted "
                "positive), as on every page; the marginal benefit 𝓑 and OFI are taken on the benefit, "
                + benefit_words + ".", "note", threshold=threshold, label=label, positive=positive)
