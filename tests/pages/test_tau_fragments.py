"""The audit pages draw τ, in its sidebar place, from the fragment that holds what τ changes (issue 23: a τ step
reruns that part alone; tests/browser/test_home_tau_step.py checks the rerun's scope in Chromium), and a τ change
updates the numbers τ changes, on the COMPAS sample by race (benefit: the negative prediction)."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from fairviz.core.wording import fmt
from fairviz.data.samples import load_sample
from fairviz.parity import ParityParams, analyse
from fairviz.report.options import AuditParams
from fairviz.sample_size.display import SECTION as SIGNIFICANCE
from fairviz.residuals import threshold_check
from tests.conftest import ROOT
from tests.pages.tabs import open_tab

PAGES = ("app_pages/residuals.py", "app_pages/calibration.py", "app_pages/parity.py", "app_pages/significance.py")
BEFORE, AFTER = 0.40, 0.60           # the sample's τ, and a step away from it


def _open(page: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    assert at.slider(key="threshold").value == pytest.approx(BEFORE)
    return at


def _step(at: AppTest, tau: float = AFTER) -> AppTest:
    at.slider(key="threshold").set_value(tau).run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("page", PAGES)
def test_the_page_draws_tau_and_the_link_from_its_fragment(page):
    at = _open(page)
    assert "_tau_slot" in at.session_state and at.session_state["_tau_slot"]["drawn"]   # the page's fragment drew τ
    labels = [w.label for w in at.sidebar if getattr(w, "label", None)]
    assert labels.index("Group attribute") < labels.index("Decision threshold τ") < labels.index("Reference group")
    _step(at)
    assert "tau=0.60" in at.sidebar.code[0].value and len(at.sidebar.code) == 1   # drawn once, by the fragment


def test_residuals_threshold_view_follows_tau():
    pred = load_sample("compas")
    at = _open(PAGES[0])

    def dp_gap() -> float:
        table = next(d.value for d in open_tab(at, "rdf_tab", "Threshold view (Thm 6.1)").dataframe
                     if "DP gap counted" in d.value.columns)
        return table.set_index("pair").loc["African-American vs Caucasian", "DP gap counted"]

    expected = {tau: threshold_check(pred, "race", tau).gaps[0] for tau in (BEFORE, AFTER)}
    assert {g["group_i"] + g["group_j"] for g in expected.values()} == {"African-AmericanCaucasian"}
    assert dp_gap() == pytest.approx(expected[BEFORE]["dp_diff_direct"])
    _step(at)
    assert dp_gap() == pytest.approx(expected[AFTER]["dp_diff_direct"])
    assert expected[AFTER]["dp_diff_direct"] != pytest.approx(expected[BEFORE]["dp_diff_direct"], abs=1e-3)


def test_parity_ofi_follows_tau():
    pred = load_sample("compas")
    ofi = {tau: analyse(pred, "race", ParityParams(threshold=tau, benefit="negative"))
           .values("African-American", "Caucasian")["ofi"] for tau in (BEFORE, AFTER)}
    at = _open(PAGES[2])
    metrics = lambda: {m.label: m.value for m in at.metric}                # noqa: E731
    assert metrics()["OFI (i − j)"] == fmt(ofi[BEFORE]) == "-0.120"
    _step(at)
    assert at.selectbox(key="parity_i").value == "African-American"
    assert metrics()["OFI (i − j)"] == fmt(ofi[AFTER]) != fmt(ofi[BEFORE])


def test_significance_observed_score_follows_tau():
    pred = load_sample("compas")
    observed = {tau: SIGNIFICANCE.run(pred, AuditParams(attribute="race", threshold=tau, benefit="negative"))
                .match.get("Asian", "tnr").score for tau in (BEFORE, AFTER)}        # on the label (issue 34)
    at = _open(PAGES[3])
    at.selectbox(key="match_group").set_value("Asian").run()
    at.selectbox(key="match_metric").set_value("tnr").run()
    metrics = lambda: {m.label: m.value for m in at.metric}                # noqa: E731
    assert metrics()["Observed"] == fmt(observed[BEFORE]) == "0.913"
    _step(at)
    assert metrics()["Observed"] == fmt(observed[AFTER]) != fmt(observed[BEFORE])
