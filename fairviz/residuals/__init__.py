"""Residual Distribution Fairness ([1]): sorted residual curves, knees, RDF metrics, knee error concentration, D*.

``analyse(pred, attribute, params)`` returns a ``ResidualAudit``; ``at_threshold`` attaches the rates at one τ
([1] Theorem 6.1); ``threshold_invariance`` is [1] App. D.1. Pages, the report, probing and the CLI import from here.
"""
from fairviz.residuals.analysis import analyse, at_threshold
from fairviz.residuals.calibrate_first import (
    CalibrationShape,
    calibration_shape,
    concentration_of,
    needs_calibration,
)
from fairviz.residuals.concentration import concentration_verdict, knee_concentration
from fairviz.residuals.curves import CURVE_POINTS, OUTCOMES, SortedGroup, merged_sorted, sort_groups
from fairviz.residuals.diagnostic_set import diagnostic_table, dstar_rows, file_dstar_rows
from fairviz.residuals.knees import Knee, KneeParams, detect_knees, detect_knees_weighted
from fairviz.residuals.metrics import (
    f_dist,
    f_h,
    f_pattern,
    f_v,
    mean_decomposition,
    median_parity,
    residuals,
    wasserstein_sorted,
)
from fairviz.residuals.rates import rates_from_residuals, threshold_check
from fairviz.residuals.regions import knee_region, knee_region_sorted, percentile_ranks, region_labels
from fairviz.residuals.results import (
    Curve,
    GroupSummary,
    KneeConcentrationResult,
    PairInvariance,
    PairMetrics,
    RDFParams,
    ResidualAudit,
    ThresholdCheckResult,
    ThresholdInvarianceResult,
)
from fairviz.residuals.threshold_invariance import (
    GAP_METRICS,
    METRIC_NAMES,
    RDF_METRICS,
    THRESHOLDS,
    coefficient_of_variation,
    threshold_invariance,
)

__all__ = [
    "CURVE_POINTS", "Curve", "GAP_METRICS", "GroupSummary", "Knee", "KneeConcentrationResult", "KneeParams",
    "METRIC_NAMES", "OUTCOMES", "PairInvariance", "PairMetrics", "RDFParams", "RDF_METRICS", "ResidualAudit",
    "SortedGroup", "THRESHOLDS", "ThresholdCheckResult", "ThresholdInvarianceResult", "analyse", "at_threshold",
    "coefficient_of_variation", "concentration_verdict", "detect_knees", "detect_knees_weighted",
    "diagnostic_table", "dstar_rows", "f_dist", "f_h", "f_pattern", "f_v", "file_dstar_rows", "knee_concentration",
    "knee_region", "knee_region_sorted", "mean_decomposition", "median_parity", "merged_sorted", "percentile_ranks",
    "rates_from_residuals", "region_labels", "residuals", "sort_groups", "threshold_check", "threshold_invariance",
    "wasserstein_sorted",
    "CalibrationShape", "calibration_shape", "concentration_of", "needs_calibration",
]
