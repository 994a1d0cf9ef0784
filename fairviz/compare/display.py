"""The comparison of models as one display list (the page's Compare tab, the HTML report right after the Summary, the
terminal) and as ``comparison.<a>_vs_<b>`` in the JSON. ``topic`` picks what a page shows of it: 'calibration'
(ECE, log-loss, Brier, AUROC and the overlaid reliability diagrams), 'residuals' (F_dist and the overlaid sorted
residuals), 'parity' (OFI, DI, the FPR gap and the rates at τ); None: everything.

The method follows the task's spec: scores of a label are compared metric by metric (``ModelComparison``), a numeric
target's models by their paired errors (``ErrorComparison``, the same display whatever the topic); ``compare_all``,
``to_dict``, ``display`` and ``report_display`` take either."""
from __future__ import annotations

from dataclasses import asdict, is_dataclass

import pandas as pd

from fairviz.compare import (DIFFERENCE_TITLES, TOPIC_COLUMNS, TOPIC_METRICS, CompareParams, ModelComparison,
                             compare_models, figures, readings)
from fairviz.compare.paired_errors import ErrorComparison, by_errors, compare_errors
from fairviz.core.display import Figure, Group, Item, Table, heading, text
from fairviz.data import Predictions
from fairviz.data.tasks import spec_of

TOPICS = ("calibration", "residuals", "parity")
HEADLINE_LABELS = {"model": "Model", "group": "Group", "n": "Rows", "ece": "ECE", "auroc": "AUROC",
                   "log_loss": "log-loss", "brier": "Brier", "selection_rate": "Selection rate at τ",
                   "fpr": "FPR at τ", "fnr": "FNR at τ", "f_dist": "F_dist vs reference",
                   "knee_ratio": "Knee concentration"}
DIFFERENCE_LABELS = {"metric": "Metric", "group": "Group", "reference": "Against", "value_a": "", "value_b": "",
                     "difference": "Δ (second − first)", "ci": "95% CI", "p_value": "p", "p_adjusted": "p (BH)",
                     "test": "Test", "n": "Rows"}


def words_of(words) -> dict:
    """The sample's words (``OutcomeWords`` or a dict) as a dict; {} when there are none."""
    if words is None:
        return {}
    return asdict(words) if is_dataclass(words) else dict(words)


def compare_all(pred: Predictions, attribute: str, threshold: float, benefit: str, reference: str | None,
                params: CompareParams, units: str | None = None) -> dict[str, ModelComparison | ErrorComparison]:
    """The first model against each other model: a numeric target's or classes' by their paired errors (in
    ``units``), else at ``threshold`` and ``benefit``."""
    joint = pred.joint()
    first, *others = joint.model_names
    if by_errors(joint):
        return {f"{first}_vs_{other}": compare_errors(joint, attribute, reference, first, other, params, units)
                for other in others}
    return {f"{first}_vs_{other}": compare_models(joint, attribute, threshold, benefit, reference, first, other,
                                                  params) for other in others}


def to_dict(result: ModelComparison | ErrorComparison, words=None) -> dict:
    """``comparison.<a>_vs_<b>`` in the JSON, its readings included."""
    if isinstance(result, ErrorComparison):
        return result.to_dict([t.plain() for t in readings.error_readings(result)])
    return result.to_dict([t.plain() for t in readings.readings(result, words_of(words))])


def display(result: ModelComparison | ErrorComparison, topic: str | None = None, words=None,
            titled: bool = True) -> list[Item]:
    """The comparison's display list: the readings, the headline table, the paired differences and the overlaid
    figures, each limited to ``topic`` when given; ``titled``: opened by a heading naming the two models. Paired
    errors show everything whatever the topic."""
    if isinstance(result, ErrorComparison):
        return errors_display(result, titled)
    if topic is not None and topic not in TOPICS:
        raise ValueError(f"unknown topic {topic!r}: use one of {', '.join(TOPICS)}")
    items: list[Item] = [heading("**{b}** against **{a}**", b=result.model_b, a=result.model_a)] if titled else []
    items += [readings.INTRO, *readings.readings(result, words_of(words))]
    items.append(headline_table(result, topic))
    items.append(difference_table(result, topic))
    key = (result.model_a, result.model_b, result.attribute, result.threshold, result.benefit, result.reference,
           result.params, result.fingerprint)
    if topic in (None, "calibration"):
        items.append(Figure(lambda: figures.reliability_overlay(result), ("compare.reliability", *key)))
    if topic in (None, "residuals"):
        items.append(Figure(lambda: figures.residual_overlay(result), ("compare.residuals", *key)))
    items += [text("{note}", "note", note=note) for note in result.notes]
    return items


def headline_table(result: ModelComparison, topic: str | None) -> Table:
    columns = ["model", "group", "n", *(TOPIC_COLUMNS[topic] if topic else
                                        ("ece", "auroc", "log_loss", "brier", "selection_rate", "fpr", "fnr",
                                         "f_dist", "knee_ratio"))]
    formats = {c: "num" for c in columns}
    formats.update(model="text", group="text", n="int")
    return Table(result.table[columns].reset_index(drop=True), "compare_models", formats, HEADLINE_LABELS,
                 title=text("Every headline metric per model and group"),
                 caption=text("F_dist: the Wasserstein distance between the group's residuals and the reference's "
                              "({reference}); knee concentration: mean |D| in the knee regions over elsewhere (the "
                              "Residual page's ratio, each model's own knees); rates at τ = {tau:g} on the label "
                              "(selection rate: score ≥ τ), as every page names them.",
                              reference=result.reference, tau=result.threshold))


def difference_table(result: ModelComparison, topic: str | None) -> Table:
    wanted = TOPIC_METRICS[topic] if topic else tuple(DIFFERENCE_TITLES)
    rows = [{"metric": DIFFERENCE_TITLES[d.metric], "group": d.group or "every row", "reference": d.reference or "",
             "value_a": d.value_a, "value_b": d.value_b, "difference": d.difference, "ci": d.ci.to_list(),
             "p_value": d.p_value, "p_adjusted": d.p_adjusted, "test": d.test, "n": d.n}
            for d in result.differences if d.metric in wanted]
    labels = {**DIFFERENCE_LABELS, "value_a": result.model_a, "value_b": result.model_b}
    formats = {"metric": "text", "group": "text", "reference": "text", "value_a": "num", "value_b": "num",
               "difference": "num", "ci": "ci", "p_value": "p", "p_adjusted": "p", "test": "text", "n": "int"}
    return Table(pd.DataFrame(rows, columns=list(DIFFERENCE_LABELS)), "compare_differences", formats, labels,
                 title=text("Paired differences, second model minus first"),
                 caption=text("Benjamini–Hochberg adjusts the p-values over all {tests} differences of the "
                              "comparison (every metric, group and pair), not only those shown here.",
                              tests=len(result.differences)))


def report_display(comparisons: dict, words=None) -> list[Item]:
    """What the HTML report and the terminal show right after the Summary: each comparison whole."""
    return [Group(f"{r.model_b} against {r.model_a}", tuple(display(r, None, words, titled=False)), key=name)
            for name, r in comparisons.items()]


ERROR_LABELS = {"model": "Model", "group": "Group", "n": "Rows", "mae": "MAE", "bias": "Bias (ŷ − y)",
                     "mse": "MSE", "rmse": "RMSE", "error_rate": "Error rate"}


def errors_display(result: ErrorComparison, titled: bool = True) -> list[Item]:
    """A comparison of paired errors (``fairviz.compare.paired_errors``): readings, errors per model and group, the
    paired differences and the MAE difference per group."""
    items: list[Item] = [heading("**{b}** against **{a}**", b=result.model_b, a=result.model_a)] if titled else []
    numeric = spec_of(result.task).numeric_target
    items += [readings.ERRORS_INTRO if numeric else readings.CLASS_ERRORS_INTRO, *readings.error_readings(result)]
    columns = [c for c in ERROR_LABELS if c in result.table.columns]
    formats = {c: "num" for c in columns} | {"model": "text", "group": "text", "n": "int"}
    caption = text("Bias > 0: the model over-predicts on average; MAE, MSE and RMSE in the target's units{units}.",
                   units=f" ({result.units})" if result.units else "") if numeric else \
        text("The error rate: the share of rows whose predicted class is not the label.")
    items.append(Table(result.table[columns].reset_index(drop=True), "compare_regression", formats, ERROR_LABELS,
                       title=text("Errors per model and group"), caption=caption))
    rows = [{"metric": d.title, "group": d.group or "every row", "reference": d.reference or "",
             "value_a": d.value_a, "value_b": d.value_b, "difference": d.difference, "ci": d.ci.to_list(),
             "p_value": d.p_value, "p_adjusted": d.p_adjusted, "test": d.test, "n": d.n} for d in result.differences]
    labels = {**DIFFERENCE_LABELS, "value_a": result.model_a, "value_b": result.model_b}
    formats = {"metric": "text", "group": "text", "reference": "text", "value_a": "num", "value_b": "num",
               "difference": "num", "ci": "ci", "p_value": "p", "p_adjusted": "p", "test": "text", "n": "int"}
    items.append(Table(pd.DataFrame(rows, columns=list(DIFFERENCE_LABELS)), "compare_differences", formats, labels,
                       title=text("Paired differences, second model minus first"),
                       caption=text("A gap is the group's value minus the reference's ({reference}); its Δ is how "
                                    "much the second model changes it. Benjamini–Hochberg over all {tests} "
                                    "differences.", reference=result.reference, tests=len(result.differences))))
    key = (result.model_a, result.model_b, result.attribute, result.reference, result.fingerprint)
    metric = "mae" if numeric else "error_rate"
    items.append(Figure(lambda: figures.error_forest(result, metric), ("compare.regression", *key)))
    items += [text("{note}", "note", note=note) for note in result.notes]
    return items
