"""Probabilistic forecasts (seed 002, chapter 5): the Lorenz-63 system, an NVAR forecaster, the PTN, and
forecast fairness by group.

Modules: ``lorenz`` (vectorised RK4, the thesis's sampling ranges, the butterfly effect), ``nvar`` (direct
multi-step NVAR with ridge), ``windows`` (PTN inputs cut from trajectories), ``crps`` (CRPS, ordering penalty,
pinball loss, coverage, PIT, skill), ``density`` (per-step densities and mode counts), ``ptn`` (the network and its DARTS training; the only module that imports
torch, and only when called), ``genetic`` (Algorithm 2), ``evaluate`` (per-group forecast fairness on uploaded
quantile forecasts), ``demo`` (the shipped model and fans).

Nothing here imports torch at import time: the pages open without it.
"""
