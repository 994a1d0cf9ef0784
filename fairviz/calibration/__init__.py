"""Predictive bias and calibration by group: reliability, calibration tests, smooth ECE, recalibration,
feature residuals and performance (the lecture on predictive bias and calibration)."""
from fairviz.calibration.analysis import analyse
from fairviz.calibration.results import OVERALL, CalibrationAudit, CalibrationParams

__all__ = ["OVERALL", "CalibrationAudit", "CalibrationParams", "analyse"]
