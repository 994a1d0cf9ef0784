"""Predictive bias and calibration by group ([2] Predictive Bias and Calibration lecture): reliability diagrams,
calibration tests, calibration errors (ECE, smooth ECE), subgroup performance, recalibration and residuals over
features.

The public face: ``analyse`` gives a ``CalibrationAudit`` (which offers its tables once), ``readings`` says it in
words, ``figures`` draws it; ``recalibrate`` and ``residuals_by_feature``/``residual_model`` are the page's
techniques beyond the audit. Callers import from here."""
from fairviz.calibration import figures, readings
from fairviz.calibration.analysis import analyse
from fairviz.calibration.feature_residuals import FeatureResiduals, ResidualModel, residual_model, residuals_by_feature
from fairviz.calibration.recalibration import (
    METHODS,
    RecalibrationResult,
    RecalParams,
    recalibrate,
    recalibrated_frame,
    recalibrated_model,
    recalibrated_title,
    recalibration_base,
    recalibration_note,
    recalibration_pair,
)
from fairviz.calibration.results import OVERALL, CalibrationAudit, CalibrationParams, GroupCalibration

__all__ = ["METHODS", "OVERALL", "CalibrationAudit", "CalibrationParams", "FeatureResiduals", "GroupCalibration",
           "RecalParams", "RecalibrationResult", "ResidualModel", "analyse", "figures", "readings", "recalibrate",
           "recalibrated_frame", "recalibrated_model", "recalibrated_title", "recalibration_base", "recalibration_note",
           "recalibration_pair", "residual_model", "residuals_by_feature"]

# Calibration of numeric predictions in the mean (binned means, Mincer–Zarnowitz, interval coverage) and of class
# probabilities (top-label and class-wise): the methods the calibration check runs where its probabilities are not
# one positive-class score (``fairviz.calibration.display.CHECK``).
from fairviz.calibration.mincer_zarnowitz import (  # noqa: E402
    RegressionCalibration,
    RegressionParams,
    analyse_regression,
    regression_calibration,
)
from fairviz.calibration.top_label_ece import (  # noqa: E402
    MulticlassCalibration,
    MulticlassParams,
    analyse_multiclass,
    multiclass_calibration,
)

__all__ += ["MulticlassCalibration", "MulticlassParams", "RegressionCalibration", "RegressionParams",
            "analyse_multiclass", "analyse_regression", "multiclass_calibration", "regression_calibration"]
