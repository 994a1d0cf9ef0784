"""The residual-distribution sections of the audit ([1]): their JSON (groups, pairs, knees, knee concentration;
threshold invariance) and their display lists, which the page, the HTML report and the terminal render.

The JSON rows and the displayed tables are read from the same tables of the result (``ResidualAudit.group_table``,
``pair_table``, …); the sentences come from ``fairviz.residuals.readings``. The sections read the audit's settings
as ``options`` (duck-typed: ``attribute``, ``threshold``, ``rdf``, ``progress``, ``focus_of()``; the report's
``AuditParams``), so that this concept stays below the report.
"""
from __future__ import annotations

import weakref

import numpy as np

from fairviz.core.checks import Check, Section
from fairviz.core.display import Figure, Group, Item, Metric, Metrics, Table, Text, join, text
from fairviz.core.focus import Focus
from fairviz.data import Predictions
from fairviz.data.tasks import BINARY, REGRESSION
from fairviz.residuals import (
    GAP_METRICS,
    METRIC_NAMES,
    RDF_METRICS,
    ResidualAudit,
    ThresholdInvarianceResult,
    analyse,
    at_threshold,
    readings,
    threshold_invariance,
)
from fairviz.residuals import figures as figs
from fairviz.residuals.results import (
    GROUP_COLUMNS,
    PAIR_COLUMNS,
    REGRESSION_GROUP_COLUMNS,
    REGRESSION_PAIR_COLUMNS,
)


# ----------------------------------------------------------------------------------------------- JSON

def rdf_to_dict(rdf: ResidualAudit) -> dict:
    """The residual section's JSON, from the audit's tables (its rates at the audit's τ attached)."""
    group_columns, pair_columns = ((REGRESSION_GROUP_COLUMNS, REGRESSION_PAIR_COLUMNS) if rdf.numeric_target else
                                   (GROUP_COLUMNS, PAIR_COLUMNS))
    groups = {row["group"]: {k: row[k] for k in group_columns} for row in rdf.group_table().to_dict("records")}
    pairs = [{k: row[k] for k in pair_columns} for row in rdf.pair_table().to_dict("records")]
    # a regression's residuals are in the target's units: the JSON says which (a binary one's keys stay as they were)
    task = {"task": rdf.task, "residual": "D = prediction - target", "unit": rdf.unit,
            "f_pattern_span": rdf.span} if rdf.numeric_target else {}
    return {**task,
        "groups": groups,
        "pairs": pairs,
        "knees": rdf.knee_table(),
        "pooled_knees": rdf.pooled_knee_table(),
        "knee_concentration": rdf.concentration_record(),
        "rdf_settings": rdf.settings_record(),
        "warnings": list(rdf.warnings),
    }


# ----------------------------------------------------------------------------------------------- display

GROUP_TABLE = {"group": ("group", "text"), "n": ("n", "int"), "base_rate": ("base rate", "num"),
               "ppr": ("positive rate", "num"), "tpr": ("TPR", "num"), "fpr": ("FPR", "num"),
               "mean_score": ("mean score", "num"), "mean_residual": ("mean residual", "num"),
               "median_residual": ("median residual", "num"), "median_residual_y0": ("median residual Y=0", "num"),
               "median_residual_y1": ("median residual Y=1", "num"), "ece": ("ECE", "num"),
               "ece_regime": ("calibration", "text"), "left_knee": ("left knee", "text"),
               "right_knee": ("right knee", "text")}
PAIR_TABLE = {"pair": ("pair (i vs j)", "text"), "f_pattern": ("F_pattern", "num"),
              "f_pattern_ci": ("F_pattern CI", "ci"), "p_value_median": ("p (medians)", "p"),
              "f_dist": ("F_dist", "num"), "f_dist_ci": ("F_dist CI", "ci"), "p_value_dist": ("p (F_dist)", "p"),
              "f_h": ("F_h", "num"), "f_h_ci": ("F_h CI", "ci"), "f_v": ("F_v", "num"), "f_v_ci": ("F_v CI", "ci"),
              "dp_diff": ("DP gap (i−j)", "num"), "eo_tpr_diff": ("TPR gap", "num"), "eo_fpr_diff": ("FPR gap", "num")}
PAIR_DETAIL_TABLE = {"pair": ("pair (i vs j)", "text"), "f_pattern_y0": ("F_pattern Y=0", "num"),
                     "f_pattern_y1": ("F_pattern Y=1", "num"), "f_dist_y0": ("F_dist Y=0", "num"),
                     "f_dist_y1": ("F_dist Y=1", "num"), "f_h_abs": ("F_h_abs", "num"), "f_v_abs": ("F_v_abs", "num")}
DECOMPOSITION_TABLE = {"pair": ("pair", "text"), "mean_residual_gap": ("mean residual gap", "num4"),
                       "mean_score_gap": ("mean score gap", "num4"), "base_rate_gap": ("base rate gap", "num4"),
                       "f_pattern_mean": ("F_pattern (mean)", "num4")}
GAP_TABLE = {"pair": ("pair", "text"), "dp_diff_direct": ("DP gap counted", "num4"),
             "dp_diff_residual": ("DP gap from residuals", "num4"),
             "eo_tpr_diff_direct": ("TPR gap counted", "num4"), "eo_tpr_diff_residual": ("TPR gap from residuals", "num4"),
             "eo_fpr_diff_direct": ("FPR gap counted", "num4"), "eo_fpr_diff_residual": ("FPR gap from residuals", "num4")}


# a regression's tables: D and its gaps in the target's units, no outcome, no threshold
REGRESSION_GROUP_TABLE = {"group": ("group", "text"), "n": ("n", "int"), "mean_target": ("mean target", "num"),
                          "mean_prediction": ("mean prediction", "num"), "mean_residual": ("mean residual", "num"),
                          "median_residual": ("median residual", "num"), "left_knee": ("left knee", "text"),
                          "right_knee": ("right knee", "text")}
REGRESSION_PAIR_TABLE = {k: v for k, v in PAIR_TABLE.items() if k not in ("dp_diff", "eo_tpr_diff", "eo_fpr_diff")}
REGRESSION_PAIR_DETAIL_TABLE = {"pair": ("pair (i vs j)", "text"), "f_pattern_mean": ("F_pattern (mean)", "num"),
                                "f_h_abs": ("F_h_abs", "num"), "f_v_abs": ("F_v_abs", "num")}
REGRESSION_DECOMPOSITION_TABLE = {"pair": ("pair", "text"), "mean_residual_gap": ("mean residual gap", "num4"),
                                  "mean_prediction_gap": ("mean prediction gap", "num4"),
                                  "mean_target_gap": ("mean target gap", "num4"),
                                  "f_pattern_mean": ("F_pattern (mean)", "num4")}


def _table(frame, columns: dict, key: str, title: Text | None = None) -> Table:
    """A display table of some columns of a result's table, with their headings and formats."""
    return Table(frame[list(columns)].reset_index(drop=True), key,
                 formats={c: kind for c, (_, kind) in columns.items()},
                 labels={c: heading for c, (heading, _) in columns.items()}, title=title)


def figure_key(pred: Predictions, rdf: ResidualAudit, *what) -> tuple:
    """What a figure of this audit draws: the data, the attribute, every parameter (the app keeps figures by it)."""
    return ("rdf", pred.fingerprint, rdf.attribute, rdf.params, *what)


def display(pred: Predictions, rdf: ResidualAudit, options) -> list[Item]:
    """The residual section in reading order: warnings, the curves and their reading, then one group per tab of
    the page (pair metrics, groups, Theorem 6.1, knee error concentration). A regression's has no Theorem 6.1 group
    (no threshold) and says so once."""
    if rdf.numeric_target:
        return [*[readings.warning(w) for w in rdf.warnings], readings.REGRESSION_NOTE,
                curves_group(pred, rdf, options.focus_of()), pairs_group(rdf), pairs_detail_group(rdf),
                groups_group(rdf), concentration_group(pred, rdf)]
    if rdf.at_threshold is None or rdf.at_threshold.threshold != options.threshold:
        raise ValueError("display reads the rates at the audit's threshold: attach them with at_threshold")
    return [*[readings.warning(w) for w in rdf.warnings],
            curves_group(pred, rdf, options.focus_of()), pairs_group(rdf), pairs_detail_group(rdf), groups_group(rdf),
            threshold_group(pred, rdf),
            concentration_group(pred, rdf)]


def curves_group(pred: Predictions, rdf: ResidualAudit, focus: Focus = Focus()) -> Group:
    """The sorted residual curves of every group and the outcome panels ([1] §4), with the reading. The page
    draws its own curves (groups and outcome picked) beside this reading."""
    def hover():                    # a label per row costs ~0.5 s a million rows: only when a figure is drawn
        return pred.row_labels() if pred.weight is None else _ExpandedRowLabels()

    if rdf.numeric_target:            # one curve per group: no outcome panels
        return Group("Sorted residuals", (
            Figure(lambda: figs.sorted_residual_plot(rdf, hover_labels=hover()), figure_key(pred, rdf, "sorted")),
            readings.curves_reading(rdf, focus)), key="curves")
    return Group("Sorted residuals", (
        Figure(lambda: figs.sorted_residual_plot(rdf, hover_labels=hover()), figure_key(pred, rdf, "sorted")),
        Figure(lambda: figs.outcome_panels(rdf, hover_labels=hover()), figure_key(pred, rdf, "panels")),
        readings.curves_reading(rdf, focus)), key="curves")


def pairs_group(rdf: ResidualAudit) -> Group:
    items: list[Item]
    if rdf.numeric_target:
        items = [_table(rdf.pair_table(), REGRESSION_PAIR_TABLE, "pairs"),
                 readings.regression_pairs_note(rdf.params, rdf.unit, rdf.span)]
    else:
        items = [_table(rdf.pair_table(), PAIR_TABLE, "pairs"), readings.pairs_note(rdf.params)]
    items += [readings.pair_warning(p.group_i, p.group_j, w) for p in rdf.pairs for w in p.warnings]
    return Group("Residual distribution metrics per pair", tuple(items), key="pairs")


def pairs_detail_group(rdf: ResidualAudit) -> Group:
    """Detail (the page's pair tab, the report's closed block; not the terminal): the metrics by outcome and the
    knee gaps unnormalised."""
    if rdf.numeric_target:
        return Group("Knee gaps unnormalised, and the mean parity",
                     (_table(rdf.pair_table(), REGRESSION_PAIR_DETAIL_TABLE, "pairs_detail"),),
                     key="pairs_detail", collapsed=True)
    return Group("By outcome, and knee gaps unnormalised", (_table(rdf.pair_table(), PAIR_DETAIL_TABLE, "pairs_detail"),),
                 key="pairs_detail", collapsed=True)


def groups_group(rdf: ResidualAudit) -> Group:
    if rdf.numeric_target:
        return Group("Groups", (
            _table(rdf.group_table(), REGRESSION_GROUP_TABLE, "groups"),
            readings.regression_decomposition(rdf.unit),
            _table(rdf.decomposition_table(), REGRESSION_DECOMPOSITION_TABLE, "mean_decomposition"),
            readings.knees_note(rdf.params.knees)), key="groups")
    return Group("Groups", (
        _table(rdf.group_table(), GROUP_TABLE, "groups"),
        readings.DECOMPOSITION,
        _table(rdf.decomposition_table(), DECOMPOSITION_TABLE, "mean_decomposition"),
        readings.knees_note(rdf.params.knees),
        readings.BASE_RATES), key="groups")


def threshold_group(pred: Predictions, rdf: ResidualAudit) -> Group:
    """[1] Theorem 6.1 at the audit's τ: the rates counted equal the rates read off the residual CDFs."""
    check = rdf.at_threshold
    return Group("Theorem 6.1: rates from residuals", (
        Figure(lambda: figs.threshold_figure(check), ("rdf.threshold", pred.fingerprint, rdf.attribute,
                                                      check.threshold)),
        _table(check.gap_table(), GAP_TABLE, "threshold_gaps"),
        readings.THRESHOLD_NOTE), key="threshold")


def concentration_group(pred: Predictions, rdf: ResidualAudit) -> Group:
    """[1] §8.2: the knee/non-knee error ratio, its test and the verdict for the calibration regime."""
    c = rdf.concentration
    if rdf.numeric_target:
        metrics = Metrics(tuple(Metric(text(label), value, help)
                                for label, value, help in readings.regression_concentration_metrics(c)))
        return Group("Knee error concentration", (
            metrics,
            readings.regression_concentration(c, rdf.unit),
            Figure(lambda: figs.concentration_figure(rdf), figure_key(pred, rdf, "concentration"))),
            key="concentration")
    metrics = Metrics(tuple(Metric(text(label), value, help) for label, value, help in readings.concentration_metrics(c)))
    return Group("Knee error concentration", (
        metrics,
        readings.concentration_verdict(c),
        Figure(lambda: figs.concentration_figure(rdf), figure_key(pred, rdf, "concentration")),
        readings.concentration_note(c, rdf.params.resamples)), key="concentration")


class _ExpandedRowLabels:
    """Hover labels of weighted data, made only for the rows a figure draws (≤ 2,000 per curve): curves index rows of
    ``Predictions.rows()`` (the table carries no id column), so a 20M-row audit never builds 20M label strings."""

    def __getitem__(self, rows) -> np.ndarray:
        return np.array([f"row {i}" for i in np.asarray(rows).ravel()], dtype=object)


# ----------------------------------------------------------------------------------------------- running

# The residual section's audit while someone still holds it (the audit runner, until its JSON is written): the
# threshold-invariance section reads its RDF metrics instead of re-detecting every knee (weak: never kept alive here).
_AUDITS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _audit_key(pred: Predictions, options):
    return (pred.fingerprint, options.attribute, options.rdf.knees) if pred.fingerprint else None


def _run(pred: Predictions, options) -> ResidualAudit:
    audit = at_threshold(analyse(pred, options.attribute, options.rdf, progress=options.progress), pred,
                         options.threshold)
    if (key := _audit_key(pred, options)) is not None:
        _AUDITS[key] = audit
    return audit


def _run_invariance(pred: Predictions, options) -> ThresholdInvarianceResult:
    key = _audit_key(pred, options)
    audit = _AUDITS.get(key) if key is not None else None
    return threshold_invariance(pred, options.attribute, knees=options.rdf.knees, audit=audit)


SECTION = Section("residuals", _run, lambda pred, result, options: rdf_to_dict(result),
                  title="Residual distribution fairness", weighted=True, display=display)


# ----------------------------------------------------------------------------------------------- threshold invariance

INVARIANCE_TABLE = {"pair": ("pair", "text"), **{m: (METRIC_NAMES[m], "text") for m in RDF_METRICS + GAP_METRICS}}


def invariance_to_dict(result: ThresholdInvarianceResult) -> dict:
    return {"threshold_invariance": result.to_dict()}


def invariance_display(pred: Predictions, result: ThresholdInvarianceResult, options) -> list[Item]:
    """[1] App. D.1, Table 5: the metrics across τ for the first pair (the page picks the pair), the CV of every
    metric per pair, and what they show."""
    return [Group("Metrics across thresholds", (Figure(lambda: figs.invariance_figure(result)),), key="invariance_figure"),
            _table(_cv_cells(result.cv_table(RDF_METRICS + GAP_METRICS)), INVARIANCE_TABLE, "invariance_cv"),
            join(readings.invariance_reading(result, GAP_METRICS, METRIC_NAMES), " ", readings.INVARIANCE_NOTE,
                 level="note")]


def _cv_cells(frame):
    """CV% as the table reads it ("12.34%", "undefined"): the display's formats have no percent that is already
    scaled, so the cells are text (the JSON keeps the numbers, ``ThresholdInvarianceResult.to_dict``)."""
    out = frame.copy()
    for m in RDF_METRICS + GAP_METRICS:
        out[m] = [readings.cv_percent(v) for v in frame[m]]
    return out


THRESHOLD_SECTION = Section("threshold_invariance", _run_invariance,
                            lambda pred, result, options: invariance_to_dict(result),
                            title="Threshold invariance (τ = 0.1…0.9)", weighted=True, display=invariance_display)


# ----------------------------------------------------------------------------------------------- the checks

# one method serves both tasks: the audit branches once on the spec's ``numeric_target`` (D in the target's units)
CHECK = Check("residuals", {BINARY.name: SECTION, REGRESSION.name: SECTION})
# only a task with a decision at τ has a threshold to vary
THRESHOLD_CHECK = Check("threshold_invariance", {BINARY.name: THRESHOLD_SECTION})
