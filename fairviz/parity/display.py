"""The group-parity check (``CHECK``): one method per task, each a ``Section`` whose JSON keys and display list the
page, the HTML report and the terminal render. The audit settings (``options``) are read, never imported.

JSON: every method writes ONE key, the check's name ``parity``, whose value has the same keys for every task —
``method``, ``attribute``, ``reference``, ``groups`` (group name → its row), ``pairs`` (where the method compares
pairs), ``settings``, ``warnings`` — and the method's own keys beside them:
- ``ofi_di_match_cps`` (a decision at τ: ``SECTION``): ``groups`` hold each group's counts in the benefit orientation
  and b, E[b], 𝓑; every ``pairs`` entry (group_i, group_j) holds ``ofi``, ``di``, ``dppl`` and the Table 3.2 metrics
  (``accd``, ``mccd``, ``pp``, ``te``, ``eo_fpr_gap``, ``eo_max_gap``, ``aaod``, ``dca``, ``dcr``) plus ``ppv_diff``,
  all taken on the benefit, and ``fpr_gap``, ``fnr_gap``, ``ppr_gap`` on the label (the FPR every section names), null
  when undefined (``parity_undefined`` says why), with the OFI test (``ofi_p_value``, ``ofi_ci``), the four-fifths
  verdict and the reading (``parity_reading``: algorithmic, possible, small, systemic or none); ``reference`` is the
  group the readings open on; ``settings`` the benefit orientation, threshold, MATCH reference and λ used. The
  sample-size check adds ``match`` and ``cps`` to the same envelope (``fairviz.sample_size.display``).
- ``error_prediction_parity`` (a numeric target: ``REGRESSION_PARITY``): ``groups`` (bias, mae, rmse, mse, pearson,
  their ``*_ci``), ``pairs`` (``*_gap``, ``*_ratio``, ``w1``, ``ks``, ``auc``, each with ``*_p`` and
  ``*_p_adjusted``), ``bounded_loss``, ``proxy_gap``, ``snapped``.
- ``one_vs_rest`` (classes: ``MULTICLASS_PARITY``): ``groups`` (confusion, accuracy, macro_f1 with CIs), ``classes``,
  ``per_class`` (one row per class × group: counts, tpr/fpr/ppr and their gaps with CIs, ofi with p and adjusted p, di,
  four_fifths, parity_reading), ``gaps`` (tpr, fpr, ppr: GAP, per class, p_value).

Every method but the benefit one compares groups with the Summary's reference (``options.findings.reference``;
None: the largest group), so the sections and the Summary read the same pairs.
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from fairviz.core.checks import Check, Section
from fairviz.core.confusion_metrics import flip
from fairviz.core.counts import ConfusionCounts
from fairviz.core.display import Figure, Group, Item, Metric, Metrics, Table, text
from fairviz.core.wording import fmt, fmt_p
from fairviz.data import Predictions
from fairviz.data.tasks import BINARY, MULTICLASS, REGRESSION
from fairviz.parity import figures as figs
from fairviz.parity import readings
from fairviz.parity import method_figures
from fairviz.parity import method_readings
from fairviz.parity.analysis import analyse
from fairviz.parity.di import FOUR_FIFTHS
from fairviz.parity.error_parity import PAIR_STATS, RegressionParity, RegressionParityParams, analyse_regression
from fairviz.parity.one_vs_rest import MulticlassParity, MulticlassParityParams, analyse_multiclass
from fairviz.parity.pair_metrics import LABEL_GAPS, PAIR_METRICS, TABLE_32, metric_label
from fairviz.parity.results import ParityAudit, ParityParams

PARITY = "parity"               # the check's name: its one JSON key, whichever task's method wrote it
BENEFIT_METHOD = "ofi_di_match_cps"   # a decision at τ: OFI and DI per pair here, MATCH and CPS by the sample size
MAX_PAIR_ROWS = 2000            # rows of the pair table shown; more groups than ~63 give more pairs than this
READING_COLUMNS = ("group_i", "group_j", "ofi", "ofi_p_value", "di", "four_fifths", "parity_reading")
PAIR_COLUMNS = ("group_i", "group_j", "ofi", "di", "dppl", "ofi_p_value", "four_fifths", "parity_reading",
                *(k for k in TABLE_32 if k not in ("ofi", "di", "dppl")), "ppv_diff", *LABEL_GAPS)
PAIR_LABELS = {"group_i": "i", "group_j": "j", **{k: m.label for k, m in PAIR_METRICS.items()},
               "ofi_p_value": "p (OFI)", "four_fifths": "four-fifths", "parity_reading": "reading",
               "ppv_diff": "PPV gap"}
GROUP_LABELS = {"group": "group", "n": "n", "tp": "TP", "fn": "FN", "fp": "FP", "tn": "TN",
                "benefit_rate": "benefit b = P̂/n", "expected_benefit": "warranted E[b] = P/n",
                "marginal_benefit": "marginal benefit 𝓑", "tpr": "TPR", "fpr": "FPR", "fnr": "FNR", "ppv": "PPV",
                "accuracy": "accuracy"}
PANELS = ("ofi", "di", "te", "pp")          # [3] Figure 3.2


def params_of(options) -> ParityParams:
    return ParityParams(threshold=options.threshold, benefit=options.benefit, alpha=options.match.alpha)


def parity_run(pred: Predictions, options) -> ParityAudit:
    return analyse(pred, options.attribute, params_of(options))


def parity_to_dict(pred: Predictions, audit: ParityAudit, options) -> dict:
    """The benefit method's envelope: every group's counts in the benefit orientation with b, E[b] and 𝓑; every pair
    (in group order: (0, 1), (0, 2), …, like the residual section's pairs); the reference its readings open on."""
    groups = {g.name: {**g.counts.to_dict(), "benefit_rate": g.benefit_rate, "expected_benefit": g.expected_benefit,
                       "marginal_benefit": g.marginal_benefit} for g in audit.groups}
    reference = options.focus_of().reference_of({g.name: g.n for g in audit.groups})
    settings = {"benefit": audit.params.benefit, "threshold": audit.params.threshold,
                "di_variant": audit.params.di_variant, "ofi_tolerance": audit.params.ofi_tolerance,
                "alpha": audit.params.alpha, "match_reference": options.match.reference,
                "match_method": options.match.method, "monte_carlo_draws": options.match.draws,
                "seed": options.match.seed, "cps_lambda": options.cps_lambda,
                "min_group_size": options.findings.min_group_size}
    return {PARITY: {"method": BENEFIT_METHOD, "attribute": audit.attribute, "reference": reference, "groups": groups,
                     "pairs": audit.pair_table(), "settings": settings, "warnings": list(audit.warnings)}}


# ----------------------------------------------------------------------------------------------- tables

def pair_frame(audit: ParityAudit) -> tuple[pd.DataFrame, int]:
    """Every pair's metrics as the JSON ``pairs`` rows hold them (at most MAX_PAIR_ROWS, largest |OFI| first
    when there are more), and how many pairs there are in all."""
    size = len(audit.groups) if audit.pair_groups is None else min(len(audit.groups), audit.pair_groups)
    total = size * (size - 1) // 2
    records = audit.pair_table(limit=MAX_PAIR_ROWS if total > MAX_PAIR_ROWS else None)
    return pd.DataFrame(records, columns=list(PAIR_COLUMNS)), total


def pair_labels(benefit: str) -> dict:
    """The pair table's column labels, saying which metrics are taken on the benefit (a negative benefit)."""
    return {**PAIR_LABELS, **{k: metric_label(k, benefit) for k in PAIR_METRICS if k != "ppv_diff"},
            "ppv_diff": metric_label("ppv_diff", benefit).replace(" (predictive parity)", "")}


def pairs_table(audit: ParityAudit) -> Table:
    frame, total = pair_frame(audit)
    formats = {c: "num4" for c in PAIR_COLUMNS}
    formats.update(group_i="text", group_j="text", ofi_p_value="p", four_fifths="text", parity_reading="text")
    caption = readings.PAIRS_NOTE if total <= MAX_PAIR_ROWS else (
        f"{total:,} pairs: showing the {MAX_PAIR_ROWS:,} with the largest |OFI|. " + readings.PAIRS_NOTE)
    return Table(frame, "pairs", formats, pair_labels(audit.params.benefit),
                 caption=text("{note}", "note", note=caption))


def pair_readings_table(audit: ParityAudit) -> Table:
    """OFI with its p-value, DI with its four-fifths verdict and the reading, one row per pair."""
    frame, _ = pair_frame(audit)
    formats = {"group_i": "text", "group_j": "text", "ofi": "num", "ofi_p_value": "p", "di": "num",
               "four_fifths": "text", "parity_reading": "text"}
    return Table(frame[list(READING_COLUMNS)], "pair_readings", formats, PAIR_LABELS)


def groups_table(audit: ParityAudit) -> Table:
    """Each group's counts in the benefit orientation, b, E[b] and 𝓑, and its TPR, FPR, FNR, PPV and accuracy on
    the label (the names mean what they mean on every page, whichever prediction is the benefit)."""
    rows = [{"group": g.name, "n": g.counts.n, **g.counts.to_dict(), "benefit_rate": g.benefit_rate,
             "expected_benefit": g.expected_benefit, "marginal_benefit": g.marginal_benefit,
             **_label_rates(g.counts, audit.params.benefit)} for g in audit.groups]
    frame = pd.DataFrame(rows)[list(GROUP_LABELS)]
    formats = {c: "num" for c in GROUP_LABELS}
    formats.update(group="text", n="int", tp="int", fn="int", fp="int", tn="int")
    return Table(frame, "groups", formats, GROUP_LABELS, caption=text("{note}", "note", note=readings.GROUPS_NOTE))


def _label_rates(counts: ConfusionCounts, benefit: str) -> dict:
    label = flip(counts) if benefit == "negative" else counts
    return {"tpr": label.tpr(), "fpr": label.fpr(), "fnr": label.fnr(), "ppv": label.ppv(),
            "accuracy": label.accuracy()}


def matrix_table(name: str, counts: ConfusionCounts, key: str) -> Table:
    """A group's confusion matrix: rows actual, columns predicted; the benefit is the chosen outcome."""
    frame = pd.DataFrame({"actual": ["deserved (actual +)", "not deserved (actual −)"],
                          "predicted benefit": [counts.tp, counts.fp], "predicted no benefit": [counts.fn, counts.tn]})
    return Table(frame, key, {"actual": "text", "predicted benefit": "int", "predicted no benefit": "int"},
                 title=readings.matrix_title(name, counts))


# ----------------------------------------------------------------------------------------------- display

def figure_key(pred: Predictions, audit: ParityAudit) -> tuple:
    """What the figures of this audit draw: the data and every parameter."""
    return ("parity", pred.fingerprint, audit.attribute, audit.params, audit.pair_groups)


def pair_display(audit: ParityAudit, metric: str, i: str, j: str, key: tuple | None = None) -> list[Item]:
    """One metric's heatmap with the pair (i, j) framed, the pair's reading, numbers and confusion matrices, and
    the benefit bars."""
    matrix = audit.matrices[metric]
    items: list[Item] = [
        Figure(lambda: figs.heatmap(matrix, highlight=(i, j)), _key(key, "heatmap", metric, i, j)),
        readings.metric_about(metric, audit.params.benefit)]
    if i == j:
        items.append(text("Pick two different groups to read a pair.", "finding"))
    else:
        reading = readings.read_audit_pair(audit, i, j)
        items += [readings.reading_text(reading), _pair_numbers(reading, metric, audit.params.benefit)]
        if metric not in ("ofi", "di") and reading.values[metric] is None:
            items.append(readings.undefined_words(metric, reading.reasons.get(metric, "")))
        items += [readings.ofi_test_words(reading),
                  text("**Their confusion matrices** (rows: actual, columns: predicted; *benefit* = the chosen "
                       "outcome)", "plain"),
                  matrix_table(i, reading.counts_i, "matrix_i"), matrix_table(j, reading.counts_j, "matrix_j")]
    items.append(Figure(lambda: figs.benefit_figure(audit, (i, j)), _key(key, "benefit", i, j)))
    return items


def panels(audit: ParityAudit, key: tuple | None = None) -> Group:
    """[3] Figure 3.2's panels, consistently coloured."""
    height = min(560, 150 + 45 * len(audit.groups))
    return Group("The thesis's Figure 3.2 panels: OFI, DI, TE and PP side by side", tuple(
        Figure(lambda m=m: figs.heatmap(audit.matrices[m], height=height,
                                        title=metric_label(m, audit.params.benefit)),
               _key(key, "panel", m)) for m in PANELS), key="panels", collapsed=True)


def _pair_numbers(reading, metric: str, benefit: str = "positive") -> Metrics:
    low, high = reading.test.ci
    third = (Metric(text("{label}", label=metric_label(metric, benefit)), fmt(reading.values[metric]))
             if metric not in ("ofi", "di") else Metric(text("DPPL (i − j)"), fmt(reading.values["dppl"])))
    return Metrics((
        Metric(text("OFI (i − j)"), fmt(reading.values["ofi"]),
               help=f"95% CI [{low:+.3f}, {high:+.3f}], p {fmt_p(reading.test.p_value)}"),
        Metric(text("DI (i ÷ j)"), fmt(reading.values["di"]),
               help=f"Four-fifths band [{FOUR_FIFTHS[0]}, {FOUR_FIFTHS[1]}]: {reading.di_rule}"),
        third))


def focus_pair(audit: ParityAudit, options) -> tuple[str, str]:
    """The pair read first: the Summary's top group against the reference group (never a group under the size
    floor while a larger one exists), else the most disparate pair when there is no reference pair to read."""
    pair = options.focus_of().pair_or_largest({g.name: g.counts.n for g in audit.groups})
    return pair if pair is not None else audit.most_disparate()


def display(pred: Predictions, audit: ParityAudit, options) -> list[Item]:
    """The benefit, the OFI and DI heatmaps with the most disparate pair read, every pair's reading; the Table 3.2
    metrics per pair and the groups' counts as detail."""
    key = figure_key(pred, audit)
    i, j = focus_pair(audit, options)
    return [
        readings.benefit_statement(audit.params.benefit, audit.params.threshold, pred.mapping.label,
                                   pred.mapping.positive_label),
        *(text("{warning}", "caveat", warning=w) for w in audit.warnings),
        Group("Group parity: OFI and DI", (
            Figure(lambda: figs.heatmap(audit.matrices["ofi"], highlight=(i, j)), _key(key, "heatmap", "ofi", i, j)),
            Figure(lambda: figs.heatmap(audit.matrices["di"]), _key(key, "heatmap", "di")),
            Figure(lambda: figs.benefit_figure(audit), _key(key, "benefit")),
            readings.reading_text(readings.read_audit_pair(audit, i, j))), key="heatmaps"),
        Group("Parity per pair: OFI, DI and the reading", (pair_readings_table(audit),), key="pair_readings"),
        Group("All Table 3.2 metrics per pair", (pairs_table(audit),), key="pairs", collapsed=True),
        Group("Groups and confusion matrices", (groups_table(audit),), key="groups", collapsed=True),
    ]


SECTION = Section("parity", parity_run, parity_to_dict, to_html=None, title="Group parity", weighted=True,
                  display=display)


# ------------------------------------------------------------------------------- tables of the other methods

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


def _formats(labels: dict, text_columns=("group", "other", "class", "four_fifths", "parity_reading")) -> dict:
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


def _group_rows(result) -> list[dict]:
    """Each group's JSON row with its name ahead (the JSON keys the rows by name)."""
    return [{"group": g.name, **g.to_dict()} for g in result.groups]


def _table(records: list[dict], labels: dict, key: str, caption: str | None = None) -> Table:
    frame = pd.DataFrame(records, columns=list(labels))
    return Table(frame, key, _formats(labels), labels,
                 caption=None if caption is None else text("{note}", "note", note=caption))


# ------------------------------------------------------------------------------------- a numeric target

def regression_display(result: RegressionParity, key: tuple | None = None) -> list[Item]:
    """The headline, the reference comparisons read, the figures, and the tables as detail."""
    units = result.params.units
    against = result.against_reference()
    lead = max(against, key=lambda p: abs(p.values["mae_gap"]), default=None)
    items: list[Item] = [method_readings.regression_headline(result), method_readings.regression_about(units),
                         *(text("{warning}", "caveat", warning=w) for w in result.warnings)]
    if result.snapped:
        items.append(text("Many distinct errors or predictions: the intervals resample them on a 2,048-point grid "
                          "and the p-values on a 512-point grid (the estimates themselves are exact).", "caveat"))
    error_items: list[Item] = [Figure(lambda: method_figures.error_figure(result), _key(key, "errors"))]
    if lead is not None:
        error_items += [method_readings.pair_sentence(lead, "bias_gap", units),
                        method_readings.pair_sentence(lead, "mae_gap", units)]
    floor = result.params.min_group_size
    error_items += [method_readings.bounded_sentence(b, floor, units) for b in result.bounded]
    prediction_items: list[Item] = [Figure(lambda: method_figures.prediction_figure(result), _key(key, "predictions"))]
    if against:
        far = max(against, key=lambda p: p.values["w1"])
        prediction_items += [method_readings.pair_sentence(far, "w1", units),
                             method_readings.pair_sentence(far, "auc", units)]
    return items + [
        Group("Error parity: bias, MAE and RMSE per group", tuple(error_items), key="errors"),
        Group("Prediction parity: how far apart the groups' predictions are", tuple(prediction_items),
              key="predictions"),
        Group("Proxy classes (Systematic Evaluation of Predictive Fairness)",
              (method_readings.proxy_sentence(result),
               Figure(lambda: method_figures.proxy_figure(result), _key(key, "proxy"))),
              key="proxy"),
        Group("Groups", (_table(_group_rows(result), REGRESSION_GROUP_LABELS, "regression_groups"),),
              key="regression_groups", collapsed=True),
        Group("Pairs: gaps, distances and adjusted p-values",
              (_table([p.to_dict() for p in result.pairs], REGRESSION_PAIR_LABELS, "regression_pairs",
                      "Gaps are group − against; ratios group ÷ against. Adjusted p: Benjamini–Hochberg over the "
                      f"pairs, one family per statistic ({', '.join(PAIR_STATS)})."),),
              key="regression_pairs", collapsed=True),
    ]


# ----------------------------------------------------------------------------------------------- classes

def multiclass_display(result: MulticlassParity, match: Sequence[Item] | None = None,
                       key: tuple | None = None) -> list[Item]:
    """GAP and the most disparate class × group read; per-class rates, confusion matrices, performance and, when
    given, ``match`` (MATCH per class's display list, which the page shows here) as detail."""
    items: list[Item] = [method_readings.multiclass_headline(result),
                         *(text("{warning}", "caveat", warning=w) for w in result.warnings)]
    cell = method_readings.most_disparate_cell(result)
    per_class: list[Item] = [Figure(lambda: method_figures.class_rate_figure(result, "tpr"),
                                    _key(key, "rates", "tpr"))]
    if cell is not None:
        per_class.append(method_readings.cell_sentence(cell, result.reference))
    per_class.append(text("One vs rest: for class c, the class's rows are the positives and being predicted c is "
                          "the outcome; OFI and DI read it as the binary audit does (OFI > 0: the group is predicted c "
                          "more than its labels warrant, relative to {ref}).", "note", ref=result.reference))
    per_class.append(_table([c.to_dict() for c in result.per_class], CLASS_LABELS, "class_parity",
                            "Gaps are group − reference (Wald 95% CIs); adjusted p: Benjamini–Hochberg over "
                            "classes × groups."))
    shown = sorted(result.groups, key=lambda g: -g.n)[:MAX_CONFUSION_FIGURES]
    confusion: list[Item] = [method_readings.performance_sentence(result),
                             _table(_group_rows(result), PERFORMANCE_LABELS, "class_performance")]
    confusion += [Figure(lambda g=g: method_figures.confusion_figure(g, result.classes),
                         _key(key, "confusion", g.name)) for g in shown]
    groups: list[Item] = [
        Group("Per class, one vs rest: TPR, FPR, selection, OFI and DI", tuple(per_class), key="class_parity"),
        Group("Other rates' GAP", tuple(Figure(lambda rate=rate: method_figures.class_rate_figure(result, rate),
                                               _key(key, "rates", rate)) for rate in ("fpr", "ppr")),
              key="class_gaps", collapsed=True),
        Group("Confusion matrices, accuracy and macro-F1 per group", tuple(confusion), key="class_confusion",
              collapsed=True)]
    if match is not None:
        groups.append(Group("MATCH per class", tuple(match), key="class_match", collapsed=True))
    return items + groups


# ----------------------------------------------------------------------------------------------- sections

def regression_parity_params(options) -> RegressionParityParams:
    return RegressionParityParams(reference=options.findings.reference, resamples=options.rdf.resamples,
                                  permutations=options.rdf.resamples, alpha=options.findings.alpha,
                                  seed=options.rdf.seed, units=options.units,
                                  min_group_size=options.findings.min_group_size)


def regression_parity_run(pred: Predictions, options):
    return analyse_regression(pred, options.attribute, regression_parity_params(options))


def regression_parity_display(pred: Predictions, result, options) -> list[Item]:
    return regression_display(result, ("parity_regression", pred.fingerprint, result.attribute, result.params))


def multiclass_parity_params(options) -> MulticlassParityParams:
    return MulticlassParityParams(reference=options.findings.reference, resamples=options.rdf.resamples,
                                  permutations=options.rdf.resamples, alpha=options.findings.alpha,
                                  seed=options.rdf.seed, min_group_size=options.findings.min_group_size)


def multiclass_parity_run(pred: Predictions, options):
    return analyse_multiclass(pred, options.attribute, multiclass_parity_params(options))


def multiclass_parity_display(pred: Predictions, result, options) -> list[Item]:
    return multiclass_display(result, None, ("parity_multiclass", pred.fingerprint, result.attribute,
                                             result.params))


REGRESSION_PARITY = Section(
    "parity_regression", regression_parity_run,
    lambda pred, result, options: {PARITY: result.to_dict()},
    title="Group parity (regression)", weighted=True, display=regression_parity_display)
MULTICLASS_PARITY = Section(
    "parity_multiclass", multiclass_parity_run,
    lambda pred, result, options: {PARITY: result.to_dict()},
    title="Group parity per class", weighted=True, display=multiclass_parity_display)


CHECK = Check("parity", {BINARY.name: SECTION, REGRESSION.name: REGRESSION_PARITY,
                         MULTICLASS.name: MULTICLASS_PARITY})


def _key(key: tuple | None, *what) -> tuple | None:
    return None if key is None else (*key, *what)
