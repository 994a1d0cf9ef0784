"""Reliability of one positive-class probability ([2]): the calibration check's method for probabilities of one
positive outcome. Its JSON (``calibration``, method ``reliability``: reliability, logistic calibration tests, ECE
and smooth ECE, subgroup performance) and its display list, which the page, the HTML report and the terminal all
render.

Every table here is the result's records (``CalibrationAudit.group_rows`` and friends) with column formats and
headings; the JSON is the same records under its keys. The page picks the parts it draws in its tabs (``*_group``
with its pickers' values). The headline compares groups with the Summary's reference
(``options.findings.reference``; None: the largest group).
"""
from __future__ import annotations

from fairviz.calibration import figures, readings
from fairviz.calibration.analysis import analyse
from fairviz.calibration.record_table import record_table as _table
from fairviz.calibration.results import CalibrationAudit
from fairviz.calibration.section_json import envelope
from fairviz.core.checks import Section
from fairviz.core.display import Bullets, Figure, Group, Item, Metric, Metrics, Table, text
from fairviz.core.focus import Focus
from fairviz.core.wording import fmt, fmt_interval, fmt_p
from fairviz.data import Predictions

# a group's record: the keys first, then every other number, then its reliability bins
SUMMARY_KEYS = ("ece", "smooth_ece", "intercept", "intercept_p", "slope", "slope_p", "lr_p_value")
DETAIL_KEYS = ("n", "n_pos", "mean_score", "observed_rate", "n_clipped", "status", "ece_ci", "ece_regime",
               "smooth_ece_ci", "smooth_ece_bandwidth", "intercept_se", "slope_se", "calibration_slope", "lr_statistic",
               "calibration_in_the_large", "calibration_in_the_large_p", "lr_p_value_bh", "nonlinear_p_value",
               "nonlinear_p_value_bh", "spline_vs_calibrated_p_value", "spline_status", "auroc", "auroc_ci",
               "log_loss", "log_loss_ci", "brier", "brier_ci", "performance_status")
BIN_KEYS = ("lower", "upper", "n", "n_pos", "mean_pred", "observed", "ci_low", "ci_high")


def calibration_to_dict(cal: CalibrationAudit) -> dict:
    """``calibration``: each group's record under ``groups`` and all rows' under ``overall``, the pairs' gaps, the
    test of whether calibration differs by group, settings and notes (``section_json.envelope``)."""
    bins: dict[str, list] = {}
    for row in cal.bin_rows():
        bins.setdefault(row["group"], []).append({k: row[k] for k in BIN_KEYS})
    groups = {row["group"]: {**{k: row[k] for k in SUMMARY_KEYS + DETAIL_KEYS}, "bins": bins[row["group"]]}
              for row in cal.group_rows()}
    overall = groups.pop(cal.key(cal.overall))
    diff = cal.difference
    p = cal.params
    return {"calibration": envelope(
        "reliability", cal.attribute, groups,
        settings={"n_bins": p.n_bins, "strategy": p.strategy, "ci_method": p.ci_method, "level": p.level,
                  "spline_knots": p.spline_knots, "resamples": p.resamples, "seed": p.seed,
                  "min_events": p.min_events},
        notes=cal.notes, pairs=cal.pair_rows(), overall=overall,
        group_difference={
            "groups_tested": list(diff.groups), "excluded": list(diff.excluded), "reference": diff.reference,
            "lr_statistic": diff.linear.statistic if diff.linear else None,
            "df": diff.linear.df if diff.linear else None,
            "p_value": diff.linear.p if diff.linear else None,
            "in_the_large_lr_statistic": diff.in_the_large.statistic if diff.in_the_large else None,
            "in_the_large_p_value": diff.in_the_large.p if diff.in_the_large else None,
            "p_value_bonferroni": diff.p_value,
            "status": diff.status or None,
        })}


# ------------------------------------------------------------------------------------------------ tables

def tests_table(cal: CalibrationAudit) -> Table:
    """The logistic calibration test per group ([2] §4.5) with the non-linear (spline) test."""
    return _table(cal.group_rows(), "tests", {
        "group": ("group", "text"), "n": ("n", "int"), "n_pos": ("positives", "int"),
        "intercept": ("β₀ intercept", "num"), "intercept_se": ("SE β₀", "num"), "intercept_p": ("p β₀", "p"),
        "slope": ("β₁ slope", "num"), "slope_se": ("SE β₁", "num"), "slope_p": ("p β₁", "p"),
        "calibration_slope": ("calibration slope 1+β₁", "num"), "lr_statistic": ("LR χ²(2)", "num"),
        "lr_p_value": ("p (β₀=β₁=0)", "p"), "lr_p_value_bh": ("p BH", "p"), "nonlinear_p_value": ("p non-linear", "p"),
        "nonlinear_p_value_bh": ("p non-linear BH", "p"), "status": ("status", "text")})


def errors_table(cal: CalibrationAudit) -> Table:
    return _table(cal.group_rows(), "errors", {
        "group": ("group", "text"), "n": ("n", "int"), "ece": ("ECE (15 bins)", "num4"), "ece_ci": ("ECE 95% CI", "ci"),
        "ece_regime": ("regime", "text"), "smooth_ece": ("smooth ECE", "num4"),
        "smooth_ece_ci": ("smooth ECE 95% CI", "ci"), "smooth_ece_bandwidth": ("bandwidth σ*", "num4")})


def pairs_table(cal: CalibrationAudit) -> Table:
    rows = [{**row, "reading": readings.gap_words(row["smooth_ece_diff_ci"])} for row in cal.pair_rows()]
    return _table(rows, "pairs", {
        "group_i": ("group i", "text"), "group_j": ("group j", "text"), "ece_diff": ("ECE gap", "num4"),
        "ece_diff_ci": ("ECE gap 95% CI", "ci"), "smooth_ece_diff": ("smooth ECE gap", "num4"),
        "smooth_ece_diff_ci": ("smooth ECE gap 95% CI", "ci"), "reading": ("reading", "text")},
        title=text("Group gaps (i minus j)"))


def performance_table(cal: CalibrationAudit) -> Table:
    return _table(cal.group_rows(), "performance", {
        "group": ("group", "text"), "n": ("n", "int"), "n_pos": ("positives", "int"), "auroc": ("AUROC", "num"),
        "auroc_ci": ("AUROC 95% CI", "ci"), "log_loss": ("log-loss", "num"), "log_loss_ci": ("log-loss 95% CI", "ci"),
        "brier": ("Brier", "num4"), "brier_ci": ("Brier 95% CI", "ci"), "performance_status": ("note", "text")})


def bins_table(cal: CalibrationAudit, strategy: str | None = None) -> Table:
    """Every group's reliability bins ([2] §4.2.2): the JSON's ``bins`` plus the lecture's p₁ and Wald margin."""
    return _table(cal.bin_rows(strategy), "bins", {
        "group": ("group", "text"), "bin": ("bin", "int"), "lower": ("lower", None), "upper": ("upper", None),
        "n": ("n", "int"), "n_pos": ("n_pos", "int"), "mean_pred": ("mean_pred", "num"), "observed": ("observed", "num"),
        "post_mean": ("post_mean", "num"), "ci_low": ("ci_lower", "num"), "ci_high": ("ci_upper", "num"),
        "wald_moe": ("wald_moe", "num")})


def differences_table(cal: CalibrationAudit) -> Table:
    return _table(cal.difference_rows(), "differences", {
        "group_i": ("group (i)", "text"), "group_j": ("reference (j)", "text"),
        "intercept_diff": ("Δ intercept (i−j)", "num"), "intercept_diff_p": ("p Δ intercept", "p"),
        "slope_diff": ("Δ slope (i−j)", "num"), "slope_diff_p": ("p Δ slope", "p")},
        title=text("Group-specific intercept and slope against the reference group"))



# ------------------------------------------------------------------------------------------------ display

def display(pred: Predictions, cal: CalibrationAudit, params=None) -> list[Item]:
    """The section in reading order: notes, headline numbers, the group-difference finding, then one group per
    part (reliability, bins, tests, errors, performance) that the page draws in its tabs. The bins are a top-level
    collapsed group: the terminal leaves out collapsed groups at the top level only."""
    ident = figure_ident(pred, cal)
    focus = params.focus_of() if params is not None else Focus()
    return [*headline(cal, focus), reliability_group(cal, ident), bins_group(cal), tests_group(cal, ident),
            errors_group(cal, ident), performance_group(cal, ident)]


def figure_ident(pred: Predictions, cal: CalibrationAudit) -> tuple:
    """What every figure of the section depends on: the data, the attribute and the settings."""
    return (pred.fingerprint, cal.attribute, cal.params)


def headline(cal: CalibrationAudit, focus: Focus = Focus()) -> list[Item]:
    """The headline numbers: all rows, the worst and best group among those of at least the size floor (a tiny
    group's ECE is mostly noise: it never headlines), the group-difference test; then the pair read first."""
    extremes = readings.extremes(cal, focus)
    diff = cal.difference
    floor = f"groups of {focus.min_group_size:,}+ rows"
    if extremes is None:
        sides = (Metric(text("Worst group"), "too small to tell", help=f"No group has {focus.min_group_size:,} rows "
                        "or more: their calibration errors are mostly sampling noise."),)
    else:
        worst, best = extremes
        sides = (Metric(text("Worst group: {name}", name=worst.name), fmt(worst.smooth_ece),
                        help=f"Among {floor}. 95% CI {fmt_interval(worst.smooth_ece_ci)}"),
                 Metric(text("Best group: {name}", name=best.name), fmt(best.smooth_ece),
                        help=f"Among {floor}. 95% CI {fmt_interval(best.smooth_ece_ci)}"))
    metrics = Metrics((
        Metric(text("Smooth ECE, all rows"), fmt(cal.overall.smooth_ece),
               help=f"95% CI {fmt_interval(cal.overall.smooth_ece_ci)}"),
        *sides,
        Metric(text("Calibration differs by group? p"), fmt_p(diff.p_value) if diff.linear else "—",
               help="The smaller p of two likelihood-ratio tests (group-specific intercept and slope; group-specific "
                    "calibration-in-the-large), Bonferroni-corrected for the two."),
    ))
    notes = [text("{note}", "caveat", note=note) for note in cal.notes]
    gap = readings.focus_gap(cal, focus)
    return [*notes, metrics, readings.group_difference(cal), *((gap,) if gap is not None else ())]


def reliability_figure(cal: CalibrationAudit, ident: tuple, shown: list[str] | None = None,
                       strategy: str | None = None, layout: str = "overlay", curve: bool = True,
                       zoom: bool = False) -> Figure:
    strategy = strategy or cal.params.strategy
    shown = list(shown or [g.name for g in cal.all_groups])
    return Figure(lambda: figures.reliability_figure(cal, shown, strategy, layout, curve, True, zoom),
                  key=("cal.reliability", *ident, tuple(shown), strategy, layout, curve, zoom))


def reliability_reading(cal: CalibrationAudit, shown: list[str] | None = None) -> list[Item]:
    names = shown or [g.name for g in cal.all_groups]
    return [text("**Reading.** Points on the dotted diagonal are calibrated; above it the model under-predicts (more "
                 "positives than scored), below it over-predicts. Bars: a 95% interval for the observed rate."),
            Bullets(tuple(readings.group_reading(cal.group(name), cal.params.alpha) for name in names))]


BINS_NOTE = ("**Binning table** (the lecture's §4.2.2): observed rate with the equal-tailed 95% interval of "
             "Beta(n₁+1, n−n₁+1); `post_mean` = (n₁+1)/(n+2); `wald_moe` = 1.96·√(p(1−p)/n).")


def reliability_group(cal: CalibrationAudit, ident: tuple) -> Group:
    """Reliability diagrams ([2] §4.2) of every group and their readings."""
    return Group("Calibration: reliability diagrams", (reliability_figure(cal, ident), *reliability_reading(cal)),
                 key="reliability")


def bins_group(cal: CalibrationAudit) -> Group:
    """The binning table behind the diagrams: detail (the HTML report folds it, the terminal leaves it out)."""
    return Group("Binning table", (text(BINS_NOTE), bins_table(cal)), key="bins", collapsed=True)


def tests_group(cal: CalibrationAudit, ident: tuple) -> Group:
    """The logistic calibration tests ([2] §4.5–4.6) per group, and the group terms against the reference."""
    alpha = cal.params.alpha
    items: list[Item] = [
        Figure(lambda: figures.coefficient_figure(cal), key=("cal.coefficients", *ident)),
        tests_table(cal),
        text("Model (§4.5): logit P(Y=1) = β₀ + β₁·logit(p̂) + offset(logit p̂), so β₀ = β₁ = 0 for a calibrated "
             "group; β₁ > 0 means under-confident scores, β₁ < 0 over-confident ones. p (β₀=β₁=0) is the joint "
             "likelihood-ratio test; 'p non-linear' adds a {knots}-knot restricted cubic spline of logit(p̂) and "
             "tests it against the straight line (it approximates, not reproduces, mgcv's smooth test). BH: "
             "Benjamini–Hochberg across the groups. Groups with fewer than {min_events} rows of either outcome are "
             "not tested.", "note", knots=cal.params.spline_knots, min_events=cal.params.min_events),
        *[readings.group_verdict(g, alpha) for g in cal.groups if g.linear.ok],
    ]
    if cal.difference.differences:
        items.append(differences_table(cal))
    return Group("Calibration tests", tuple(items), key="tests")


def errors_group(cal: CalibrationAudit, ident: tuple) -> Group:
    """ECE and smooth ECE per group with bootstrap intervals, and the gaps between groups."""
    items: list[Item] = [Figure(lambda: figures.errors_figure(cal), key=("cal.errors", *ident)), errors_table(cal)]
    if cal.pairs:
        items.append(pairs_table(cal))
    items.append(text(
        "ECE: 15 equal-width bins, Σ |B|/n·|observed − predicted| (as on the residual page). Smooth ECE (Błasiok & "
        "Nakkiran 2024; relplot's smECE): the kernel-smoothed calibration error with the bandwidth σ* at which it "
        "equals itself, free of bin choices, with its masses at every distinct score (the definition, to 1e-8). "
        "Intervals: percentile bootstrap of {resamples} row resamples (within "
        "each group; all rows for the overall line), the convention of Residual Distribution Fairness (App. B) used "
        "on every page. Calibration errors are biased upwards by noise and a resample adds that bias again, so an "
        "interval can sit above its estimate: its lower end is the cautious reading. Above 2,048 distinct scores in "
        "a group, a resample's smooth ECE places its masses at 2,048 equal cells of [0, 1] (up to 1.5e-5 off on "
        "Adult), far inside the interval's own noise.", "note",
        resamples=cal.params.resamples))
    return Group("Calibration error", tuple(items), key="errors")


def performance_figure(cal: CalibrationAudit, ident: tuple, metric: str = "auroc") -> Figure:
    return Figure(lambda: figures.performance_figure(cal, metric), key=("cal.performance", *ident, metric))


def performance_group(cal: CalibrationAudit, ident: tuple, metric: str = "auroc") -> Group:
    """AUROC, log-loss and Brier per group with bootstrap intervals ([2] §1.3: estimated is not true performance)."""
    return Group("Subgroup performance with uncertainty", (
        performance_figure(cal, ident, metric), performance_table(cal), readings.smallest_group_performance(cal),
        text("Intervals: percentile bootstrap, {resamples} row resamples within each group (a resample missing an "
             "outcome is dropped for AUROC). Log-loss uses scores clipped to [1e-6, 1 − 1e-6].", "note",
             resamples=cal.params.resamples)), key="performance")



def _run(pred: Predictions, options) -> CalibrationAudit:
    return analyse(pred, options.attribute, options.calibration, progress=options.progress)


SECTION = Section("calibration", _run, lambda pred, result, options: calibration_to_dict(result), to_html=None,
                  title="Calibration", weighted=True, display=display)
