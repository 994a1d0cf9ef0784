"""The CRPS shown is named: 2 Σ_j w_j ρ_τj(y − q_j) with cell-width weights over the quantile levels. On the bundled
forecasts' uneven levels it is checked against a direct computation (trapezoid-free: each level's cell on [0, 1]),
and the equal-weight form (2/c Σ_j ρ_τj, as in scoringrules) is reported beside it and differs by about a fifth."""
from __future__ import annotations

import numpy as np
import pytest

from fairviz import forecast as ev
from fairviz.forecast import display as report
from tests.conftest import ROOT

SAMPLE = ROOT / "assets" / "forecast" / "lorenz_forecasts.csv"


@pytest.fixture(scope="module")
def audit():
    models = ev.read(SAMPLE)
    model = sorted(models)[0]
    fc = models[model]
    return fc, ev.analyse(fc, fc.attribute_names[0], ev.EvalParams(resamples=50))


def _direct(q: np.ndarray, y: np.ndarray, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: 2 Σ_j (cell width of τ_j) · pinball, and 2 · mean_j pinball, by explicit loops over the levels."""
    q = np.sort(q, axis=1)
    weighted, equal = np.zeros(len(y)), np.zeros(len(y))
    for j, t in enumerate(tau):
        lo = 0.0 if j == 0 else (tau[j - 1] + t) / 2
        hi = 1.0 if j == len(tau) - 1 else (t + tau[j + 1]) / 2
        u = y - q[:, j]
        loss = np.where(u >= 0, t * u, (t - 1) * u)
        weighted += 2 * (hi - lo) * loss
        equal += 2 * loss / len(tau)
    return weighted, equal


def test_the_crps_shown_is_the_cell_width_form_and_the_equal_weight_form_differs(audit):
    fc, result = audit
    assert np.ptp(np.diff(fc.levels)) > 0.05                        # the bundled levels are uneven
    weighted, equal = _direct(fc.q, fc.truth, fc.levels)
    assert result.overall.crps == pytest.approx(weighted.mean(), rel=1e-12)
    assert result.crps_equal_weights == pytest.approx(equal.mean(), rel=1e-12)
    difference = result.crps_equal_weights / result.overall.crps - 1
    assert -0.25 < difference < -0.15                              # about a fifth lower on these levels
    data = result.to_dict()["crps_definition"]
    assert data["form"] == "cell-width weighted pinball"
    assert data["equal_weight_crps"] == pytest.approx(equal.mean(), rel=1e-12)
    assert sum(data["level_weights"]) == pytest.approx(1.0) and len(data["level_weights"]) == len(fc.levels)


def test_the_page_names_the_definition_and_the_measured_difference(audit):
    _, result = audit
    notes = [item.plain() for item in report.groups_group(result, None).items if hasattr(item, "plain")]
    assert any("cell-width weights" in n for n in notes)
    equal_note = next(n for n in notes if "equal-weight form" in n)
    assert f"{result.crps_equal_weights / result.overall.crps - 1:+.1%}" in equal_note
