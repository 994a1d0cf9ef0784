"""Calibration in the mean of a numeric prediction (``mincer_zarnowitz``): the calibration check's method for a
numeric target. Its JSON (per-group fits, binned means, interval coverage and the group comparison) and its display
list (binned means E[y | ŷ], the Mincer–Zarnowitz line per group, prediction-interval coverage)."""
from __future__ import annotations

from fairviz.calibration import figures, readings
from fairviz.calibration.mincer_zarnowitz import RegressionCalibration, RegressionParams, analyse_regression
from fairviz.calibration.record_table import record_table as _table
from fairviz.calibration.section_json import by_group, envelope
from fairviz.core.checks import Section
from fairviz.core.display import Bullets, Figure, Group, Item, Metric, Metrics, Table, text
from fairviz.core.focus import Focus
from fairviz.core.wording import fmt, fmt_p
from fairviz.data import Predictions


def mean_calibration_to_dict(result: RegressionCalibration) -> dict:
    """The ``calibration`` record of calibration in the mean: per-group fits (all rows under ``overall``), binned
    means, coverage and the group comparison (``section_json.envelope``)."""
    def test(t):
        return None if t is None else {"f": t.statistic, "df_num": t.df_num, "df_den": t.df_den, "p": t.p}
    overall, *groups = result.group_rows()
    p = result.params
    return envelope(
        "mincer_zarnowitz", result.attribute, by_group(groups),
        settings={"n_bins": p.n_bins, "strategy": p.strategy, "level": p.level, "covariance": p.covariance,
                  "min_rows": p.min_rows},
        notes=result.notes, overall=by_group([overall])[overall["group"]], bins=result.bin_rows(),
        coverage=result.coverage_rows(), same_line=test(result.same_line), same_slope=test(result.same_slope),
        groups_compared=list(result.tested),
        coverage_differs=[{"nominal": nominal, "p": p} for nominal, p in result.coverage_differs])


def mean_calibration_display(result: RegressionCalibration, target: str = "target", focus: Focus = Focus(),
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



def params_of(options) -> RegressionParams:
    return RegressionParams(n_bins=options.calibration.n_bins, alpha=options.findings.alpha)


def _run(pred: Predictions, options) -> RegressionCalibration:
    return analyse_regression(pred, options.attribute, params_of(options),
                              quantiles=pred.quantiles, quantile_levels=pred.quantile_levels)


def _display(pred: Predictions, result: RegressionCalibration, options=None) -> list[Item]:
    """The target's name reads in the sentences; the data's fingerprint keys the figures."""
    focus = options.focus_of() if options is not None else Focus()
    return mean_calibration_display(result, pred.mapping.label, focus, (getattr(pred, "fingerprint", None),))


SECTION = Section(
    "calibration_regression", _run,
    lambda pred, result, options: {"calibration": mean_calibration_to_dict(result)},
    title="Calibration in the mean", weighted=True, display=_display)
