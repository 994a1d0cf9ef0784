"""AppTest: the home page opens on a sample at once; the RDF page shows the numbers fairviz computes."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from fairviz.residuals import RDFParams, analyse
from fairviz.data.samples import load_sample, samples
from fairviz.report.plan import AuditParams, audit as run_audit

from app_pages import _ui
from tests.conftest import ROOT
from tests.pages.tabs import open_tab

RDF_PAGE = "app_pages/residuals.py"


def _app() -> AppTest:
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()


def test_home_opens_on_the_default_sample():
    at = _app()
    assert not at.exception
    assert at.title[0].value == "fairviz — visual fairness exploration"
    assert any(m.label == "Rows" and m.value == "7,214" for m in at.metric)
    assert at.subheader[0].value == "Summary: COMPAS recidivism (ProPublica) · race at τ = 0.40"
    assert at.subheader[1].value == "Now analysing: COMPAS recidivism (ProPublica)"
    assert at.slider(key="threshold").value == pytest.approx(0.4)        # the sample's own threshold
    race = at.dataframe[0].value
    assert race.set_index("group").loc["African-American", "n"] == 3696


def test_choosing_another_sample_switches_every_page():
    at = _app()
    at.selectbox(key="sample_choice").set_value("default").run()
    assert not at.exception
    assert at.subheader[1].value == "Now analysing: Credit card default (ISLR)"
    assert any(m.label == "Rows" and m.value == "5,000" for m in at.metric)
    at.switch_page(RDF_PAGE).run()
    assert not at.exception
    assert "Sorted residuals by student" in at.get("plotly_chart")[0].proto.spec


def test_residual_page_shows_the_computed_metrics():
    at = _app()
    at.selectbox(key="sample_choice").set_value("synthetic").run()
    at.switch_page(RDF_PAGE).run()
    assert not at.exception and not at.error
    assert at.title[0].value == "Residual distribution fairness"
    pairs = at.dataframe[0].value.set_index("pair (i vs j)")
    expected = analyse(load_sample("synthetic"), "group", RDFParams())
    for p in expected.pairs:
        row = pairs.loc[f"{p.group_i} vs {p.group_j}"]
        assert row["F_pattern"] == pytest.approx(p.f_pattern) and row["F_dist"] == pytest.approx(p.f_dist)
    groups = open_tab(at, "rdf_tab", "Groups").dataframe[0].value.set_index("group")
    assert groups.loc["C", "n"] == expected.group("C").n
    open_tab(at, "rdf_tab", "Knee error concentration")
    assert any(m.label == "Error ratio knee / elsewhere" and m.value == f"{expected.concentration.ratio:.2f}×"
               for m in at.metric)


def test_null_control_and_attribute_switch():
    at = _app()
    at.switch_page(RDF_PAGE).run()
    at.selectbox(key="attribute").set_value("sex").run()
    assert not at.exception
    assert list(at.dataframe[0].value["pair (i vs j)"]) == ["Male vs Female"]
    at.toggle[0].set_value(True).run()
    assert not at.exception
    assert any("Null control" in i.value for i in at.info)


def test_sidebar_choices_survive_page_switches():
    at = _app()
    at.slider(key="threshold").set_value(0.63).run()
    at.selectbox(key="attribute").set_value("sex").run()
    at.switch_page(RDF_PAGE).run()
    assert at.slider(key="threshold").value == pytest.approx(0.63)
    assert at.selectbox(key="attribute").value == "sex"
    at.switch_page("app_pages/home.py").run()
    assert at.slider(key="threshold").value == pytest.approx(0.63)


def test_home_opens_on_the_summary_and_prepares_the_full_report_on_request():
    at = _app()
    at.selectbox(key="sample_choice").set_value("synthetic").run()
    assert not at.exception
    assert at.subheader[0].value.startswith("Summary: ")
    sample = samples()["synthetic"]
    quick = run_audit(load_sample("synthetic"), AuditParams(attribute="group", threshold=sample.threshold,
                                                            benefit=sample.benefit, **_ui.SUMMARY_PARAMS))
    top = quick.findings.top[0]
    shown = "\n".join(m.value for m in at.markdown).replace("\\", "").replace("*", "")
    assert top.candidate.group in shown and f"{top.candidate.effect:+.3f}" in shown
    assert any("Not tested here" in c.value for c in at.caption)          # the resampled comparisons: in the report
    next(b for b in at.button if b.label == "Prepare the full report").click().run()
    assert not at.exception
    assert [b.label for b in at.get("download_button")] == ["Download JSON", "Download HTML report"]
