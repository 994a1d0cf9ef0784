"""Knee error concentration ([1] §8.2): is the error larger in the knee regions than elsewhere, and does that fit
the model's calibration regime?"""
from __future__ import annotations

import numpy as np

from fairviz.core import stats
from fairviz.core.ece import ece, ece_regime, ece_resamples
from fairviz.residuals.resampling import ratio_bootstrap
from fairviz.residuals.results import KneeConcentrationResult, RDFParams


def concentration_verdict(ece_value: float, ratio: float) -> tuple[str, bool]:
    """[1] §8.2: with ECE < 0.15 knees should concentrate error (the ratio *exceeds*
    1.5); with ECE ≥ 0.15 errors should be spread (0.8 ≤ ratio ≤ 1.2). The verdict reads the unrounded ratio.
    Returns (verdict, borderline): borderline is an extra word when the ratio rounds (one decimal, as the paper
    printed it) to a boundary of the rule in play, where the paper's rounded table could read it either way."""
    if not (np.isfinite(ece_value) and np.isfinite(ratio)):
        return "undefined", False
    if ece_value < 0.15:
        supported, boundaries = ratio > 1.5, (1.5,)
    else:
        supported, boundaries = 0.8 <= ratio <= 1.2, (0.8, 1.2)
    borderline = any(abs(round(ratio, 1) - b) < 1e-9 for b in boundaries)
    return ("supported" if supported else "not supported"), borderline


def knee_concentration(score, y, d, region_rows, params: RDFParams, weight: np.ndarray | None = None,
                       ece_key=None, binary: bool = True) -> KneeConcentrationResult:
    """Mean |D| in knee regions vs elsewhere, with a row bootstrap (regions fixed) and Mann–Whitney.
    The ECE and its interval are the calibration page's (one computation, ``core.ece.ece_resamples``); a regression
    has no ECE (``binary`` False): its ratio, intervals and test are computed alike, and the verdict, which the
    paper reads against the ECE regime, is "undefined".
    ``region_rows``: rows of each entry in D* (0/1 for rows; weighted data: of its ``weight`` rows)."""
    abs_d = np.abs(d)
    knee_w = region_rows
    rest_w = (1 if weight is None else weight) - region_rows
    n_knee, n_rest = int(knee_w.sum()), int(rest_w.sum())
    ece_value = ece(score, y, weights=weight) if binary else float("nan")
    ratio_ci = knee_ci = rest_ci = ece_ci = stats.Interval(np.nan, np.nan)
    if params.resamples > 0:
        if binary:
            ece_ci = stats.percentile_interval(ece_resamples(score, y, params.resamples, params.seed, key=ece_key,
                                                             weights=weight))
        rng = np.random.default_rng(params.seed + 2)
        high = 1.0 if binary else float(abs_d.max(initial=0.0)) or 1.0
        ratio_ci, knee_ci, rest_ci = ratio_bootstrap(abs_d, knee_w, rest_w, params.resamples, rng, high)
    if weight is None:                      # rows: plain means and the row-level test, as always
        knee, rest = abs_d[knee_w > 0], abs_d[knee_w == 0]
        knee_mean = float(knee.mean()) if knee.size else float("nan")
        rest_mean = float(rest.mean()) if rest.size else float("nan")
        test = stats.mann_whitney(knee, rest)
    else:
        knee_mean = float(np.average(abs_d, weights=knee_w)) if n_knee else float("nan")
        rest_mean = float(np.average(abs_d, weights=rest_w)) if n_rest else float("nan")
        test = stats.mann_whitney_counts(abs_d, knee_w, rest_w)
    ratio = knee_mean / rest_mean if n_rest and rest_mean > 0 else float("nan")
    verdict, borderline = concentration_verdict(ece_value, ratio)
    regime = ece_regime(ece_value) if binary else ""
    return KneeConcentrationResult(knee_mean, rest_mean, ratio, ratio_ci, knee_ci, rest_ci, test,
                                   ece_value, ece_ci, regime, verdict, borderline, n_knee, n_rest)
