"""Probabilistic forecasts ([3] ch. 5): the Lorenz-63 system, an NVAR forecaster, the Probabilistic Parallel Time
Network (PTN) with its genetic search, and forecast fairness by group on uploaded quantile forecasts.

Technique modules: ``lorenz`` (vectorised RK4, the thesis's sampling ranges, the butterfly effect), ``nvar``
(direct multi-step NVAR with ridge), ``windows`` (PTN inputs cut from trajectories), ``crps`` (CRPS, ordering
penalty, pinball loss, coverage, PIT, skill), ``density`` (per-step densities and mode counts), ``ptn`` (the
network and its DARTS training; the only module that imports torch, and only when called), ``genetic``
([3] Algorithm 2), ``pipeline`` (Lorenz → NVAR → PTN, the shipped model and fans). Forecast fairness:
``fairness`` (reading quantile forecasts), ``analysis``, ``results``, ``readings``, ``figures``.

Nothing here imports torch at import time: the pages open without it.
"""
from fairviz.forecast import crps, density, genetic, lorenz, nvar, pipeline, ptn, windows
from fairviz.forecast.analysis import analyse, series_crps, series_in_group
from fairviz.forecast.fairness import (ForecastMapping, QuantileForecasts, build, guess_mapping, parse_level, read,
                                       stack_models)
from fairviz.forecast.results import (MIN_SERIES_FOR_CI, CoverageGap, EvalParams, ForecastAudit, GroupScores,
                                      GroupSkill, band_key)

__all__ = ["MIN_SERIES_FOR_CI", "CoverageGap", "EvalParams", "ForecastAudit", "ForecastMapping", "GroupScores",
           "GroupSkill", "QuantileForecasts", "analyse", "band_key", "build", "crps", "density", "genetic",
           "guess_mapping", "lorenz", "nvar", "parse_level", "pipeline", "ptn", "read", "series_crps",
           "series_in_group", "stack_models", "windows"]
