"""A section that fails is recorded and the rest of the audit carries on (JSON, HTML, terminal)."""
from fairviz.data.samples import load_sample
from fairviz.report import plan
from fairviz.report.audit import AuditParams
from fairviz.residuals import RDFParams


def test_a_failing_section_is_recorded_and_the_others_carry_on(monkeypatch):
    from dataclasses import replace
    calibration = plan.check("calibration")
    monkeypatch.setitem(calibration.methods, "binary", replace(calibration.section("binary"), run=_boom))
    result = plan.audit(load_sample("compas"), AuditParams(attribute="race", threshold=0.4, benefit="negative",
                                                          rdf=RDFParams(resamples=50, knee_resamples=0)))
    assert result.data["errors"] == [{"section": "calibration", "error": "ValueError: the fit diverged"}]
    assert "calibration" not in result.data and "ofi" in result.data["parity"]["pairs"][0]        # parity still ran
    assert result.findings is not None and result.data["findings"]["top"]                 # and the Summary
    html = result.to_html()
    assert "This section could not be computed: ValueError: the fit diverged" in html
    assert "This section could not be computed" in result.to_terminal()


def _boom(pred, params):
    raise ValueError("the fit diverged")
