"""The calibration check and what it shows: for each task its method's JSON and display list, which the page, the
HTML report and the terminal all render, and the ``Section`` that runs it.

``CHECK`` ("calibration") serves each task with its own method:
- probabilities of one positive outcome ([2]): ``calibration`` and ``calibration_details`` (reliability, logistic
  calibration tests, ECE and smooth ECE, subgroup performance);
- a numeric target: ``calibration_regression``, calibration in the mean (binned means, Mincer–Zarnowitz per group,
  the group comparison, interval coverage);
- class probabilities: ``calibration_multiclass``, top-label and class-wise calibration.
``PER_CLASS_CHECK`` ("per_class") reads each class one vs rest: its prevalence, how often it is predicted, and the
AUROC of its probability overall and per group. Every section compares groups with the Summary's reference
(``options.findings.reference``; None: the largest group). The audit settings (``options``) are passed in, never
imported: this module sits below the report.

Every table here is the result's records (``CalibrationAudit.group_rows`` and friends) with column formats and
headings; the JSON is the same records under its keys. The page picks the parts it draws in its tabs (``*_group``
with its pickers' values) and adds what only a page has (pickers, downloads, recalibration, residuals over
features, whose display items are here too so that the page builds no table or sentence of its own).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairviz.calibration import figures, readings
from fairviz.calibration.analysis import analyse
from fairviz.calibration.feature_residuals import FeatureResiduals, ResidualModel
from fairviz.calibration.mincer_zarnowitz import RegressionCalibration, RegressionParams, analyse_regression
from fairviz.calibration.performance import auroc_from_counts
from fairviz.calibration.recalibration import RecalibrationResult
from fairviz.calibration.results import CalibrationAudit
from fairviz.calibration.top_label_ece import MulticlassCalibration, MulticlassParams, analyse_multiclass
from fairviz.core.checks import Check, Section
from fairviz.core.display import Bullets, Figure, Group, Item, Metric, Metrics, Table, text
from fairviz.core.focus import Focus
from fairviz.core.wording import fmt, fmt_interval, fmt_p, significance_words
from fairviz.data import Predictions
from fairviz.data.tasks import BINARY, MULTICLASS, REGRESSION

MAX_AUROC_COLUMNS = 12          # per-group AUROC columns in the per-class table (the JSON keeps every group)

# the keys of ``calibration.<group>`` (the list) and of ``calibration_details.groups.<group>``, in order
SUMMARY_KEYS = ("ece", "smooth_ece", "intercept", "intercept_p", "slope", "slope_p", "lr_p_value")
DETAIL_KEYS = ("n", "n_pos", "mean_score", "observed_rate", "n_clipped", "status", "ece_ci", "ece_regime",
               "smooth_ece_ci", "smooth_ece_bandwidth", "intercept_se", "slope_se", "calibration_slope", "lr_statistic",
               "calibration_in_the_large", "calibration_in_the_large_p", "lr_p_value_bh", "nonlinear_p_value",
               "nonlinear_p_value_bh", "spline_vs_calibrated_p_value", "spline_status", "auroc", "auroc_ci",
               "log_loss", "log_loss_ci", "brier", "brier_ci", "performance_status")
BIN_KEYS = ("lower", "upper", "n", "n_pos", "mean_pred", "observed", "ci_low", "ci_high")


def calibration_to_dict(cal: CalibrationAudit) -> dict:
    """``calibration.<group>`` and ``calibration.overall`` with exactly the keys the issue names; everything else
    (intervals, n, tests not in that list, group comparison, settings) under ``calibration_details``."""
    bins: dict[str, list] = {}
    for row in cal.bin_rows():
        bins.setdefault(row["group"], []).append({k: row[k] for k in BIN_KEYS})
    calibration, details = {}, {}
    for row in cal.group_rows():
        calibration[row["group"]] = {**{k: row[k] for k in SUMMARY_KEYS}, "bins": bins[row["group"]]}
        details[row["group"]] = {k: row[k] for k in DETAIL_KEYS}
    diff = cal.difference
    return {
        "calibration": calibration,
        "calibration_details": {
            "groups": details,
            "group_difference": {
                "groups_tested": list(diff.groups), "excluded": list(diff.excluded), "reference": diff.reference,
                "lr_statistic": diff.linear.statistic if diff.linear else None,
                "df": diff.linear.df if diff.linear else None,
                "p_value": diff.linear.p if diff.linear else None,
                "in_the_large_lr_statistic": diff.in_the_large.statistic if diff.in_the_large else None,
                "in_the_large_p_value": diff.in_the_large.p if diff.in_the_large else None,
                "p_value_bonferroni": diff.p_value,
                "status": diff.status or None,
            },
            "pairs": cal.pair_rows(),
            "settings": {"n_bins": cal.params.n_bins, "strategy": cal.params.strategy, "ci_method": cal.params.ci_method,
                         "level": cal.params.level, "spline_knots": cal.params.spline_knots,
                         "resamples": cal.params.resamples, "seed": cal.params.seed,
                         "min_events": cal.params.min_events},
            "notes": list(cal.notes),
        },
    }


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


def _table(rows: list[dict], key: str, columns: dict, title=None) -> Table:
    frame = pd.DataFrame(rows, columns=list(columns))
    return Table(frame, key, formats={c: f for c, (_, f) in columns.items() if f},
                 labels={c: label for c, (label, _) in columns.items()}, title=title)


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


# ------------------------------------------------------------------------------------------------ page-only parts

RECALIBRATION_METRICS = {"ece": "ECE", "smooth_ece": "smooth ECE", "log_loss": "log-loss", "brier": "Brier"}


def recalibration_items(result: RecalibrationResult, method: str) -> list[Item]:
    """Recalibration ([2] §5) on the evaluation rows: every method's metrics, the chosen map and its reading."""
    table = _table(result.rows(), "recalibration", {
        "method": ("method", "text"), "group": ("group", "text"), "n": ("n (evaluation)", "int"),
        "ece": ("ECE", "num4"), "smooth_ece": ("smooth ECE", "num4"), "log_loss": ("log-loss", "num4"),
        "brier": ("Brier", "num4")})
    chosen = result.method(method)
    items: list[Item] = [table]
    items += [text("{label} — {name}: {description}", "note", label=chosen.label, name=name, description=description)
              for name, description in chosen.descriptions.items()]
    items += [text("{name}: {problem}", "caveat", name=name, problem=problem)
              for name, problem in chosen.problems.items()]
    return [*items, readings.recalibration_reading(result, method)]


def feature_items(result: FeatureResiduals, shown: list[str]) -> list[Item]:
    """The reading beside the residual plot of one feature ([2] §3.2)."""
    items: list[Item] = [readings.feature_reading(result, shown)]
    if result.large:
        items.append(text("{large:,} rows have |r| > 3: positives scored very low or negatives scored very high.",
                          "note", large=result.large))
    return items


def residual_model_items(model: ResidualModel) -> list[Item]:
    """The model-based test of residuals over features ([2] §3.3): Wald tests, R², and the verdict."""
    rows = [{**row, "reading": significance_words(row["p"])} for row in model.rows()]
    table = _table(rows, "residual_model", {
        "term": ("term", "text"), "df": ("df", "int"), "statistic": ("robust Wald χ²", "num"), "p": ("p", "p"),
        "reading": ("reading", "text")})
    metrics = Metrics((
        Metric(text("In-sample R²"), fmt(model.r2, 4)),
        Metric(text("CV R², spline OLS"), fmt(model.cv_r2_linear, 4), help=f"± {model.cv_r2_linear_sd:.4f} across folds"),
        Metric(text("CV R², boosted trees"), fmt(model.cv_r2_boosting, 4),
               help=f"± {model.cv_r2_boosting_sd:.4f} across folds"),
    ))
    return [table, metrics, readings.residual_model_verdict(model), *[text("{note}", "note", note=n) for n in model.notes]]


# ------------------------------------------------------------------------------------------------ JSON of the other methods

def regression_to_dict(result: RegressionCalibration) -> dict:
    """``calibration_regression``: per-group fits, binned means, coverage and the group comparison."""
    def test(t):
        return None if t is None else {"f": t.statistic, "df_num": t.df_num, "df_den": t.df_den, "p": t.p}
    return {"groups": result.group_rows(), "bins": result.bin_rows(), "coverage": result.coverage_rows(),
            "same_line": test(result.same_line), "same_slope": test(result.same_slope),
            "groups_compared": list(result.tested),
            "coverage_differs": [{"nominal": nominal, "p": p} for nominal, p in result.coverage_differs],
            "settings": {"n_bins": result.params.n_bins, "strategy": result.params.strategy,
                         "level": result.params.level, "covariance": result.params.covariance,
                         "min_rows": result.params.min_rows},
            "notes": list(result.notes)}


def multiclass_to_dict(result: MulticlassCalibration) -> dict:
    """``calibration_multiclass``: per-group top-label and class-wise calibration, reliability bins and gaps."""
    p = result.params
    return {"classes": list(result.classes), "groups": result.group_rows(), "classes_by_group": result.class_rows(),
            "bins": result.bin_rows(), "gaps": result.gap_rows(), "reference": result.reference,
            "classwise_available": result.classwise,
            "settings": {"n_bins": p.n_bins, "strategy": p.strategy, "ece_bins": p.ece_bins, "level": p.level,
                         "ci_method": p.ci_method, "resamples": p.resamples, "seed": p.seed, "min_rows": p.min_rows},
            "notes": list(result.notes)}


# ------------------------------------------------------------------------------------------------ calibration in the mean

def regression_display(result: RegressionCalibration, target: str = "target", focus: Focus = Focus(),
                       ident: tuple = ()) -> list[Item]:
    """Notes, headline numbers, the group comparison, then binned means, Mincer–Zarnowitz and coverage groups."""
    ident = ("cal.regression", *ident, result.attribute, result.params)
    alpha = result.params.alpha
    worst = readings.worst_mz_group(result, focus)
    line = result.same_line
    overall = result.overall.mz
    metrics = Metrics((
        Metric(text("Slope of {target} on the prediction, all rows", target=target),
               fmt(overall.slope.estimate) if overall.ok else "—",
               help=f"Calibrated: 1. 95% CI [{overall.slope.low:.3f}, {overall.slope.high:.3f}]" if overall.ok
               else overall.status),
        Metric(text("Furthest from calibrated: {name}", name=worst.name) if worst else text("Furthest from calibrated"),
               f"F = {worst.mz.joint.statistic:.2f}, p {fmt_p(worst.mz.joint.p)}" if worst else "too small to tell",
               help=(f"Among groups of {focus.min_group_size:,}+ rows: joint test of intercept 0 and slope 1 "
                     f"(n = {worst.n:,})." if worst else
                     f"No group has {focus.min_group_size:,} rows or more and a fitted line.")),
        Metric(text("Calibration in the mean differs by group? p"), fmt_p(line.p) if line else "—",
               help="Nested F test: one intercept and slope for every group against one per group."),
    ))
    items: list[Item] = [*[text("{note}", "note", note=n) for n in result.notes], metrics,
                         readings.mean_calibration_difference(result)]
    items.append(Group("Calibration in the mean: binned means", (
        Figure(lambda: figures.binned_means_figure(result, target), key=("binned", *ident, target)),
        text("**Reading.** Each point is one bin of the prediction: its mean prediction against the mean {target} of "
             "its rows, with a 95% t interval. Points on the diagonal are calibrated in the mean; above it the model "
             "under-predicts, below it over-predicts. Bins are shared by all groups, so points of different groups "
             "line up.", target=target),
    ), key="reg_means"))
    items.append(Group("Binned means table", (_bins_table(result),), key="reg_bins", collapsed=True))
    items.append(Group("Mincer–Zarnowitz regression", (
        Figure(lambda: figures.mincer_zarnowitz_figure(result), key=("mz", *ident)),
        _mz_table(result),
        *[readings.mz_group_verdict(g, target, alpha, focus) for g in result.groups],
        text("Model (Mincer & Zarnowitz 1969): {target} = a + b·ŷ + e, fitted by least squares in each group. "
             "Calibrated in the mean means a = 0 and b = 1; the F test checks both together (Wald, {cov} covariance). "
             "'p a' tests a = 0 and 'p b' tests b = 1. Groups with fewer than {min_rows} rows or a single prediction "
             "value are not fitted.", "note", target=target,
             cov="classical" if result.params.covariance == "classical" else "heteroscedasticity-robust HC1",
             min_rows=result.params.min_rows),
    ), key="reg_mz"))
    if any(g.coverage for g in result.all_groups):
        items.append(Group("Prediction-interval coverage", (
            Figure(lambda: figures.coverage_figure(result), key=("coverage", *ident)),
            _coverage_table(result),
            Bullets(tuple(readings.coverage_words(g, c, alpha, focus) for g in result.groups for c in g.coverage)),
            *[readings.coverage_difference(nominal, p, alpha) for nominal, p in result.coverage_differs],
            text("Coverage: the share of rows whose {target} lies between the τ and 1 − τ quantile predictions (ends "
                 "included), with a Clopper–Pearson 95% interval and an exact binomial test against 1 − 2τ.", "note",
                 target=target),
        ), key="reg_coverage"))
    return items


def _mz_table(result: RegressionCalibration) -> Table:
    return _table(result.group_rows(), "regression_calibration", {
        "group": ("group", "text"), "n": ("n", "int"), "mean_y": ("mean target", "num"),
        "mean_pred": ("mean prediction", "num"), "intercept": ("a intercept", "num"),
        "intercept_ci": ("a 95% CI", "ci"), "intercept_p": ("p a", "p"), "slope": ("b slope", "num"),
        "slope_ci": ("b 95% CI", "ci"), "slope_p": ("p b", "p"), "f_statistic": ("F (a=0, b=1)", "num"),
        "f_p": ("p F", "p"), "f_p_bh": ("p F BH", "p"), "status": ("status", "text")})


def _bins_table(result: RegressionCalibration) -> Table:
    return _table(result.bin_rows(), "regression_bins", {
        "group": ("group", "text"), "bin": ("bin", "int"), "lower": ("lower", "num"), "upper": ("upper", "num"),
        "n": ("n", "int"), "mean_pred": ("mean prediction", "num"), "mean_y": ("mean target", "num"),
        "sd_y": ("sd target", "num"), "ci_low": ("ci_lower", "num"), "ci_high": ("ci_upper", "num")})


def _coverage_table(result: RegressionCalibration) -> Table:
    return _table(result.coverage_rows(), "regression_coverage", {
        "group": ("group", "text"), "nominal": ("nominal", "pct"), "n": ("n", "int"), "inside": ("inside", "int"),
        "coverage": ("coverage", "pct"), "coverage_ci": ("95% CI", "ci"), "p": ("p (= nominal)", "p"),
        "mean_width": ("mean width", "num")})


# ------------------------------------------------------------------------------------------------ top-label and class-wise

def multiclass_display(result: MulticlassCalibration, focus: Focus = Focus(), ident: tuple = ()) -> list[Item]:
    """Notes, headline numbers, which groups are miscalibrated, then top-label reliability, class-wise reliability,
    calibration errors with gaps, and the reliability tables (collapsed)."""
    ident = ("cal.multiclass", *ident, result.attribute, result.params)
    alpha = result.params.alpha
    worst = readings.worst_top_label_group(result, focus)
    overall = result.overall
    metrics = [Metric(text("Top-label ECE, all rows"), fmt(overall.top_ece),
                      help=f"95% CI {fmt_interval(overall.top_ece_ci)}; accuracy {overall.accuracy:.3f}, mean "
                           f"confidence {overall.mean_confidence:.3f}")]
    metrics.append(Metric(text("Worst group: {name}", name=worst.name), fmt(worst.top_ece),
                          help=f"Top-label ECE among groups of {focus.min_group_size:,}+ rows (n = {worst.n:,}); "
                               f"95% CI {fmt_interval(worst.top_ece_ci)}") if worst else
                   Metric(text("Worst group"), "too small to tell",
                          help=f"No group has {focus.min_group_size:,} rows or more."))
    if result.classwise:
        metrics.append(Metric(text("Class-wise ECE, all rows"), fmt(overall.classwise_ece),
                              help=f"Mean of the classes' one-vs-rest ECEs; 95% CI "
                                   f"{fmt_interval(overall.classwise_ece_ci)}"))
    items: list[Item] = [*[text("{note}", "note", note=n) for n in result.notes], Metrics(tuple(metrics)),
                         readings.top_label_flagged_groups(result, focus)]
    pair = focus.pair({g.name: g.n for g in result.groups})
    if pair is not None:
        first = next((d for d in result.gaps if {d.group, d.reference} == set(pair)), None)
        if first is not None:
            items.append(readings.ece_gap_words(first, result, focus))
    items.append(Group("Top-label reliability", (
        Figure(lambda: figures.top_label_figure(result), key=("top", *ident)),
        *[readings.top_label_group_verdict(g, alpha, focus) for g in result.groups],
        text("**Reading.** Each point is one bin of the confidence (the highest class probability): its mean "
             "confidence against the share of rows whose predicted class is right, with a 95% interval. Below the "
             "diagonal the model is over-confident.", "plain"),
    ), key="mc_top"))
    if result.classwise:
        items.append(Group("Class-wise reliability", (
            Figure(lambda: figures.class_reliability_figure(result), key=("classes", *ident), static=True),
            _class_table(result),
        ), key="mc_classes"))
    items.append(Group("Multiclass calibration error", (
        Figure(lambda: figures.top_label_errors_figure(result), key=("errors", *ident)),
        _group_table(result),
        *((_gap_table(result), Bullets(tuple(readings.ece_gap_words(d, result, focus) for d in result.gaps)))
          if result.gaps else ()),
        text("Top-label ECE (Guo et al. 2017) and class-wise ECE (Kull et al. 2019: the mean over classes of each "
             "class's one-vs-rest ECE), {bins} equal-width bins. Intervals: percentile bootstrap of {resamples} row "
             "resamples within each group, resampling rows in cells that share their bins (each at the cell's mean "
             "probability); an ECE is biased upwards by noise, so its interval can sit above it. The calibration test "
             "is a binned χ² with the probabilities as given; bins with fewer than 5 expected rows of either outcome "
             "are pooled.", "note", bins=result.params.ece_bins, resamples=result.params.resamples),
    ), key="mc_errors"))
    items.append(Group("Reliability tables", (_bins_table_mc(result),), key="mc_bins", collapsed=True))
    return items


def _group_table(result: MulticlassCalibration) -> Table:
    return _table(result.group_rows(), "multiclass_calibration", {
        "group": ("group", "text"), "n": ("n", "int"), "accuracy": ("accuracy", "num"),
        "accuracy_ci": ("accuracy 95% CI", "ci"), "mean_confidence": ("mean confidence", "num"),
        "top_label_ece": ("top-label ECE", "num4"), "top_label_ece_ci": ("95% CI", "ci"),
        "top_label_p": ("p calibrated", "p"), "top_label_p_bh": ("p BH", "p"),
        "classwise_ece": ("class-wise ECE", "num4"), "classwise_ece_ci": ("class-wise 95% CI", "ci"),
        "status": ("status", "text")})


def _class_table(result: MulticlassCalibration) -> Table:
    return _table(result.class_rows(), "multiclass_classes", {
        "group": ("group", "text"), "class": ("class", "text"), "n_true": ("rows of the class", "int"),
        "mean_prob": ("mean probability", "num"), "ece": ("ECE", "num4"), "ece_ci": ("95% CI", "ci"),
        "chi2": ("χ²", "num"), "df": ("df", "int"), "p": ("p", "p"), "p_bh": ("p BH", "p")})


def _gap_table(result: MulticlassCalibration) -> Table:
    return _table(result.gap_rows(), "multiclass_gaps", {
        "group": ("group", "text"), "reference": ("reference", "text"), "measure": ("measure", "text"),
        "gap": ("ECE gap", "num4"), "gap_ci": ("95% CI", "ci")}, title=text("ECE gaps against the reference group"))


def _bins_table_mc(result: MulticlassCalibration) -> Table:
    rows = [{**r, "class": r["class"] if r["class"] is not None else "top label"} for r in result.bin_rows()]
    return _table(rows, "multiclass_bins", {
        "group": ("group", "text"), "class": ("class", "text"), "bin": ("bin", "int"), "lower": ("lower", None),
        "upper": ("upper", None), "n": ("n", "int"), "n_pos": ("n_pos", "int"), "mean_pred": ("mean_pred", "num"),
        "observed": ("observed", "num"), "ci_low": ("ci_lower", "num"), "ci_high": ("ci_upper", "num")})


# ------------------------------------------------------------------------------------------------ each class, one vs rest

@dataclass(frozen=True)
class ClassSummary:
    """One class read one vs rest over all rows: how common it is, how often it is predicted, and (with class
    probabilities) how well its probability ranks its rows, overall and per group."""
    name: str
    n_true: int
    n_predicted: int
    prevalence: float
    predicted_share: float
    auroc: float | None                     # None without class probabilities, or with one outcome only
    auroc_groups: dict                      # group → AUROC (None where undefined)

    def to_dict(self) -> dict:
        return {"n_true": self.n_true, "n_predicted": self.n_predicted, "prevalence": self.prevalence,
                "predicted_share": self.predicted_share, "auroc": self.auroc, "auroc_groups": dict(self.auroc_groups)}


def _auroc(y: np.ndarray, score: np.ndarray, w: np.ndarray) -> float | None:
    """Weighted AUROC (ties ½) of a binary ``y`` and a score, from counts per distinct score."""
    distinct, inverse = np.unique(score, return_inverse=True)
    neg = np.bincount(inverse, weights=w * (y == 0), minlength=distinct.size)
    pos = np.bincount(inverse, weights=w * (y == 1), minlength=distinct.size)
    value = float(auroc_from_counts(neg, pos)[0])
    return value if np.isfinite(value) else None


def per_class_run(pred: Predictions, options) -> list[ClassSummary]:
    view = pred.groups(options.attribute)
    w = np.ones(len(pred.y)) if pred.weight is None else np.asarray(pred.weight, dtype=float)
    total = float(w.sum())
    out = []
    for k, name in enumerate(pred.classes):
        truth = (pred.y == k).astype(np.int8)
        predicted = pred.predicted == k
        auroc, by_group = None, {}
        if pred.class_scores is not None:
            score = pred.class_scores[:, k]
            auroc = _auroc(truth, score, w)
            by_group = {g: _auroc(truth[view.codes == i], score[view.codes == i], w[view.codes == i])
                        for i, g in enumerate(view.names)}
        n_true, n_predicted = float(w @ truth), float(w[predicted].sum())
        out.append(ClassSummary(name, int(round(n_true)), int(round(n_predicted)), n_true / total,
                                n_predicted / total, auroc, by_group))
    return out


def per_class_display(pred: Predictions, result: list[ClassSummary], options) -> list[Item]:
    groups = list(result[0].auroc_groups)[:MAX_AUROC_COLUMNS] if result else []    # the largest groups first
    rows = [{"class": c.name, "n_true": c.n_true, "prevalence": c.prevalence, "n_predicted": c.n_predicted,
             "predicted_share": c.predicted_share, "auroc": c.auroc,
             **{f"auroc|{g}": c.auroc_groups[g] for g in groups}}
            for c in result]
    labels = {"class": "class", "n_true": "rows of the class", "prevalence": "prevalence",
              "n_predicted": "rows predicted", "predicted_share": "share predicted", "auroc": "AUROC (all rows)",
              **{f"auroc|{g}": f"AUROC {g}" for g in groups}}
    formats = {k: "num" for k in labels} | {"class": "text", "n_true": "int", "n_predicted": "int"}
    items: list[Item] = [Table(pd.DataFrame(rows, columns=list(labels)), "per_class", formats, labels)]
    if pred.class_scores is None:
        items.append(text("No class probabilities were mapped, so no AUROC: a predicted class ranks nothing.", "note"))
    else:
        items.append(text("AUROC: how well a class's probability ranks that class's rows above the others' (one vs "
                          "rest; ½: no better than chance), over all rows and within each group.", "note"))
    return items


# ------------------------------------------------------------------------------------------------ the checks

def _run(pred: Predictions, options) -> CalibrationAudit:
    return analyse(pred, options.attribute, options.calibration, progress=options.progress)


def _focus(options) -> Focus:
    return options.focus_of() if options is not None else Focus()


def regression_calibration_params(options) -> RegressionParams:
    return RegressionParams(n_bins=options.calibration.n_bins, alpha=options.findings.alpha)


def _mean_run(pred: Predictions, options) -> RegressionCalibration:
    return analyse_regression(pred, options.attribute, regression_calibration_params(options),
                              quantiles=pred.quantiles, quantile_levels=pred.quantile_levels)


def _mean_display(pred: Predictions, result: RegressionCalibration, options=None) -> list[Item]:
    """The target's name reads in the sentences; the data's fingerprint keys the figures."""
    return regression_display(result, pred.mapping.label, _focus(options), (getattr(pred, "fingerprint", None),))


def multiclass_calibration_params(options) -> MulticlassParams:
    c = options.calibration
    return MulticlassParams(n_bins=c.n_bins, strategy=c.strategy, resamples=c.resamples, seed=c.seed,
                            alpha=options.findings.alpha)


def _top_label_run(pred: Predictions, options) -> MulticlassCalibration:
    return analyse_multiclass(pred, options.attribute, multiclass_calibration_params(options),
                              reference=options.findings.reference)


def _top_label_display(pred: Predictions, result: MulticlassCalibration, options=None) -> list[Item]:
    return multiclass_display(result, _focus(options), (getattr(pred, "fingerprint", None),))


SECTION = Section("calibration", _run, lambda pred, result, options: calibration_to_dict(result), to_html=None,
                  title="Calibration", weighted=True, display=display)
REGRESSION_CALIBRATION = Section(
    "calibration_regression", _mean_run,
    lambda pred, result, options: {"calibration_regression": regression_to_dict(result)},
    title="Calibration in the mean", weighted=True, display=_mean_display)
MULTICLASS_CALIBRATION = Section(
    "calibration_multiclass", _top_label_run,
    lambda pred, result, options: {"calibration_multiclass": multiclass_to_dict(result)},
    title="Calibration: top-label and class-wise", weighted=True, display=_top_label_display)
PER_CLASS = Section("per_class", per_class_run,
                    lambda pred, result, options: {"per_class": {c.name: c.to_dict() for c in result}},
                    title="Each class, one vs rest", weighted=True, display=per_class_display)

CHECK = Check("calibration", {BINARY.name: SECTION, REGRESSION.name: REGRESSION_CALIBRATION,
                              MULTICLASS.name: MULTICLASS_CALIBRATION})
PER_CLASS_CHECK = Check("per_class", {MULTICLASS.name: PER_CLASS})
