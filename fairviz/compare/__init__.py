"""Comparing models on the same rows: paired differences of every metric (issue: several models on one screen).

``compare_models(joint, attribute, threshold, benefit, reference, model_a, model_b, params)`` gives a
``ModelComparison`` (model b minus model a, overall, per group and per pair with the reference, BH over the family);
``readings`` says it in words and ``figures`` overlays the two models' curves. A numeric target's models are compared
by their paired errors instead (``paired_errors.compare_errors``: an ``ErrorComparison``); ``display`` holds both
comparisons' display lists and JSON and picks the method by the task's spec."""
from fairviz.compare import figures, readings
from fairviz.compare.analysis import compare_models, pair_statistic
from fairviz.compare.paired import (LOWER_IS_BETTER, METRIC_TITLES, METRICS, PairedDifference, PairedSamples,
                                    metric_statistic, paired_differences, paired_statistics, unpaired_interval)
from fairviz.compare.paired_errors import ErrorComparison, compare_errors
from fairviz.compare.results import (ALL, DIFFERENCE_TITLES, PAIR_METRICS, TOPIC_COLUMNS, TOPIC_METRICS, CompareParams,
                                     Difference, ModelComparison, ModelCurves)

__all__ = ["ALL", "DIFFERENCE_TITLES", "LOWER_IS_BETTER", "METRICS", "METRIC_TITLES", "PAIR_METRICS", "TOPIC_COLUMNS",
           "TOPIC_METRICS", "CompareParams", "Difference", "ErrorComparison", "ModelComparison", "ModelCurves",
           "PairedDifference", "PairedSamples", "compare_errors", "compare_models", "figures", "metric_statistic",
           "pair_statistic", "paired_differences", "paired_statistics", "readings", "unpaired_interval"]
