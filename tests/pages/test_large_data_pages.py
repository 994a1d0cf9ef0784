"""Large data opens at once: above 200,000 rows the Residual and Calibration pages show their point estimates
without resampling, and compute intervals and tests when asked (the same numbers as a run with them on)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairviz.data import ColumnMapping, build_predictions
from tests.conftest import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def large_pred():
    rng = np.random.default_rng(3)
    n = 210_000
    p = rng.uniform(0.05, 0.95, n)
    frame = pd.DataFrame({"y": rng.binomial(1, p), "score": np.round(p, 3), "g": rng.choice(["a", "b", "c"], n)})
    return build_predictions(frame, ColumnMapping(label="y", score="score", groups=("g",)), source="large.csv",
                             file_fingerprint="large")


@pytest.mark.parametrize("page, toggle", [("app_pages/residuals.py", "rdf_intervals"),
                                          ("app_pages/calibration.py", "cal_intervals")])
def test_large_data_opens_on_point_estimates_and_resamples_on_request(large_pred, page, toggle):
    at = AppTest.from_file(str(ROOT / page), default_timeout=300)
    at.session_state["predictions"] = large_pred
    at.run()
    assert not at.exception
    assert any("Intervals and tests are off for 210,000 rows" in c.value for c in at.caption)
    section = "residuals" if "residuals" in page else "calibration"
    point = at.session_state["page_json"][section]
    at.toggle(key=toggle).set_value(True).run()
    assert not at.exception
    assert not any("Intervals and tests are off" in c.value for c in at.caption)
    full = at.session_state["page_json"][section]
    if section == "residuals":          # the same point estimates; intervals only with resampling on
        first, second = point["pairs"][0], full["pairs"][0]
        assert first["f_pattern"] == pytest.approx(second["f_pattern"], abs=1e-12)
        assert first["ci"].get("f_dist") in (None, [None, None]) and first["p_value_dist"] is None
        assert None not in second["ci"]["f_dist"] and 0 < second["p_value_dist"] <= 1
    else:
        first, second = point["calibration"]["overall"], full["calibration"]["overall"]
        assert first["ece"] == pytest.approx(second["ece"], abs=1e-12)
