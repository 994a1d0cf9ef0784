"""AppTest: Home's Summary adds "Other attributes" (issue 26): each other mapped attribute's top finding, the same
sentence its own Summary gives, and the top slices (the bundled COMPAS sample is small enough for the search to run
at every τ step)."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from fairviz.data.samples import load_sample, samples
from fairviz.findings import FindingsParams, attributed_text
from fairviz.report.attributes import slice_search, top_slices
from fairviz.report.audit import AuditParams, run_audit
from fairviz.findings.display import findings_settings
from tests.conftest import ROOT


def _other_attributes_text(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown).replace("\\", "")      # markdown's escapes off


def _expected_top(attribute: str, threshold: float) -> str:
    sample = samples()["compas"]
    findings, words = findings_settings(sample, attribute, FindingsParams())
    audit = run_audit(load_sample("compas"), AuditParams(attribute=attribute, threshold=threshold,
                                                         benefit=sample.benefit, findings=findings, words=words,
                                                         sections=("parity",)))
    return attributed_text(audit.findings.top[0], audit.findings, "plain").plain()


def test_home_shows_the_other_attributes_top_finding_and_follows_tau():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="attribute").value == "race"
    shown = _other_attributes_text(at)
    assert "**Other attributes**" in shown
    expected = _expected_top("sex", at.slider(key="threshold").value)
    assert expected.startswith("sex: ")
    group = expected.split("sex: ")[1].split(" ")[0]
    assert f"- sex: **{group}**" in shown
    assert expected.split("(")[-1].split(";")[0] in shown          # its numbers: effect, CI, p, adjusted p

    at.slider(key="threshold").set_value(0.6).run()
    assert not at.exception, at.exception
    moved = _expected_top("sex", 0.6)
    assert moved.split("(")[-1].split(";")[0] in _other_attributes_text(at)


def test_home_lists_the_top_slices_of_a_small_sample():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    assert not at.exception, at.exception
    pred = load_sample("compas")
    found = top_slices(slice_search(pred, 2, FindingsParams().min_group_size, at.slider(key="threshold").value), 3)
    shown = _other_attributes_text(at)
    assert len(found) == 3                 # COMPAS: race=African-American's FPR and two intersections differ
    for s in found:
        assert f"Slice **{s.slice}** ({int(round(s.n)):,} rows): false positive rate {s.value:.3f}" in shown


def test_the_full_report_prepared_on_home_covers_every_attribute():
    """"Prepare the full report" runs the audit `fairviz audit` runs: every mapped attribute (COMPAS: race and sex),
    the Summary across them, each attribute compared with its own reference."""
    from app_pages import _jobs

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).run()
    next(b for b in at.button if b.label == "Prepare the full report").click().run()
    assert not at.exception, at.exception
    try:
        store = _jobs._server().results["audit_full"]
        key = next(k for k in list(store._items) if k[1] == "race")
        data = store.get(key).data
    finally:            # the server's kept reports are process-wide: later tests prepare their own
        for job in ("audit_full", "report_html"):
            kept = _jobs._server().results.get(job)
            for k in list(kept._items) if kept is not None else ():
                kept.discard(k)
    assert list(data["attributes"]) == ["race", "sex"]
    sex = data["attributes"]["sex"]
    assert sum(g["n"] for g in sex["groups"].values()) == 7214 and set(sex["groups"]) == {"Male", "Female"}
    assert data["summary"]["references"] == {"race": "Caucasian", "sex": sex["findings"]["reference"]}
    assert data["summary"]["attributes"] == ["race", "sex"]
    assert all(f["sentence"].startswith(f["attribute"] + ": ") for f in data["summary"]["top"])


def test_a_regressions_home_lists_its_top_slices_by_mean_residual():
    """The regression sample (Adult hours, sex × race): the top slices compare mean residuals, the search's own."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params["sample"] = "adult_hours"
    at.run()
    assert not at.exception, at.exception
    found = top_slices(slice_search(load_sample("adult_hours"), 2, FindingsParams().min_group_size, 0.5), 3)
    shown = _other_attributes_text(at)
    assert found, "the sample's slices differ in mean residual"
    for s in found:
        assert s.metric == "mean residual (prediction − target)"
        assert f"Slice **{s.slice}** ({int(round(s.n)):,} rows)" in shown
