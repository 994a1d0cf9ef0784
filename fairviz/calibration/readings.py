"""What the calibration results say, in words: the one place each sentence of the concept is written (probability
calibration; calibration in the mean; top-label and class-wise calibration). A group under the size floor
(``Focus.min_group_size``) never headlines and is marked small where it is named.

Every reading is a ``fairviz.core.display.Text``: the marks (bold, italic) come from the templates here, group and
feature names enter as fields, so a name such as ``**x**`` shows as typed in the app, the HTML report and the
terminal alike.
"""
from __future__ import annotations

import math

import numpy as np

from fairviz.calibration.feature_residuals import FeatureResiduals, ResidualModel
from fairviz.calibration.interval_coverage import Coverage
from fairviz.calibration.mincer_zarnowitz import RegressionCalibration, RegressionGroup
from fairviz.calibration.recalibration import RecalibrationResult
from fairviz.calibration.results import CalibrationAudit, GroupCalibration, LinearBiasTest
from fairviz.calibration.top_label_ece import EceGap, MulticlassCalibration, MulticlassGroup
from fairviz.core.display import Text, join, text
from fairviz.core.focus import Focus
from fairviz.core.wording import fmt, fmt_interval, fmt_p, significance_words


def slope_words(test: LinearBiasTest, alpha: float = 0.05) -> Text:
    """What the slope says (calibration slope = 1 + β₁; [2] §4.5); a slope indistinguishable from 0 says so."""
    if not test.ok:
        return text("{status}", status=test.status)
    b1, p = test.slope.estimate, test.slope.p
    head = text("slope β₁ = {b1:+.3f} (calibration slope {cs:.2f}, p {p})", b1=b1, cs=1 + b1, p=fmt_p(p))
    if not p < alpha:
        return join(head, ": no evidence of over- or under-confidence")
    if b1 > 0:
        return join(head, " > 0: predictions are under-confident, too close to the average; true risks are more "
                          "spread out than the scores")
    return join(head, " < 0: predictions are over-confident, too extreme; high scores are too high and low ones "
                      "too low")


def in_the_large_words(test: LinearBiasTest, alpha: float = 0.05) -> Text:
    """The average log-odds gap (calibration-in-the-large, [2] §4.5) and which way it points."""
    c = test.in_the_large
    if c is None:
        return text("")
    head = text("calibration-in-the-large {b0:+.3f} on the log-odds scale, p {p}", b0=c.estimate, p=fmt_p(c.p))
    if not c.p < alpha:
        return join("on average the scores match the observed rate (", head, ")")
    direction = "under-predicts" if c.estimate > 0 else "over-predicts"
    return join(f"on average the model {direction} the risk (", head, ")")


def group_reading(g: GroupCalibration, alpha: float = 0.05) -> Text:
    """One group's calibration test in a line (beside the reliability diagram)."""
    if not g.linear.ok:
        return text("*{name}*: {status}.", name=g.name, status=g.linear.status)
    return join(text("*{name}*: ", name=g.name), slope_words(g.linear, alpha), "; ",
                in_the_large_words(g.linear, alpha), ".")


def group_verdict(g: GroupCalibration, alpha: float = 0.05) -> Text:
    """A tested group's reading with its Benjamini–Hochberg-adjusted joint test."""
    return join(text("**{name}:** ", "finding", name=g.name), slope_words(g.linear, alpha), "; ",
                in_the_large_words(g.linear, alpha), ". ",
                text("Miscalibration is {words} (BH-adjusted).", words=significance_words(g.joint_p_adjusted, alpha)))


def flagged_groups(cal: CalibrationAudit) -> list[str]:
    """Groups miscalibrated on their own: joint test, Benjamini–Hochberg across the groups, at the params' α."""
    return [g.name for g in cal.groups if g.linear.ok and g.joint_p_adjusted < cal.params.alpha]


def group_difference(cal: CalibrationAudit) -> Text:
    """Does calibration differ by group? The headline answer ([2] §4.5 with the group as a term): the smaller p of
    the two likelihood-ratio tests, Bonferroni-corrected for the two, with both tests' χ² and p."""
    diff = cal.difference
    if diff.linear is None or diff.in_the_large is None:
        return text("**Does calibration differ by group?** The groups cannot be compared: {status}.", "finding",
                    status=diff.status)
    answer = ("Calibration differs between groups" if diff.p_value < cal.params.alpha
              else "No evidence that calibration differs between groups")
    body = text("**Does calibration differ by group?** **{answer}**: p {p} (the smaller of two likelihood-ratio "
                "tests, Bonferroni-corrected). Group-specific intercept and slope against shared ones: "
                "χ²({df}) = {stat:.2f}, p {p_linear}; group-specific calibration-in-the-large: χ²({df_large}) = "
                "{stat_large:.2f}, p {p_large}.", "finding",
                answer=answer, p=fmt_p(diff.p_value), df=diff.linear.df, stat=diff.linear.statistic,
                p_linear=fmt_p(diff.linear.p), df_large=diff.in_the_large.df, stat_large=diff.in_the_large.statistic,
                p_large=fmt_p(diff.in_the_large.p))
    parts = [body]
    if diff.p_value < cal.params.alpha:
        parts.append(" The same score does not mean the same risk for everyone.")
    if diff.excluded:
        parts.append(text(" Not tested (too small): {names}.", names=", ".join(diff.excluded)))
    parts.append(text(" Miscalibrated on their own after Benjamini–Hochberg: {names}.",
                      names=", ".join(flagged_groups(cal)) or "none"))
    return join(*parts, level="finding")


def gap_words(ci: tuple[float, float] | None) -> str:
    """Whether a gap's interval excludes 0."""
    if ci is None or not math.isfinite(ci[0]):
        return "no interval"
    if ci[0] > 0 or ci[1] < 0:
        return "a real gap (interval excludes 0)"
    return "could be noise (interval includes 0)"


def smallest_group_performance(cal: CalibrationAudit) -> Text:
    """Estimated performance is not true performance ([2] §1.3): the smallest group's interval against all rows'."""
    smallest = min(cal.groups, key=lambda g: g.n)
    return text("**Reading.** Estimated performance is not true performance (§1.3): the smallest group, *{name}* "
                "(n = {n:,}), has AUROC {auroc} with a 95% interval {ci}, against {overall} for all rows. A gap "
                "between groups whose intervals overlap this much may be noise.",
                name=smallest.name, n=smallest.n, auroc=fmt(smallest.performance.auroc),
                ci=fmt_interval(smallest.performance.auroc_ci), overall=fmt_interval(cal.overall.performance.auroc_ci))


def feature_reading(result: FeatureResiduals, shown: list[str]) -> Text:
    """The clearest bias along a feature ([2] §3.2): the shown bin with the largest mean Pearson residual whose
    interval excludes 0."""
    worst = None
    for name in shown:
        b = result.groups[name]
        for i in range(b.n.size):
            if b.n[i] and np.isfinite(b.low[i]) and (b.low[i] > 0 or b.high[i] < 0):
                if worst is None or abs(b.mean[i]) > abs(worst[2]):
                    worst = (name, b.label[i], b.mean[i], int(b.n[i]))
    if worst is None:
        return text("**Reading.** Every shown bin's 95% interval includes 0: no evidence of bias along *{feature}* at "
                    "this resolution.", feature=result.feature)
    name, label, mean, n = worst
    return text("**Reading.** The clearest bias: for *{name}* with {feature} {label} (n = {n:,}) the mean residual is "
                "{mean:+.2f}, so the model {direction} there; its 95% interval excludes 0.",
                name=name, feature=result.feature, label=label, n=n, mean=mean,
                direction="under-predicts" if mean > 0 else "over-predicts")


def residual_model_verdict(model: ResidualModel) -> Text:
    """Whether the features explain the residuals ([2] §3.3): the best cross-validated R² and significant terms."""
    gain = max(model.cv_r2_linear, model.cv_r2_boosting)
    head = ("Features explain part of the residuals" if gain > 0.01 else "No useful gain over the baseline")
    significant = [t.term for t in model.terms if t.p < 0.05]
    return join(text("**{head}:** the best cross-validated R² is {gain:.4f} (0 = no better than the mean residual). ",
                     "finding", head=head, gain=gain),
                text("Significant terms: {terms}.", terms=", ".join(significant)) if significant
                else "No term is significant at 5%.", level="finding")


def split_reading(result: RecalibrationResult) -> Text:
    """How the rows were split into calibration and evaluation rows ([2] §5)."""
    calibrating = int(result.calibration_rows.sum())
    return text("Split: {label} ({calibrating:,} calibration rows, {evaluating:,} evaluation rows).", "note",
                label=result.split_label, calibrating=calibrating,
                evaluating=int((~result.calibration_rows).sum()))


def recalibration_reading(result: RecalibrationResult, method: str) -> Text:
    """ECE before and after a recalibration, per group ([2] §5), and what a shared map cannot do."""
    before, after = result.original.metrics, result.method(method).metrics
    parts: list[Text | str] = [text("**Reading.** ECE on the evaluation rows, before → after {label}: ",
                                    label=result.method(method).label)]
    for k, name in enumerate(before):
        parts += ["; "] if k else []
        parts.append(text("*{name}* {before} → {after}", name=name, before=fmt(before[name].ece),
                          after=fmt(after[name].ece)))
    parts.append(text(". A shared map cannot remove a gap *between* groups when the same score means different risks "
                      "for them; only a per-group map (group-aware) can."))
    return join(*parts)


def extremes(cal: CalibrationAudit, focus: Focus = Focus()) -> tuple[GroupCalibration, GroupCalibration] | None:
    """The worst and the best calibrated group (smooth ECE) among the groups of at least the size floor: a tiny
    group's ECE is mostly noise, so it never headlines. None when no group is that large."""
    large = [g for g in cal.groups if g.n >= focus.min_group_size]
    if not large:
        return None
    return max(large, key=lambda g: g.smooth_ece), min(large, key=lambda g: g.smooth_ece)


def focus_gap(cal: CalibrationAudit, focus: Focus = Focus()) -> Text | None:
    """The smooth-ECE gap of the pair the page reads first: the Summary's top group against the reference."""
    pair = focus.pair({g.name: g.n for g in cal.groups})
    if pair is None:
        return None
    group, reference = pair
    record = next((p for p in cal.pairs if {p.group_i, p.group_j} == {group, reference}), None)
    if record is None:
        return None
    sign = 1.0 if record.group_i == group else -1.0
    ci = record.smooth_ece_diff_ci
    finite = ci is not None and math.isfinite(ci.low) and math.isfinite(ci.high)
    oriented = tuple(sorted((sign * ci.low, sign * ci.high))) if finite else None
    interval = f"[{oriented[0]:+.3f}, {oriented[1]:+.3f}]" if oriented else "not computed"
    return text("**{g}** against the reference **{r}**: smooth ECE {a} vs {b}, a gap of {gap:+.3f} (95% CI "
                "{interval}; {words}).", "finding", g=group, r=reference, a=fmt(cal.group(group).smooth_ece),
                b=fmt(cal.group(reference).smooth_ece), gap=sign * record.smooth_ece_diff, interval=interval,
                words=gap_words(oriented))


def _size(n: int, focus: Focus) -> str:
    return f"n = {n:,}" if n >= focus.min_group_size else f"n = {n:,}, small: read with care"


# ------------------------------------------------------------------------------------------------ calibration in the mean

def mean_gap_words(g: RegressionGroup, target: str) -> Text:
    """The average gap between target and prediction, in the target's units."""
    gap = g.mean_y - g.mean_pred
    direction = "under-predicts" if gap > 0 else "over-predicts"
    return text("on average the model {direction} {target} by {gap:.4g} (mean {target} {y:.4g}, mean prediction "
                "{x:.4g})", direction=direction, target=target, gap=abs(gap), y=g.mean_y, x=g.mean_pred)


def mz_slope_words(g: RegressionGroup, alpha: float) -> str:
    """What a Mincer–Zarnowitz slope other than 1 means."""
    slope = g.mz.slope
    if not slope.p < alpha:
        return "the slope is indistinguishable from 1: predictions spread as the target does"
    if slope.estimate < 1:
        return ("the slope is below 1: predictions are too spread out, high ones too high and low ones too low "
                "(E[y | ŷ] changes less than ŷ)")
    return ("the slope is above 1: predictions are too compressed, high ones too low and low ones too high "
            "(E[y | ŷ] changes more than ŷ)")


def mz_group_verdict(g: RegressionGroup, target: str, alpha: float, focus: Focus = Focus()) -> Text:
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
    return join(head, "Miscalibrated: ", mean_gap_words(g, target), "; ", mz_slope_words(g, alpha), ".")


def mean_calibration_difference(result: RegressionCalibration) -> Text:
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


def worst_mz_group(result: RegressionCalibration, focus: Focus = Focus()) -> RegressionGroup | None:
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


# ------------------------------------------------------------------------------------------------ top-label and class-wise

def confidence_words(g: MulticlassGroup) -> str:
    gap = g.mean_confidence - g.accuracy
    if gap > 0:
        return f"over-confident: mean confidence {g.mean_confidence:.3f} against accuracy {g.accuracy:.3f}"
    return f"under-confident: mean confidence {g.mean_confidence:.3f} against accuracy {g.accuracy:.3f}"


def top_label_group_verdict(g: MulticlassGroup, alpha: float, focus: Focus = Focus()) -> Text:
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


def top_label_flagged_groups(result: MulticlassCalibration, focus: Focus = Focus()) -> Text:
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


def worst_top_label_group(result: MulticlassCalibration, focus: Focus = Focus()) -> MulticlassGroup | None:
    large = [g for g in result.groups if g.n >= focus.min_group_size]
    return max(large, key=lambda g: g.top_ece) if large else None


def ece_gap_words(d: EceGap, result: MulticlassCalibration, focus: Focus = Focus()) -> Text:
    """A group's ECE against the reference's, and whether the interval of the gap excludes 0."""
    g = result.group(d.group)
    finite = math.isfinite(d.ci.low) and math.isfinite(d.ci.high)
    words = ("no interval" if not finite else "a real gap (interval excludes 0)" if d.ci.low > 0 or d.ci.high < 0
             else "could be noise (interval includes 0)")
    return text("*{group}* ({size}) against the reference *{reference}*: {measure} ECE gap {gap:+.3f} (95% CI "
                "{ci}; {words}).", group=d.group, size=_size(g.n, focus), reference=d.reference, measure=d.measure,
                gap=d.gap, ci=fmt_interval(d.ci), words=words)
