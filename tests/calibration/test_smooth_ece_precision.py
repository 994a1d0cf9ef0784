"""The smooth ECE's bandwidth σ* is found by a search, and states its precision (``SIGMA_TOL_AT_SCORES`` with the
masses at the distinct scores, ``SIGMA_TOL_CELLS`` on equal cells): on every group of the bundled samples, σ* and
the smooth ECE at it lie within that precision of the root scipy's brentq finds to machine precision — also when the
masses carry another machine's rounding (a relative 1e-15 on each), and from a resample's narrowed bracket. The
calibration goldens (test_json_unchanged.py) compare the smooth ECE's values at this precision."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import fft as sfft
from scipy.optimize import brentq

from fairviz.calibration import smooth_ece as S
from fairviz.calibration.results import CELLS, SMECE_MIN_SIGMA
from tests.conftest import ROOT

pytestmark = pytest.mark.slow             # 17 searches against brentq, some on 2,000 points: 30 s

SAMPLES = {"compas": ("two_year_recid", "race"), "default": ("default", "student"),
           "synthetic": ("y", "group"), "adult": ("income_gt_50k", "sex")}


def _groups():
    """(name, y, score, where the masses sit): at the distinct scores for every group (the point estimate), and on
    equal cells too where a group has more than CELLS distinct scores (its bootstrap resamples)."""
    for sample, (label, group) in SAMPLES.items():
        frame = pd.read_csv(ROOT / "assets" / f"{sample}.csv", usecols=[label, "score", group])
        parts = [("all", frame)] + [(str(name), rows) for name, rows in frame.groupby(group)]
        for name, rows in parts:
            y, score = rows[label].to_numpy(float), rows["score"].to_numpy(float)
            yield f"{sample}: {name}", y, score, "scores"
            if np.unique(score).size > CELLS:
                yield f"{sample}: {name}", y, score, "cells"


def _problem(y, score, where):
    """The search's own problem as smooth_ece sets it: masses, their cosine coefficients, the midpoint rule's points
    and the stated precision; and a function searching it from (possibly perturbed) masses."""
    if where == "scores":
        distinct, at = np.unique(score, return_inverse=True)
        masses = np.bincount(at, weights=y - score)
        k = np.arange(S._frequencies(SMECE_MIN_SIGMA))
        coef = S._cosine_sums_gridded(distinct, masses[None, :], k.size) if distinct.size > S.DIRECT_POINTS \
            else masses[None, :] @ np.cos(np.pi * np.outer(distinct, k))
        points = (max(S.EXACT_POINTS, k.size), S.EXACT_POINTS)
        return masses, coef, points, S.SIGMA_TOL_AT_SCORES, \
            lambda m, near: S.smooth_ece_at_points(distinct, m, score.size, near=near)
    cells = np.minimum(np.floor(score * CELLS), CELLS - 1).astype(np.int64)      # as a resample's cells
    masses = np.bincount(cells, weights=y - score, minlength=CELLS)
    coef = sfft.dct(masses[None, :], type=2, axis=-1) / 2.0
    return masses, coef, (CELLS, 256), S.SIGMA_TOL_CELLS, lambda m, near: S.smooth_ece_from_masses(m, score.size,
                                                                                                     near=near)


@pytest.mark.parametrize("name, y, score, where", list(_groups()), ids=lambda v: v if isinstance(v, str) else "")
def test_the_bandwidth_and_the_smooth_ece_hold_their_stated_precision(name, y, score, where):
    masses, coef, (m, least), tol, search = _problem(y, score, where)
    scale = np.array([[score.size]], float)

    def smece(sigma: float) -> float:
        return float(S._smece_at(coef, scale, np.array([sigma]), m, least)[0])

    first = float(search(masses, None)[1][0])
    root = brentq(lambda s: smece(s) - s, first / 2, min(1.0, first * 2), xtol=1e-17, rtol=4 * np.finfo(float).eps)
    rng = np.random.default_rng(34)
    for trial in range(4):
        rounded = masses * (1 + 1e-15 * rng.standard_normal(masses.size)) if trial else masses
        for near in (None, root * 1.3, root / 1.7):                     # the point estimate's and resamples' brackets
            value, sigma = search(rounded, near)
            assert abs(sigma[0] - root) <= tol, (name, trial, near, sigma[0] - root)
            assert abs(value[0] - root) <= tol, (name, trial, near, value[0] - root)
