"""The sample-size check (``CHECK``): MATCH per group and metric with CPS smoothing where a decision at τ exists
(``SECTION``, "significance"), MATCH per class one vs rest where the task has classes (``CLASS_MATCH_SECTION``,
"class_match") — their JSON keys and the display lists that the page, the HTML report and the terminal render. The
audit settings (``options``) are read, never imported.

JSON added to the audit (MATCH and CPS join the parity check's envelope, whose method for a decision at τ is
``ofi_di_match_cps``; MATCH per class keeps its own key):
- ``parity.match.<group>.<metric>``: score, cdf, p_value, p_adjusted, undefined_probability, method (and more); every
  metric on the label (``fpr`` is the FPR of every section), ``benefit`` (𝓑) and ``ofi`` on the benefit;
- ``parity.cps.<group>``: the CPS-smoothed counts on the label (λ = 5 unless set);
- per class: ``class_match.results`` (class, group, metric, score, p_value, p_adjusted, …).
"""
from __future__ import annotations

from dataclasses import replace

import pandas as pd

from fairviz.core.checks import Check, Section
from fairviz.core.confusion_metrics import CELL_ORDER, METRICS as CM_METRICS, probabilities
from fairviz.core.display import Figure, Group, Item, Metric, Metrics, Table, text
from fairviz.core.wording import fmt, fmt_p
from fairviz.data import Predictions
from fairviz.data.tasks import BINARY, MULTICLASS
from fairviz.sample_size import figures as figs
from fairviz.sample_size import readings
from fairviz.sample_size.analysis import analyse
from fairviz.sample_size.class_match import (CLASS_MATCH, ClassMatch, analyse_class_match, class_match_figure,
                                             class_match_sentence)
from fairviz.sample_size.cps import own_value, population_counts
from fairviz.sample_size.holes import configuration_count, hole_counts, printed_hole_count, undefined_probability
from fairviz.sample_size.results import (METRIC_LABELS, ErrorCurves, Jaggedness, MatchAudit, NullPlot,
                                         SignificanceAudit, SignificanceParams)

CPS_METRICS = ("tpr", "mcc")    # the raw and smoothed metrics the CPS table shows
MATCH_COLUMNS = {"group": "group", "n": "n", "metric": "metric", "score": "score", "reference_score": "reference",
                 "cdf": "percentile", "p_value": "p", "p_adjusted": "adjusted p",
                 "undefined_probability": "P(undefined)", "method": "method", "note": "note"}
CLASS_MATCH_METRICS = ("tpr", "fpr", "ppr")     # the one-vs-rest rates parity reads; 16 metrics × C × G cost minutes
CLASS_MATCH_LABELS = {"class": "class", "group": "group", "metric": "metric", "n": "n", "score": "score",
                      "reference_score": "reference", "p_value": "p", "p_adjusted": "adj. p", "method": "method"}


def params_of(options) -> SignificanceParams:
    return SignificanceParams(options.threshold, options.benefit, options.match, options.cps_lambda)


def significance_run(pred: Predictions, options) -> SignificanceAudit:
    return analyse(pred, options.attribute, params_of(options))


def significance_to_dict(pred: Predictions, result: SignificanceAudit, options) -> dict:
    match = {name: {r.metric: r.to_dict() for r in result.match.results if r.group == name}
             for name in result.match.names}
    cps = {row.group: {**row.smoothed.to_dict(), "lambda": result.cps_lambda, "n": row.n} for row in result.cps}
    return {"parity": {"match": match, "cps": cps}}


# ----------------------------------------------------------------------------------------------- tables

def match_table(audit: MatchAudit) -> Table:
    """Every group × metric MATCH result, as ``match.<group>.<metric>`` holds it (the metric by its label)."""
    frame = pd.DataFrame([{**r.to_dict(), "group": r.group, "metric": METRIC_LABELS[r.metric], "note": r.note}
                          for r in audit.results], columns=list(MATCH_COLUMNS))
    formats = {"group": "text", "n": "int", "metric": "text", "score": "num4", "reference_score": "num4",
               "cdf": "num4", "p_value": "p", "p_adjusted": "p", "undefined_probability": "num4", "method": "text",
               "note": "text"}
    return Table(frame, "match", formats, MATCH_COLUMNS)


def cps_table(result: SignificanceAudit) -> Table:
    """Each group's CPS-smoothed counts (as ``cps.<group>`` holds them) and TPR and MCC raw and smoothed."""
    rows = [{"group": r.group, "n": r.n, **r.smoothed.to_dict(),
             **{f"{m}_raw": r.raw_metrics[m] for m in CPS_METRICS},
             **{f"{m}_cps": r.smoothed_metrics[m] for m in CPS_METRICS}} for r in result.cps]
    labels = {"group": "group", "n": "n", **{c: f"{c.upper()} (CPS)" for c in CELL_ORDER},
              **{f"{m}_raw": f"{METRIC_LABELS[m]} raw" for m in CPS_METRICS},
              **{f"{m}_cps": f"{METRIC_LABELS[m]} smoothed" for m in CPS_METRICS}}
    formats = {c: "num" for c in labels}
    formats.update(group="text", n="int")
    return Table(pd.DataFrame(rows, columns=list(labels)), "cps", formats, labels,
                 caption=readings.cps_note(result.match.reference_label))


def holes_table(audit: MatchAudit, group: str, n: int) -> Table:
    """How often each metric is undefined among the matrices of n rows ([3] Theorem 4.3, enumerated), and how likely
    a group of this one's size drawn from its reference is to leave it undefined."""
    counts = audit.counts[group]
    holes = hole_counts(n)
    reference = audit.references[group]
    probs = probabilities(reference) if reference is not None else probabilities(counts)
    size = int(counts.n)
    rows = [{"metric": METRIC_LABELS[key], "formula": spec.formula, "family": spec.family, "holes": holes[key],
             "printed": printed_hole_count(key, n), "p_undefined": undefined_probability(key, size, probs),
             "undefined_when": spec.undefined_when or "never"} for key, spec in CM_METRICS.items()]
    labels = {"metric": "metric", "formula": "formula", "family": "family",
              "holes": f"holes among the {configuration_count(n):,} matrices of n = {n}",
              "printed": "Theorem 4.3 (as printed)", "p_undefined": f"P(undefined) for '{group}' (n = {size:,})",
              "undefined_when": "undefined when"}
    formats = {"metric": "text", "formula": "text", "family": "text", "holes": "int", "printed": "text",
               "p_undefined": "num4", "undefined_when": "text"}
    return Table(pd.DataFrame(rows, columns=list(labels)), "holes", formats, labels,
                 title=text("Holes: how often is each metric undefined?"),
                 caption=text("{note}", "note", note=readings.HOLES_NOTE))


# ----------------------------------------------------------------------------------------------- display

def figure_key(pred: Predictions, result: SignificanceAudit) -> tuple:
    return ("significance", pred.fingerprint, result.match.attribute, result.match.params, result.cps_lambda)


def display(pred: Predictions, result: SignificanceAudit, options) -> list[Item]:
    """The MATCH map with how many scores it flags and which; the full MATCH table as detail; CPS per group."""
    audit = result.match
    key = figure_key(pred, result)
    flagged = readings.flagged_bullets(audit)
    return [
        readings.label_statement(options.benefit, options.threshold, pred.mapping.label, pred.mapping.positive_label),
        text("MATCH compares each group with same-size groups drawn from {reference}.", "note",
             reference=audit.reference_label),
        Group("Sample-size significance (MATCH)", (
            Figure(lambda: figs.match_map(audit), (*key, "map")),
            readings.match_summary(audit), *((flagged,) if flagged else ())), key="match"),
        Group("The full MATCH table", (match_table(audit), text("{note}", "note", note=readings.METHODS_NOTE)),
              key="match_table", collapsed=True),
        Group(f"Cross-Prior Smoothing (λ = {result.cps_lambda:g})", (cps_table(result),), key="cps"),
    ]


def focus_display(audit: MatchAudit, group: str, metric: str, plot: NullPlot | None,
                  key: tuple | None = None) -> list[Item]:
    """One group × metric: its verdict and numbers, and where its score falls in the null of same-size groups."""
    result = audit.get(group, metric)
    items: list[Item] = [readings.verdict_text(result, audit), Metrics((
        Metric(text("Observed"), fmt(result.score)),
        Metric(text("Percentile"), "—" if result.cdf is None else f"{100 * result.cdf:.1f}%"),
        Metric(text("p (two-sided)"), fmt_p(result.p_value)),
        Metric(text("BH-adjusted p"), fmt_p(result.p_adjusted)))), readings.result_details(result)]
    if plot is None:
        items.append(readings.is_reference(group))
    else:
        items.append(Figure(lambda: figs.null_figure(plot, result, audit.reference_label),
                            None if key is None else (*key, "null", group, metric)))
        if metric == "ofi":
            items.append(text("{note}", "note", note=readings.OFI_NULL_NOTE))
    return items


def jaggedness_display(j: Jaggedness, group: str, key: tuple | None = None) -> list[Item]:
    return [Figure(lambda: figs.jaggedness_figure(j, group), None if key is None else (*key, "jaggedness", group)),
            readings.jaggedness_reading(j, group)]


def cps_figure(result: SignificanceAudit, metric: str, key: tuple | None = None) -> Figure:
    """Raw against smoothed ``metric`` per group, the whole population's value marked."""
    overall = own_value(population_counts(result.match), metric)
    return Figure(lambda: figs.cps_figure(result.cps, metric, overall),
                  None if key is None else (*key, "cps", metric))


def curves_display(curves: ErrorCurves, group: str, lam: float) -> list[Item]:
    return [Figure(lambda: figs.error_curves_figure(curves, group)),
            readings.error_curves_reading(curves, group, lam)]


SECTION = Section("significance", significance_run, significance_to_dict, to_html=None,
                  title="Sample-size significance", weighted=True, display=display)


# ----------------------------------------------------------------------------------------------- per class

def class_match_run(pred: Predictions, options) -> ClassMatch:
    """MATCH per class against the population (``fairviz.sample_size.class_match`` says why not the complement), with
    the audit's seed, draws and α."""
    params = replace(CLASS_MATCH, metrics=CLASS_MATCH_METRICS, seed=options.match.seed, draws=options.match.draws,
                     alpha=options.findings.alpha)
    return analyse_class_match(pred, options.attribute, params)


def class_match_display(match: ClassMatch, key: tuple | None = None) -> list[Item]:
    """MATCH per class: its sentence, the figure of its first one-vs-rest rate and the whole table."""
    metric = "tpr" if "tpr" in match.params.metrics else match.params.metrics[0]
    rows = match.to_dict()["results"]
    formats = {"class": "text", "group": "text", "metric": "text", "n": "int", "score": "num",
               "reference_score": "num", "p_value": "p", "p_adjusted": "p", "method": "text"}
    return [class_match_sentence(match),
            Figure(lambda: class_match_figure(match, metric), None if key is None else (*key, "class_match", metric)),
            Table(pd.DataFrame(rows, columns=list(CLASS_MATCH_LABELS)), "class_match", formats, CLASS_MATCH_LABELS,
                  caption=text("{note}", "note", note="Adjusted p: Benjamini–Hochberg over every class × group × "
                                                      "metric of the table."))]


def _class_match_section_display(pred: Predictions, result: ClassMatch, options) -> list[Item]:
    return class_match_display(result, ("class_match", pred.fingerprint, result.attribute, result.params))


CLASS_MATCH_SECTION = Section(
    "class_match", class_match_run, lambda pred, result, options: {"class_match": result.to_dict()},
    title="MATCH per class", weighted=True, display=_class_match_section_display)

CHECK = Check("sample_size", {BINARY.name: SECTION, MULTICLASS.name: CLASS_MATCH_SECTION})
