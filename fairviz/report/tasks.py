"""The audit's sections for regression and multiclass predictions (issue 25): each a ``Section`` (run, to_dict,
display) over the concepts' task analyses, listed by task in ``audit.SECTIONS_BY_TASK``. (Calibration and the
per-class summary live in ``fairviz.calibration.display``.)

JSON added to the audit (each key holds the concept's ``to_dict``; docs/cli.md lists their fields):
- regression: ``parity_regression`` (error parity, prediction parity, bounded group loss, proxy-class GAP);
- multiclass: ``parity_multiclass`` (one vs rest per class × group, GAP, confusion matrices, accuracy and macro-F1)
  and ``class_match`` (MATCH per class).

Every section compares groups with the Summary's reference (``AuditParams.findings.reference``; None: the largest
group), so the sections and the Summary read the same pairs.
"""
from __future__ import annotations

from dataclasses import replace

from fairviz.core.display import Item
from fairviz.data import Predictions
from fairviz.parity import MulticlassParityParams, RegressionParityParams, analyse_multiclass, analyse_regression
from fairviz.report import parity_tasks
from fairviz.report.options import AuditParams, Section
from fairviz.sample_size.multiclass import CLASS_MATCH, analyse_class_match

CLASS_MATCH_METRICS = ("tpr", "fpr", "ppr")     # the one-vs-rest rates parity reads; 16 metrics × C × G cost minutes


# ----------------------------------------------------------------------------------------------- regression

def regression_parity_params(options: AuditParams) -> RegressionParityParams:
    return RegressionParityParams(reference=options.findings.reference, resamples=options.rdf.resamples,
                                  permutations=options.rdf.resamples, alpha=options.findings.alpha,
                                  seed=options.rdf.seed, units=options.units)


def regression_parity_run(pred: Predictions, options: AuditParams):
    return analyse_regression(pred, options.attribute, regression_parity_params(options))


def regression_parity_display(pred: Predictions, result, options: AuditParams) -> list[Item]:
    return parity_tasks.regression_display(result, ("parity_regression", pred.fingerprint, result.attribute,
                                                    result.params))


REGRESSION_PARITY = Section(
    "parity_regression", regression_parity_run,
    lambda pred, result, options: {"parity_regression": result.to_dict()},
    title="Group parity (regression)", weighted=True, display=regression_parity_display)


# ----------------------------------------------------------------------------------------------- multiclass

def multiclass_parity_params(options: AuditParams) -> MulticlassParityParams:
    return MulticlassParityParams(reference=options.findings.reference, resamples=options.rdf.resamples,
                                  permutations=options.rdf.resamples, alpha=options.findings.alpha,
                                  seed=options.rdf.seed)


def multiclass_parity_run(pred: Predictions, options: AuditParams):
    return analyse_multiclass(pred, options.attribute, multiclass_parity_params(options))


def multiclass_parity_display(pred: Predictions, result, options: AuditParams) -> list[Item]:
    return parity_tasks.multiclass_display(result, None, ("parity_multiclass", pred.fingerprint, result.attribute,
                                                          result.params))


def class_match_run(pred: Predictions, options: AuditParams):
    """MATCH per class against the population (``fairviz.sample_size.multiclass`` says why not the complement), with
    the audit's seed, draws and α."""
    params = replace(CLASS_MATCH, metrics=CLASS_MATCH_METRICS, seed=options.match.seed, draws=options.match.draws,
                     alpha=options.findings.alpha)
    return analyse_class_match(pred, options.attribute, params)


def class_match_display(pred: Predictions, result, options: AuditParams) -> list[Item]:
    return parity_tasks.class_match_display(result, ("class_match", pred.fingerprint, result.attribute,
                                                     result.params))


MULTICLASS_PARITY = Section(
    "parity_multiclass", multiclass_parity_run,
    lambda pred, result, options: {"parity_multiclass": result.to_dict()},
    title="Group parity per class", weighted=True, display=multiclass_parity_display)
CLASS_MATCH_SECTION = Section(
    "class_match", class_match_run, lambda pred, result, options: {"class_match": result.to_dict()},
    title="MATCH per class", weighted=True, display=class_match_display)
