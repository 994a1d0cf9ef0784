"""What regression and multiclass calibration say, in words (the sentences of ``regression`` and ``multiclass``).

Each sentence says what a number means and how sure it is: its interval, its p-value and the group's size. A group
under the size floor (``Focus.min_group_size``, 100 rows) never headlines and is marked small where it is named."""
from __future__ import annotations

import math

from fairviz.calibration.multiclass import EceGap, MulticlassCalibration, MulticlassGroup
from fairviz.calibration.regression import Coverage, RegressionCalibration, RegressionGroup
from fairviz.core.display import Text, join, text
from fairviz.core.focus import Focus
from fairviz.core.wording import fmt, fmt_interval, fmt_p, significance_words


def _size(n: int, focus: Focus) -> str:
    return f"n = {n:,}" if n >= focus.min_group_size else f"n = {n:,}, small: read with care"


# ------------------------------------------------------------------------------------------------ regression

def mean_gap_words(g: RegressionGroup, target: str) -> Text:
    """The average gap between target and prediction, in the target's units."""
    gap = g.mean_y - g.mean_pred
    direction = "under-predicts" if gap > 0 else "over-predicts"
    return text("on average the model {direction} {target} by {gap:.4g} (mean {target} {y:.4g}, mean prediction "
                "{x:.4g})", direction=direction, target=target, gap=abs(gap), y=g.mean_y, x=g.mean_pred)


def slope_words(g: RegressionGroup, alpha: float) -> str:
    """What a Mincer–Zarnowitz slope other than 1 means."""
    slope = g.mz.slope
    if not slope.p < alpha:
        return "the slope is indistinguishable from 1: predictions spread as the target does"
    if slope.estimate < 1:
        return ("the slope is below 1: predictions are too spread out, high ones too high and low ones too low "
                "(E[y | ŷ] changes less than ŷ)")
    return ("the slope is above 1: predictions are too compressed, high ones too low and low ones too high "
            "(E[y | ŷ] changes more than ŷ)")


def regression_group_verdict(g: RegressionGroup, target: str, alpha: float, focus: Focus = Focus()) -> Text:
    """One group's Mincer–Zarnowitz fit in a sentence: the coefficients with intervals, the joint test, its reading."""
    if not g.mz.ok:
        return text("*{name}* ({size}): not tested, {status}.", name=g.name, size=_size(g.n, focus),
                    status=g.mz.status)
    a, b, joint = g.mz.intercept, g.mz.slope, g.mz.joint
    head = text("**{name}** ({size}): E[{target} | ŷ] ≈ {a:+.4g} + {b:.3f}·ŷ (intercept 95% CI [{a_lo:.4g}, "
                "{a_hi:.4g}], slope 95% CI [{b_lo:.3f}, {b_hi:.3f}]); intercept 0 and slope 1 jointly: "
                "F(2, {df:,.0f}) = {f:.2f}, p {p}; after Benjamini–Hochberg across groups, {bh}. ", "finding",
                name=g.name, size=_size(g.n, focus), target=target, a=a.estimate, b=b.estimate, a_lo=a.low,
                a_hi=a.high, b_lo=b.low, b_hi=b.high, df=joint.df_den, f=joint.statistic, p=fmt_p(joint.p),
                bh=significance_words(g.joint_p_bh, alpha))
    if not joint.p < alpha:
        return join(head, "Calibrated in the mean as far as these rows tell; ", mean_gap_words(g, target), ".")
    return join(head, "Miscalibrated: ", mean_gap_words(g, target), "; ", slope_words(g, alpha), ".")


def regression_difference(result: RegressionCalibration) -> Text:
    """Do the groups share one calibration line? The nested F tests, the headline answer of the section."""
    line, slope = result.same_line, result.same_slope
    if line is None:
        return text("**Does calibration in the mean differ by group?** The groups cannot be compared: fewer than two "
                    "groups can be tested.", "finding")
    answer = ("Calibration in the mean differs between groups" if line.p < result.params.alpha
              else "No evidence that calibration in the mean differs between groups")
    return text("**Does calibration in the mean differ by group?** **{answer}**: one intercept and slope for all "
                "groups against one per group, F({d1}, {d2:,.0f}) = {f:.2f}, p {p}; one shared slope (group "
                "intercepts), F({s1}, {d2:,.0f}) = {fs:.2f}, p {ps}. Groups compared: {names}. The F tests assume the "
                "same error variance in every group.", "finding", answer=answer, d1=line.df_num, d2=line.df_den,
                f=line.statistic, p=fmt_p(line.p), s1=slope.df_num, fs=slope.statistic, ps=fmt_p(slope.p),
                names=", ".join(result.tested))


def worst_regression_group(result: RegressionCalibration, focus: Focus = Focus()) -> RegressionGroup | None:
    """The group furthest from calibration in the mean (largest joint F) among those of at least the size floor."""
    large = [g for g in result.groups if g.mz.ok and g.n >= focus.min_group_size]
    return max(large, key=lambda g: g.mz.joint.statistic) if large else None


def coverage_words(g: RegressionGroup, c: Coverage, alpha: float, focus: Focus = Focus()) -> Text:
    """One group's coverage of one central interval, with its interval and the binomial test."""
    if c.n == 0:
        return text("*{name}*: no rows.", name=g.name)
    verdict = ("as nominal" if not c.p < alpha
               else "too narrow: intervals miss more often than stated" if c.rate < c.nominal
               else "too wide: intervals miss less often than stated")
    return text("*{name}* ({size}): the {nominal:.0%} intervals hold {rate:.1%} of rows (95% CI {lo:.1%}–{hi:.1%}; "
                "p {p} against {nominal:.0%}): {verdict}.", name=g.name, size=_size(g.n, focus), nominal=c.nominal,
                rate=c.rate, lo=c.ci_low, hi=c.ci_high, p=fmt_p(c.p), verdict=verdict)


def coverage_difference(nominal: float, p: float, alpha: float) -> Text:
    if not math.isfinite(p):
        return text("Equal coverage of the {nominal:.0%} intervals across groups cannot be tested.", "note",
                    nominal=nominal)
    return text("Equal coverage of the {nominal:.0%} intervals in every group (χ² test of the groups × inside/outside "
                "table): {words}.", "finding" if p < alpha else "plain", nominal=nominal,
                words=significance_words(p, alpha))


# ------------------------------------------------------------------------------------------------ multiclass

def confidence_words(g: MulticlassGroup) -> str:
    gap = g.mean_confidence - g.accuracy
    if gap > 0:
        return f"over-confident: mean confidence {g.mean_confidence:.3f} against accuracy {g.accuracy:.3f}"
    return f"under-confident: mean confidence {g.mean_confidence:.3f} against accuracy {g.accuracy:.3f}"


def multiclass_group_verdict(g: MulticlassGroup, alpha: float, focus: Focus = Focus()) -> Text:
    """One group's top-label calibration in a sentence, and the classes whose own calibration fails."""
    if g.top_test is None:
        return text("*{name}* ({size}): top-label ECE {ece} (95% CI {ci}); not tested, {status}.",
                    name=g.name, size=_size(g.n, focus), ece=fmt(g.top_ece), ci=fmt_interval(g.top_ece_ci),
                    status=g.status or "too few rows in the bins")
    head = text("**{name}** ({size}): top-label ECE {ece} (95% CI {ci}), {conf}; calibration test χ²({df}) = "
                "{stat:.1f}, p {p}; after Benjamini–Hochberg across groups, miscalibration is {words}.", "finding",
                name=g.name, size=_size(g.n, focus), ece=fmt(g.top_ece), ci=fmt_interval(g.top_ece_ci),
                conf=confidence_words(g), df=g.top_test.df, stat=g.top_test.statistic, p=fmt_p(g.top_test.p),
                words=significance_words(g.top_p_bh, alpha))
    if not g.classes:
        return head
    flagged = [c.name for c in g.classes if c.p_bh < alpha]
    return join(head, text(" Class-wise ECE {ece} (95% CI {ci}); classes miscalibrated on their own "
                           "(one-vs-rest, Benjamini–Hochberg across groups × classes): {names}.",
                           ece=fmt(g.classwise_ece), ci=fmt_interval(g.classwise_ece_ci),
                           names=", ".join(flagged) or "none"))


def flagged_groups(result: MulticlassCalibration, focus: Focus = Focus()) -> Text:
    """Which groups fail the top-label calibration test after Benjamini–Hochberg: those of at least the size floor
    headline, smaller ones are named apart."""
    alpha = result.params.alpha
    flagged = [g for g in result.groups if g.top_p_bh < alpha]
    large = [g.name for g in flagged if g.n >= focus.min_group_size]
    small = [g.name for g in flagged if g.n < focus.min_group_size]
    body = text("**Is any group miscalibrated?** Top-label calibration fails, after Benjamini–Hochberg across "
                "groups, for: **{names}**.", "finding", names=", ".join(large) or "no group of {:,}+ rows".format(
                    focus.min_group_size))
    if not small:
        return body
    return join(body, text(" Also flagged, with under {floor:,} rows each (read with care): {names}.",
                           floor=focus.min_group_size, names=", ".join(small)))


def worst_multiclass_group(result: MulticlassCalibration, focus: Focus = Focus()) -> MulticlassGroup | None:
    large = [g for g in result.groups if g.n >= focus.min_group_size]
    return max(large, key=lambda g: g.top_ece) if large else None


def gap_words(d: EceGap, result: MulticlassCalibration, focus: Focus = Focus()) -> Text:
    """A group's ECE against the reference's, and whether the interval of the gap excludes 0."""
    g = result.group(d.group)
    finite = math.isfinite(d.ci.low) and math.isfinite(d.ci.high)
    words = ("no interval" if not finite else "a real gap (interval excludes 0)" if d.ci.low > 0 or d.ci.high < 0
             else "could be noise (interval includes 0)")
    return text("*{group}* ({size}) against the reference *{reference}*: {measure} ECE gap {gap:+.3f} (95% CI "
                "{ci}; {words}).", group=d.group, size=_size(g.n, focus), reference=d.reference, measure=d.measure,
                gap=d.gap, ci=fmt_interval(d.ci), words=words)
