"""Group parity beyond binary labels: the display lists of regression parity, multiclass parity and MATCH per class,
which the page, the HTML report and the terminal render. Not yet registered in ``audit.SECTIONS`` (the pages and
the audit wire them by task).

JSON (``to_dict`` of each result): regression — ``groups`` (bias, mae, rmse, mse, pearson, their ``*_ci``),
``pairs`` (``*_gap``, ``*_ratio``, ``w1``, ``ks``, ``auc``, each with ``*_p`` and ``*_p_adjusted``),
``bounded_loss``, ``proxy_gap``; multiclass — ``groups`` (confusion, accuracy, macro_f1 with CIs), ``per_class``
(one row per class × group: counts, tpr/fpr/ppr and their gaps with CIs, ofi with p and adjusted p, di,
four_fifths, parity_reading), ``gaps`` (tpr, fpr, ppr: GAP, per class, p_value); MATCH per class — ``results``
(class, group, metric, score, p_value, p_adjusted, …).
"""
from __future__ import annotations

import pandas as pd

from fairviz.core.display import Figure, Group, Item, Table, text
from fairviz.parity import task_figures as figs
from fairviz.parity import task_readings as readings
from fairviz.parity.one_vs_rest import MulticlassParity
from fairviz.parity.error_parity import PAIR_STATS, RegressionParity
from fairviz.sample_size.class_match import ClassMatch, class_match_figure, class_match_sentence

MAX_CONFUSION_FIGURES = 12      # per-group heatmaps drawn (largest groups); the JSON keeps every group's matrix

REGRESSION_GROUP_LABELS = {"group": "group", "n": "n", "bias": "bias ŷ − y", "bias_ci": "bias 95% CI",
                           "mae": "MAE", "mae_ci": "MAE 95% CI", "rmse": "RMSE", "rmse_ci": "RMSE 95% CI",
                           "pearson": "Pearson r"}
REGRESSION_PAIR_LABELS = {"group": "group", "other": "against", "n_group": "n", "n_other": "n (against)",
                          "bias_gap": "bias gap", "bias_gap_p_adjusted": "adj. p (bias)",
                          "mae_gap": "MAE gap", "mae_ratio": "MAE ratio", "mae_gap_p_adjusted": "adj. p (MAE)",
                          "rmse_gap": "RMSE gap", "rmse_ratio": "RMSE ratio", "rmse_gap_p_adjusted": "adj. p (RMSE)",
                          "w1": "W1", "w1_p_adjusted": "adj. p (W1)", "ks": "KS", "ks_p_adjusted": "adj. p (KS)",
                          "auc": "AUC", "auc_p_adjusted": "adj. p (AUC)"}
CLASS_LABELS = {"class": "class", "group": "group", "n": "n", "tpr": "TPR", "tpr_gap": "TPR gap",
                "tpr_gap_ci": "TPR gap 95% CI", "fpr": "FPR", "fpr_gap": "FPR gap", "ppr": "selection",
                "ppr_gap": "selection gap", "ofi": "OFI", "ofi_p_adjusted": "adj. p (OFI)", "di": "DI",
                "four_fifths": "four-fifths", "parity_reading": "reading"}
PERFORMANCE_LABELS = {"group": "group", "n": "n", "accuracy": "accuracy", "accuracy_ci": "accuracy 95% CI",
                      "macro_f1": "macro-F1", "macro_f1_ci": "macro-F1 95% CI"}
MATCH_LABELS = {"class": "class", "group": "group", "metric": "metric", "n": "n", "score": "score",
                "reference_score": "reference", "p_value": "p", "p_adjusted": "adj. p", "method": "method"}


def _formats(labels: dict, text_columns=("group", "other", "class", "four_fifths", "parity_reading", "metric",
                                         "method")) -> dict:
    out = {}
    for column in labels:
        if column in text_columns:
            out[column] = "text"
        elif column.startswith("n"):
            out[column] = "int"
        elif column.endswith("_ci"):
            out[column] = "ci"
        elif "p_" in column or column in ("p_value", "p_adjusted"):
            out[column] = "p"
        else:
            out[column] = "num"
    return out


def _table(records: list[dict], labels: dict, key: str, caption: str | None = None) -> Table:
    frame = pd.DataFrame(records, columns=list(labels))
    return Table(frame, key, _formats(labels), labels,
                 caption=None if caption is None else text("{note}", "note", note=caption))


# ----------------------------------------------------------------------------------------------- regression

def regression_display(result: RegressionParity, key: tuple | None = None) -> list[Item]:
    """The headline, the reference comparisons read, the figures, and the tables as detail."""
    units = result.params.units
    against = result.against_reference()
    lead = max(against, key=lambda p: abs(p.values["mae_gap"]), default=None)
    items: list[Item] = [readings.regression_headline(result), readings.regression_about(units),
                         *(text("{warning}", "caveat", warning=w) for w in result.warnings)]
    if result.snapped:
        items.append(text("Many distinct errors or predictions: the intervals resample them on a 2,048-point grid "
                          "and the p-values on a 512-point grid (the estimates themselves are exact).", "caveat"))
    error_items: list[Item] = [Figure(lambda: figs.error_figure(result), _key(key, "errors"))]
    if lead is not None:
        error_items += [readings.pair_sentence(lead, "bias_gap", units), readings.pair_sentence(lead, "mae_gap", units)]
    error_items += [readings.bounded_sentence(b, units) for b in result.bounded]
    prediction_items: list[Item] = [Figure(lambda: figs.prediction_figure(result), _key(key, "predictions"))]
    if against:
        far = max(against, key=lambda p: p.values["w1"])
        prediction_items += [readings.pair_sentence(far, "w1", units), readings.pair_sentence(far, "auc", units)]
    return items + [
        Group("Error parity: bias, MAE and RMSE per group", tuple(error_items), key="errors"),
        Group("Prediction parity: how far apart the groups' predictions are", tuple(prediction_items),
              key="predictions"),
        Group("Proxy classes (Systematic Evaluation of Predictive Fairness)",
              (readings.proxy_sentence(result), Figure(lambda: figs.proxy_figure(result), _key(key, "proxy"))),
              key="proxy"),
        Group("Groups", (_table([g.to_dict() for g in result.groups], REGRESSION_GROUP_LABELS, "regression_groups"),),
              key="regression_groups", collapsed=True),
        Group("Pairs: gaps, distances and adjusted p-values",
              (_table([p.to_dict() for p in result.pairs], REGRESSION_PAIR_LABELS, "regression_pairs",
                      "Gaps are group − against; ratios group ÷ against. Adjusted p: Benjamini–Hochberg over the "
                      f"pairs, one family per statistic ({', '.join(PAIR_STATS)})."),),
              key="regression_pairs", collapsed=True),
    ]


# ----------------------------------------------------------------------------------------------- multiclass

def multiclass_display(result: MulticlassParity, match: ClassMatch | None = None,
                       key: tuple | None = None) -> list[Item]:
    """GAP and the most disparate class × group read; per-class rates, confusion matrices, performance and MATCH
    per class as detail."""
    items: list[Item] = [readings.multiclass_headline(result),
                         *(text("{warning}", "caveat", warning=w) for w in result.warnings)]
    cell = readings.most_disparate_cell(result)
    per_class: list[Item] = [Figure(lambda: figs.class_rate_figure(result, "tpr"), _key(key, "rates", "tpr"))]
    if cell is not None:
        per_class.append(readings.cell_sentence(cell, result.reference))
    per_class.append(text("One vs rest: for class c, the class's rows are the positives and being predicted c is "
                          "the outcome; OFI and DI read it as the binary audit does (OFI > 0: the group is predicted c "
                          "more than its labels warrant, relative to {ref}).", "note", ref=result.reference))
    per_class.append(_table([c.to_dict() for c in result.per_class], CLASS_LABELS, "class_parity",
                            "Gaps are group − reference (Wald 95% CIs); adjusted p: Benjamini–Hochberg over "
                            "classes × groups."))
    shown = sorted(result.groups, key=lambda g: -g.n)[:MAX_CONFUSION_FIGURES]
    confusion: list[Item] = [readings.performance_sentence(result),
                             _table([g.to_dict() for g in result.groups], PERFORMANCE_LABELS, "class_performance")]
    confusion += [Figure(lambda g=g: figs.confusion_figure(g, result.classes), _key(key, "confusion", g.name))
                  for g in shown]
    groups: list[Item] = [
        Group("Per class, one vs rest: TPR, FPR, selection, OFI and DI", tuple(per_class), key="class_parity"),
        Group("Other rates' GAP", (Figure(lambda: figs.class_rate_figure(result, "fpr"), _key(key, "rates", "fpr")),
                                   Figure(lambda: figs.class_rate_figure(result, "ppr"), _key(key, "rates", "ppr"))),
              key="class_gaps", collapsed=True),
        Group("Confusion matrices, accuracy and macro-F1 per group", tuple(confusion), key="class_confusion",
              collapsed=True)]
    if match is not None:
        groups.append(Group("MATCH per class", tuple(class_match_display(match, key)), key="class_match",
                            collapsed=True))
    return items + groups


def class_match_display(match: ClassMatch, key: tuple | None = None) -> list[Item]:
    metric = "tpr" if "tpr" in match.params.metrics else match.params.metrics[0]
    rows = match.to_dict()["results"]
    return [class_match_sentence(match),
            Figure(lambda: class_match_figure(match, metric), _key(key, "class_match", metric)),
            _table(rows, MATCH_LABELS, "class_match",
                   "Adjusted p: Benjamini–Hochberg over every class × group × metric of the table.")]


def _key(key: tuple | None, *what) -> tuple | None:
    return None if key is None else (*key, *what)
