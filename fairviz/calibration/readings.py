"""What the calibration results say, in words: the one place each sentence of the concept is written.

Every reading is a ``fairviz.core.display.Text``: the marks (bold, italic) come from the templates here, group and
feature names enter as fields, so a name such as ``**x**`` shows as typed in the app, the HTML report and the
terminal alike.
"""
from __future__ import annotations

import math

import numpy as np

from fairviz.calibration.feature_residuals import FeatureResiduals, ResidualModel
from fairviz.calibration.recalibration import RecalibrationResult
from fairviz.calibration.results import CalibrationAudit, GroupCalibration, LinearBiasTest
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
