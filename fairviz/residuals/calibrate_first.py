"""Calibrate, then re-run ([1] §8.2, Table 2 and Table 7): the knee error concentration of a model and of its
recalibration side by side — ECE with its interval and regime, the knee/elsewhere error ratio and the verdict.

Knees are diagnostic only for a calibrated model: below ECE 0.15 the paper finds the error concentrated in the knee
regions (ratio > 1.5), above it spread along the curve. So with ECE ≥ 0.15 the page says "calibrate first", and the
recalibrated model (made by the calibration concept: this module only reads its scores) shows whether the knees
become diagnostic once the scores mean what they say."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairviz.core import stats
from fairviz.core.ece import POOR_FROM
from fairviz.data import Predictions
from fairviz.residuals.concentration import knee_concentration
from fairviz.residuals.curves import knees_of, search_cells, sort_groups
from fairviz.residuals.metrics import residuals
from fairviz.residuals.regions import KneeRegions
from fairviz.residuals.results import KneeConcentrationResult, RDFParams


@dataclass(frozen=True)
class CalibrationShape:
    """Table 2's pair of rows (uncalibrated, calibrated) and Table 7's ECE before and after, on one data set."""
    attribute: str
    before_model: str
    before: KneeConcentrationResult
    after_model: str
    after: KneeConcentrationResult
    how: str                       # how the recalibrated model was made (its split, its held-out ECE)
    added: bool                    # the recalibrated model is one of the session's models (else computed for this view)


def needs_calibration(c: KneeConcentrationResult) -> bool:
    """ECE ≥ 0.15: the poor regime, where the paper finds knees not diagnostic."""
    return bool(np.isfinite(c.ece) and c.ece >= POOR_FROM)


def concentration_of(pred: Predictions, attribute: str | None = None,
                     params: RDFParams = RDFParams()) -> KneeConcentrationResult:
    """The knee error concentration alone, as ``analyse`` computes it (each group's knees and knee regions, then the
    ratio, its bootstrap and the ECE with its interval), without the pair metrics."""
    view = pred.groups(attribute)
    d = residuals(pred.score, pred.y)
    members = [np.flatnonzero(view.codes == g) for g in range(len(view.names))]
    sorted_groups = sort_groups(pred, d, members)
    cells = search_cells(pred)
    group_knees = stats.in_parallel(lambda sg: knees_of(sg, params.knees, cells), sorted_groups)
    region_rows = np.zeros(d.size, dtype=np.int64)
    for sg, knees in zip(sorted_groups, group_knees):
        region = KneeRegions(sg, [k for k in knees if k is not None], params.region_eps, params.region_mode)
        region_rows[sg.entry] = region.counts().sum(1)
    return knee_concentration(pred.score, pred.y, d, region_rows, params, pred.weight,
                              ece_key=(pred.fingerprint, "all rows"))


def calibration_shape(before: Predictions, after: Predictions, attribute: str | None, params: RDFParams, how: str,
                      added: bool, known: dict | None = None) -> CalibrationShape:
    """The knee error concentration of a model (``before``) and of its recalibration (``after``), each a one-model
    view of the same rows; ``known``: model title → a concentration already computed with these settings."""
    known = known or {}

    def of(pred: Predictions) -> KneeConcentrationResult:
        return known.get(pred.active_model) or concentration_of(pred, attribute, params)

    return CalibrationShape(before.groups(attribute).attribute, before.active_model, of(before), after.active_model,
                            of(after), how, added)
