"""The sentences of a model comparison: which differences between the two models are real (after Benjamini–Hochberg)
and what they mean, e.g. "logistic regression narrows the FPR gap for Female adults against Male: 0.06 → 0.04, Δ
−0.02, 95% CI [−0.03, −0.01]". A group under the size floor is in the tables but never headlines. Names are data:
they go into fields, never into the template."""
from __future__ import annotations

import math
from dataclasses import replace

from fairviz.compare.paired import LOWER_IS_BETTER
from fairviz.compare.results import PARITY_VALUE, Difference, ModelComparison
from fairviz.core.display import Text, text
from fairviz.core.stats import fewest_permutations, permutations_can_reject
from fairviz.core.wording import fmt_p

INTRO = text("Two models on the same rows: every difference below is **the second model minus the first**, with a "
             "*paired* interval (one resample of rows feeds both models, so what the rows share cancels) and a paired "
             "test (the two models' scores swapped within rows; DeLong's test for AUROC), adjusted by "
             "Benjamini–Hochberg over the whole family.", "plain")


GAP_WORDS = {"ofi": "OFI gap", "fpr_gap": "FPR gap", "f_dist": "residual-distribution distance F_dist"}


def signed(value: float) -> str:
    return f"{value:+.3f}".replace("-", "−")


def plain(value: float) -> str:
    return f"{value:.3f}".replace("-", "−")


def interval(d: Difference) -> str:
    if not (math.isfinite(d.ci.low) and math.isfinite(d.ci.high)):
        return "undefined"
    return f"[{plain(d.ci.low)}, {plain(d.ci.high)}]"


def headline_candidates(result: ModelComparison) -> list[Difference]:
    """The differences a reading may headline: beyond noise after BH, with every group involved at least
    ``min_group_size`` rows; the surest first, then the largest relative change."""
    floor, sizes, alpha = result.params.min_group_size, result.group_sizes, result.params.alpha

    def large_enough(d: Difference) -> bool:
        return all(sizes.get(g, floor) >= floor for g in (d.group, d.reference) if g is not None)

    found = [d for d in result.differences if math.isfinite(d.p_adjusted) and d.p_adjusted < alpha
             and math.isfinite(d.difference) and large_enough(d)]
    return sorted(found, key=lambda d: (d.p_adjusted, -abs(d.difference) / max(abs(d.value_a), 1e-9)))


def headlines(result: ModelComparison) -> list[Difference]:
    """What the readings headline, taken in turn from three kinds so that no one metric crowds the others out: a
    gap between a group and the reference (fairness first), the models on every row, a group's own metric."""
    found = headline_candidates(result)
    kinds = [[d for d in found if d.reference is not None], [d for d in found if d.group is None],
             [d for d in found if d.group is not None and d.reference is None]]
    chosen = []
    while len(chosen) < result.params.max_readings and any(kinds):
        for kind in kinds:
            if kind and len(chosen) < result.params.max_readings:
                chosen.append(kind.pop(0))
    return chosen


def readings(result: ModelComparison, words: dict | None = None) -> list[Text]:
    """Up to ``max_readings`` findings, then what the family and the size floor leave out."""
    words = dict(words or {})
    chosen = headlines(result)
    out = [reading(result, d, words) for d in chosen]
    if not chosen:
        out.append(text("No difference between **{b}** and **{a}** is beyond sampling noise after Benjamini–Hochberg "
                        "over {tests} tests at α = {alpha:g}.", "finding", a=result.model_a, b=result.model_b,
                        tests=len(result.differences), alpha=result.params.alpha))
    if not permutations_can_reject(result.params.permutations, result.params.alpha):
        out.append(text("Only AUROC (DeLong's test) is tested: {b:,} paired permutation{s} cannot reach α = {alpha:g} "
                        "(the smallest p-value is 1/(permutations + 1); --resamples {need} or more can), so every "
                        "other difference is a point estimate without a test.", "caveat",
                        b=result.params.permutations, s="" if result.params.permutations == 1 else "s",
                        alpha=result.params.alpha, need=fewest_permutations(result.params.alpha)))
    small = result.small_groups()
    if small:
        out.append(text("Groups under {floor} rows are in the tables but never headline a reading: {groups}.", "note",
                        floor=result.params.min_group_size, groups=", ".join(small)))
    return out


def reading(result: ModelComparison, d: Difference, words: dict) -> Text:
    unit = words.get("unit") or "rows"
    numbers = dict(a=plain(d.value_a), b=plain(d.value_b), delta=signed(d.difference), ci=interval(d),
                   percent=round(100 * d.ci.level), p=fmt_p(d.p_adjusted), model=result.model_b, group=d.group,
                   reference=d.reference, unit=unit, title=d.title)
    tail = ": {a} → {b}, Δ {delta}, {percent}% CI {ci} (adjusted p {p})."
    if d.reference is not None:
        change = gap_verb(d) + ("" if d.metric == "di" else " the " + GAP_WORDS[d.metric])
        sentence = "**{model}** " + change + " for **{group}** {unit} against {reference}"
        return text(sentence + tail + "{meaning}", "finding", **numbers,
                    meaning=rate_words(d.metric, result.benefit, words))
    lower = d.value_b < d.value_a
    where = " on every row" if d.group is None else " for **{group}** {unit}"
    sentence = "**{model}** has a " + ("lower" if lower else "higher") + " {title}" + where + " than {other}"
    if d.metric in LOWER_IS_BETTER:     # knee concentration is neither: the calibration regime says what it should be
        sentence += " (" + ("better" if lower == LOWER_IS_BETTER[d.metric] else "worse") + ")"
    return text(sentence + tail, "finding", **numbers, other=result.model_a)


def gap_verb(d: Difference) -> str:
    """How model b changes a pair's gap from parity (0; DI: 1): closes (to a tenth or less), halves (to half or
    less), narrows, widens, doubles or reverses it."""
    parity = PARITY_VALUE[d.metric]
    gap_a, gap_b = d.value_a - parity, d.value_b - parity
    if d.metric == "di":
        return "brings DI closer to 1" if abs(gap_b) < abs(gap_a) else "moves DI further from 1"
    if abs(gap_b) <= 0.1 * abs(gap_a):
        return "closes"
    if gap_a * gap_b < 0:
        return "reverses"
    if abs(gap_b) <= 0.5 * abs(gap_a):
        return "halves"
    if abs(gap_b) < abs(gap_a):
        return "narrows"
    return "doubles" if abs(gap_b) >= 2 * abs(gap_a) else "widens"


def rate_words(metric: str, benefit: str, words: dict) -> str:
    """What the FPR gap counts, in the sample's own words (on the label, whichever prediction is the benefit)."""
    if metric != "fpr_gap" or not words.get("unit"):
        return ""
    label, decision = "label_negative", "predicted_positive"
    if not (words.get(label) and words.get(decision)):
        return ""
    return f" The FPR counts {words['unit']} {words[label]} yet {words[decision]}."


# ------------------------------------------------------------------------------------------------ paired errors

ERRORS_INTRO = text("Two regression models on the same rows: every difference below is **the second model minus "
                    "the first**, a mean of per-row paired differences with its t interval (the paired t-test; "
                    "a gap's change compares two groups' paired differences by Welch's t-test), adjusted by "
                    "Benjamini–Hochberg over the whole family.", "plain")


CLASS_ERRORS_INTRO = text("Two models of classes on the same rows: every difference below is **the second model minus "
                          "the first**, a mean of per-row paired differences of errors (1 where the predicted class "
                          "is not the label) with its t interval (the paired t-test; a gap's change compares two "
                          "groups' paired differences by Welch's t-test), adjusted by Benjamini–Hochberg over the "
                          "whole family.", "plain")


def number(value: float) -> str:
    """Three decimals for values up to 1, two (with thousands separators) for a target's values of any size."""
    if not math.isfinite(value):
        return "undefined"
    return (f"{value:.3f}" if abs(value) <= 1 else f"{value:,.2f}").replace("-", "−")


def error_readings(result) -> list[Text]:
    """Up to ``max_readings`` findings of an ``ErrorComparison``, then the size floor's note."""
    chosen = headlines(result)
    out = [error_reading(result, d) for d in chosen]
    if not chosen:
        out.append(text("No difference between **{b}** and **{a}** is beyond sampling noise after Benjamini–Hochberg "
                        "over {tests} tests at α = {alpha:g}.", "finding", a=result.model_a, b=result.model_b,
                        tests=len(result.differences), alpha=result.params.alpha))
    small = [g for g, n in result.group_sizes.items() if n < result.params.min_group_size]
    if small:
        out.append(text("Groups under {floor} rows are in the tables but never headline a reading: {groups}.", "note",
                        floor=result.params.min_group_size, groups=", ".join(small)))
    return out


def error_reading(result, d: Difference) -> Text:
    units = f" {result.units}" if result.units else ""
    ci = (f"[{number(d.ci.low)}, {number(d.ci.high)}]" if math.isfinite(d.ci.low) and math.isfinite(d.ci.high)
          else "undefined")
    numbers = dict(a=number(d.value_a) + units, b=number(d.value_b) + units,
                   delta=("+" if d.difference > 0 else "") + number(d.difference), ci=ci,
                   percent=round(100 * d.ci.level), p=fmt_p(d.p_adjusted), model=result.model_b, group=d.group,
                   reference=d.reference, title=d.title, other=result.model_a)
    tail = ": {a} → {b}, Δ {delta}, {percent}% CI {ci} (adjusted p {p})."
    if d.reference is not None:
        verb = gap_verb(replace(d, metric="fpr_gap"))        # a gap of errors closes towards 0 as a rate gap does
        return text("**{model}** " + verb + " the {title} of **{group}** against {reference}" + tail, "finding",
                    **numbers)
    where = " on every row" if d.group is None else " for **{group}**"
    if d.metric == "bias":
        closer = abs(d.value_b) < abs(d.value_a)
        sentence = "**{model}**'s {title}" + where + " is " + ("closer to" if closer else "further from") + " 0 than {other}'s"
    else:
        lower = d.value_b < d.value_a
        sentence = ("**{model}** has a " + ("lower" if lower else "higher") + " {title}" + where + " than {other} ("
                    + ("better" if lower else "worse") + ")")
    return text(sentence + tail, "finding", **numbers)
