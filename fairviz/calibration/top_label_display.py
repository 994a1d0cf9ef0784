"""Top-label and class-wise calibration of class probabilities (``top_label_ece``): the calibration check's method
for a label of several classes. Its JSON (per-group top-label and class-wise calibration, reliability bins, ECE gaps
against the reference) and its display list."""
from __future__ import annotations

from fairviz.calibration import figures, readings
from fairviz.calibration.record_table import record_table as _table
from fairviz.calibration.section_json import by_group, envelope
from fairviz.calibration.top_label_ece import MulticlassCalibration, MulticlassParams, analyse_multiclass
from fairviz.core.checks import Section
from fairviz.core.display import Bullets, Figure, Group, Item, Metric, Metrics, Table, text
from fairviz.core.focus import Focus
from fairviz.core.wording import fmt, fmt_interval
from fairviz.data import Predictions


def top_label_calibration_to_dict(result: MulticlassCalibration) -> dict:
    """The ``calibration`` record of top-label and class-wise calibration: per-group records (all rows under
    ``overall``), each group's ECE gaps against the reference as ``pairs``, each class per group, the reliability
    bins (``section_json.envelope``)."""
    p = result.params
    overall, *groups = result.group_rows()
    return envelope(
        "top_label_ece", result.attribute, by_group(groups),
        settings={"n_bins": p.n_bins, "strategy": p.strategy, "ece_bins": p.ece_bins, "level": p.level,
                  "ci_method": p.ci_method, "resamples": p.resamples, "seed": p.seed, "min_rows": p.min_rows},
        notes=result.notes, pairs=result.gap_rows(), reference=result.reference, classes=list(result.classes),
        classwise_available=result.classwise, overall=by_group([overall])[overall["group"]],
        classes_by_group=result.class_rows(), bins=result.bin_rows())


def top_label_calibration_display(result: MulticlassCalibration, focus: Focus = Focus(),
                                  ident: tuple = ()) -> list[Item]:
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



def params_of(options) -> MulticlassParams:
    c = options.calibration
    return MulticlassParams(n_bins=c.n_bins, strategy=c.strategy, resamples=c.resamples, seed=c.seed,
                            alpha=options.findings.alpha)


def _run(pred: Predictions, options) -> MulticlassCalibration:
    return analyse_multiclass(pred, options.attribute, params_of(options), reference=options.findings.reference,
                              progress=options.progress)


def _display(pred: Predictions, result: MulticlassCalibration, options=None) -> list[Item]:
    focus = options.focus_of() if options is not None else Focus()
    return top_label_calibration_display(result, focus, (getattr(pred, "fingerprint", None),))


SECTION = Section(
    "calibration_multiclass", _run,
    lambda pred, result, options: {"calibration": top_label_calibration_to_dict(result)},
    title="Calibration: top-label and class-wise", weighted=True, display=_display)
