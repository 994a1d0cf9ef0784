"""Readings open on the reference group against the Summary's top group, never on a group under the size floor; the
quick audit runs only what the Summary tests; every finding knows the page view that shows it (issue 23)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from fairviz.calibration import CalibrationParams, analyse as calibration_analyse
from fairviz.core.display import Group, Metrics, Text
from fairviz.core.focus import Focus
from fairviz.data.samples import load_sample, samples
from fairviz.findings import FindingsParams, finding_view, page_metric
from fairviz.parity import ParityParams, analyse as parity_analyse
from fairviz.calibration import reliability_display as calibration_section
from fairviz.parity import display as parity_section
from fairviz.report.plan import AuditParams, audit as run_audit
from fairviz.findings.display import findings_settings
from fairviz.residuals import RDFParams, analyse as residual_analyse
from fairviz.residuals.readings import curves_reading

TINY = ("Asian", "Native American")            # COMPAS race groups of 32 and 18 rows
COMPAS_SIZES = {"African-American": 3696, "Caucasian": 2454, "Hispanic": 637, "Other": 377, "Asian": 32,
                "Native American": 18}


@pytest.fixture(scope="module")
def compas():
    return load_sample("compas")


def test_focus_pairs_the_reference_with_the_asked_group_never_one_under_the_floor():
    assert Focus("Caucasian", 100, "Hispanic").pair(COMPAS_SIZES) == ("Hispanic", "Caucasian")
    # a tiny group asked for, or none: the largest other group of 100+ rows
    assert Focus("Caucasian", 100, "Asian").pair(COMPAS_SIZES) == ("African-American", "Caucasian")
    assert Focus("Caucasian", 100).pair(COMPAS_SIZES) == ("African-American", "Caucasian")
    # no reference given: the largest group is the reference
    assert Focus(None, 100).pair(COMPAS_SIZES) == ("Caucasian", "African-American")
    # the reference itself is not a comparison
    assert Focus("Caucasian", 100, "Caucasian").pair(COMPAS_SIZES) == ("African-American", "Caucasian")
    # nothing else reaches the floor: no pair to headline, though a picker still gets the largest other group
    small = {"A": 500, "B": 40, "C": 20}
    assert Focus("A", 100).pair(small) is None
    assert Focus("A", 100).pair_or_largest(small) == ("B", "A")
    assert Focus("A", 100).pair_or_largest({"A": 5}) is None


def test_residual_reading_names_the_reference_pair_not_the_tiny_extremes(compas):
    audit = residual_analyse(compas, "race", RDFParams(resamples=0, knee_resamples=0))
    reading = curves_reading(audit, Focus("Caucasian", 100, "African-American")).plain()
    assert "African-American against the reference Caucasian: F_dist = " in reading
    assert not any(name in reading for name in TINY)          # on main: "runs from … to 0.050 for Asian"
    small_only = curves_reading(audit, Focus("Caucasian", 10_000)).plain()
    assert "too small to tell" in small_only


def test_equal_rounded_medians_get_more_digits_or_read_the_same():
    def audit(*medians):
        groups = [SimpleNamespace(name=n, n=500, median_residual=m) for n, m in zip(("Male", "Female"), medians)]
        return SimpleNamespace(groups=groups, pairs=[])

    assert curves_reading(audit(0.0501, 0.0498)).plain() == (
        "Reading. Typical error (median residual) among groups of 100+ rows runs from 0.0498 for Female to 0.0501 "
        "for Male.")
    assert curves_reading(audit(0.05, 0.05)).plain() == (
        "Reading. Typical error (median residual) is the same, 0.050, for every group among groups of 100+ rows.")


def test_calibration_headline_never_names_a_group_under_the_floor(compas):
    cal = calibration_analyse(compas, "race", CalibrationParams(resamples=0))
    options = AuditParams(attribute="race", findings=FindingsParams(reference="Caucasian"), focus="African-American")
    items = calibration_section.display(compas, cal, options)
    metrics = next(i for i in items if isinstance(i, Metrics)).items
    labels = [m.label.plain() for m in metrics]
    assert labels[1].startswith("Worst group: ") and labels[2].startswith("Best group: ")
    assert not any(name in label for label in labels for name in TINY)     # on main: "Best group: Asian"
    texts = " ".join(i.plain() for i in items if isinstance(i, Text))
    assert "African-American against the reference Caucasian: smooth ECE" in texts
    none_large = next(i for i in calibration_section.headline(cal, Focus("Caucasian", 10_000)) if isinstance(i, Metrics))
    assert [m.value for m in none_large.items][1] == "too small to tell"


def test_parity_reading_opens_on_the_reference_pair(compas):
    audit = parity_analyse(compas, "race", ParityParams(threshold=0.4, benefit="negative"))
    options = AuditParams(attribute="race", threshold=0.4, benefit="negative",
                          findings=FindingsParams(reference="Caucasian"))
    assert parity_section.focus_pair(audit, options) == ("African-American", "Caucasian")
    reading = next(i for i in parity_section.display(compas, audit, options) if isinstance(i, Group)).items[-1]
    assert "African-American" in reading.plain() and not any(name in reading.plain() for name in TINY)


def test_the_quick_audit_runs_only_what_the_summary_tests_and_says_so(compas):
    sample = samples()["compas"]
    findings, words = findings_settings(sample, "race")
    base = dict(attribute="race", threshold=sample.threshold, benefit=sample.benefit, findings=findings, words=words)
    full = run_audit(compas, AuditParams(**base, rdf=RDFParams(resamples=0, knee_resamples=0),
                                         calibration=CalibrationParams(resamples=0)))
    quick = run_audit(compas, AuditParams(**base, sections=("parity", "significance")))
    assert set(quick.results) == {"parity", "significance"}
    assert quick.data["sections_skipped"] == ["residuals", "threshold_invariance", "calibration", "explanations"]
    as_rows = [(f.candidate.kind, f.candidate.group, round(f.candidate.effect, 12)) for f in quick.findings.top]
    assert as_rows == [(f.candidate.kind, f.candidate.group, round(f.candidate.effect, 12))
                       for f in full.findings.top]
    assert as_rows[0][:2] == ("selection_rate", "African-American")
    assert quick.findings.untested_kinds() == ("residual_distance", "calibration")
    assert "Not tested here: residual distribution distance (F_dist), calibration error gap (ECE)" in \
        quick.to_terminal()


def test_each_finding_carries_the_view_that_shows_it(compas):
    sample = samples()["compas"]
    findings, words = findings_settings(sample, "race")
    audit = run_audit(compas, AuditParams(attribute="race", threshold=0.4, benefit="negative", findings=findings,
                                          words=words, sections=("parity", "significance")))
    view = audit.data["findings"]["top"][0]["view"]
    assert view == {"page": "parity", "attribute": "race", "reference": "Caucasian", "group": "African-American",
                    "metric": "ppr_gap", "tau": "0.40", "pair": "African-American\u241fCaucasian",
                    "kind": "selection_rate"}
    # the finding's own quantity, on the label, whichever prediction is the benefit (issue 34 item 9: COMPAS' FPR
    # finding opened PP, the TPR gap on the benefit, −0.214 for a +0.214 FPR gap)
    for benefit in ("negative", "positive"):
        assert page_metric("fpr", benefit, "parity") == "fpr_gap"
        assert page_metric("fpr", benefit, "significance") == "fpr"
    assert dict(finding_view("calibration", "race", "Other", "Caucasian", 0.5, "positive"))["page"] == "calibration"


def test_the_report_sections_read_the_summarys_top_pair(compas):
    sample = samples()["compas"]
    findings, words = findings_settings(sample, "race")
    audit = run_audit(compas, AuditParams(attribute="race", threshold=0.4, benefit="negative", findings=findings,
                                          words=words, rdf=RDFParams(resamples=0, knee_resamples=0),
                                          calibration=CalibrationParams(resamples=0)))
    terminal = audit.to_terminal()
    assert "African-American against the reference Caucasian: F_dist" in terminal
    assert "Best group: Asian" not in terminal and "in favour of Other" not in terminal


def test_the_top_finding_needs_only_the_parity_section(compas):
    """The pages read the Summary's top finding from a parity-only audit: the same ranking as the quick audit."""
    sample = samples()["compas"]
    findings, words = findings_settings(sample, "race")
    base = dict(attribute="race", threshold=0.4, benefit="negative", findings=findings, words=words)
    quick = run_audit(compas, AuditParams(**base, sections=("parity", "significance")))
    parity_only = run_audit(compas, AuditParams(**base, sections=("parity",)))
    assert [f.candidate for f in parity_only.findings.top] == [f.candidate for f in quick.findings.top]
    assert [f.p_adjusted for f in parity_only.findings.top] == [f.p_adjusted for f in quick.findings.top]


def test_the_quick_audit_runs_match_only_when_a_group_is_under_the_floor(compas):
    import numpy as np
    import pandas as pd

    from fairviz.data import ColumnMapping, build_predictions
    from fairviz.report.plan import summary_sections

    assert summary_sections(compas, "race") == ("parity", "significance")      # Asian (32), Native American (18)
    assert summary_sections(compas, "sex") == ("parity",)                      # 5,819 and 1,395 rows
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"y": rng.integers(0, 2, 300), "score": rng.random(300), "g": ["a"] * 150 + ["b"] * 150})
    pred = build_predictions(frame, ColumnMapping(label="y", score="score", groups=("g",)))
    assert summary_sections(pred, "g") == ("parity",)
    assert summary_sections(pred, "g", FindingsParams(min_group_size=200)) == ("parity", "significance")
