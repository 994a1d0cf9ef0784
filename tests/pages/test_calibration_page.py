"""The Calibration page in Streamlit's AppTest: real numbers on bundled samples, and clear messages on bad input."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairviz.calibration import CalibrationParams, analyse
from fairviz.data import ColumnMapping, build_predictions
from fairviz.data.samples import load_sample

from tests.conftest import ROOT
from tests.pages.tabs import open_tab

PAGE = "app_pages/calibration.py"


def open_page(pred=None, resamples: int = 200) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    if pred is not None:
        at.session_state["predictions"] = pred
    at.session_state["cal_resamples"] = resamples
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def frame_of(at, first_column: str) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if list(d.value.columns)[0] == first_column and
                first_column in d.value.columns)


@pytest.mark.slow
def test_page_on_compas_shows_tests_bins_and_small_group_messages():
    at = open_page()
    assert at.title[0].value == "Calibration"
    assert [t.label for t in at.tabs][:6] == ["Reliability diagram", "Calibration tests", "Calibration error",
                                              "Recalibration", "Residuals vs features", "Subgroup performance"]
    expected = analyse(load_sample("compas"), "race", CalibrationParams(resamples=200))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Smooth ECE, all rows"] == f"{expected.overall.smooth_ece:.3f}"
    bins = next(d.value for d in at.dataframe if "ci_lower" in d.value.columns)
    assert {"ci_lower", "ci_upper", "post_mean", "wald_moe", "n_pos"} <= set(bins.columns)
    assert bins["n"].sum() == 7214
    open_tab(at, "cal_tab", "Calibration tests")
    tests = next(d.value for d in at.dataframe if "β₁ slope" in d.value.columns)
    row = tests.set_index("group").loc["African-American"]
    assert row["β₁ slope"] == pytest.approx(expected.group("African-American").linear.slope.estimate)
    assert tests.set_index("group").loc["Native American", "status"].startswith("not enough data (n = 18")
    assert any("Native American" in w.value and "not enough data" in w.value for w in at.warning)
    open_tab(at, "cal_tab", "Subgroup performance")
    perf = next(d.value for d in at.dataframe if "AUROC 95% CI" in d.value.columns)
    assert perf.set_index("group").loc["Native American", "n"] == 18
    assert any("smallest group, *Native American* (n = 18)" in m.value for m in at.markdown)


@pytest.mark.slow
def test_page_on_synthetic_sample_reads_the_planted_miscalibration():
    at = open_page(load_sample("synthetic"))
    open_tab(at, "cal_tab", "Calibration tests")
    readings = " ".join(i.value for i in at.info)         # findings of the display list (st.info)
    assert "**C:** slope β₁ = +0." in readings and "under-confident" in readings      # C: temperature 1.6
    assert "**A:** slope" in readings and "no evidence of over- or under-confidence" in readings
    assert "**B:**" in readings and "over-predicts" in readings                          # B: scores too high
    assert any("Calibration differs between groups" in i.value for i in at.info)
    open_tab(at, "cal_tab", "Recalibration")
    recal = next(d.value for d in at.dataframe if "n (evaluation)" in d.value.columns)
    assert set(recal["method"]) == {"Original scores", "Platt (logistic)", "Temperature", "Isotonic", "Monotone spline"}
    open_tab(at, "cal_tab", "Residuals vs features")
    at.toggle(key="cal_model_run").set_value(True).run()
    assert not at.exception
    model = next(d.value for d in at.dataframe if "robust Wald χ²" in d.value.columns)
    assert "group" in set(model["term"])


@pytest.mark.slow
def test_page_messages_for_clipped_scores_and_a_one_class_split():
    rng = np.random.default_rng(0)
    n = 800
    score = rng.uniform(0.05, 0.95, n)
    score[:4], score[4:8] = 0.0, 1.0
    frame = pd.DataFrame({"y": rng.binomial(1, score), "score": score, "group": rng.choice(["a", "b"], n),
                          "fold": np.where(np.arange(n) < 400, "cal", "test")})
    frame.loc[frame["fold"] == "cal", "y"] = 0
    pred = build_predictions(frame, ColumnMapping(label="y", score="score", groups=("group",)), source="edge.csv")
    at = open_page(pred, resamples=0)
    assert any("8 rows have a score of exactly 0 or 1" in w.value for w in at.warning)
    open_tab(at, "cal_tab", "Recalibration")
    at.radio(key="cal_split").set_value("a column of the file").run()
    at.selectbox(key="cal_split_column").set_value("fold").run()
    at.selectbox(key="cal_split_value").set_value("cal").run()
    assert not at.exception
    assert any("only negative outcomes" in e.value for e in at.error)
