"""Calibration beyond binary predictions (issue 25): the JSON and the display list of regression calibration in the
mean and of multiclass (top-label and class-wise) calibration. Each result becomes ONE display list that the page,
the HTML report and the terminal render; its tables are the result's records, as in ``report.calibration``."""
from __future__ import annotations

import pandas as pd

from fairviz.calibration import figures, readings
from fairviz.calibration.mincer_zarnowitz import RegressionCalibration
from fairviz.calibration.top_label_ece import MulticlassCalibration
from fairviz.core.display import Bullets, Figure, Group, Item, Metric, Metrics, Table, text
from fairviz.core.focus import Focus
from fairviz.core.wording import fmt, fmt_interval, fmt_p


# ------------------------------------------------------------------------------------------------ JSON

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


def _table(rows: list[dict], key: str, columns: dict, title=None) -> Table:
    frame = pd.DataFrame(rows, columns=list(columns))
    return Table(frame, key, formats={c: f for c, (_, f) in columns.items() if f},
                 labels={c: label for c, (label, _) in columns.items()}, title=title)


# ------------------------------------------------------------------------------------------------ regression

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


# ------------------------------------------------------------------------------------------------ multiclass

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


# ------------------------------------------------------------------------------------------------ from predictions

def display(pred, result: RegressionCalibration | MulticlassCalibration, params=None) -> list[Item]:
    """The display list of either result for ``pred`` (the target's name, the data's fingerprint for figure keys,
    the audit's focus)."""
    focus = params.focus_of() if params is not None else Focus()
    ident = (getattr(pred, "fingerprint", None),)
    if isinstance(result, RegressionCalibration):
        return regression_display(result, pred.mapping.label, focus, ident)
    return multiclass_display(result, focus, ident)
