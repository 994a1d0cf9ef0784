"""The Summary's findings: planted disparities are found, null data yields none, tiny groups never headline, and
COMPAS opens on the disparity it is known for."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairviz.calibration import CalibrationParams
from fairviz.data import ColumnMapping, build_predictions
from fairviz.data.samples import load_sample
from fairviz.findings import FindingsParams
from fairviz.report.plan import AuditParams, audit as run_audit
from fairviz.report.render import to_html, to_terminal
from fairviz.residuals import RDFParams

FAST = dict(rdf=RDFParams(resamples=200, knee_resamples=0), calibration=CalibrationParams(resamples=200))
HOSTILE = "**x** [a](http://e.x/) ![i](http://e.x/p.png) <b>b</b>"


def _predictions(groups, y, score):
    frame = pd.DataFrame({"y": y, "score": score, "g": groups})
    return build_predictions(frame, ColumnMapping(label="y", score="score", groups=("g",)))


def _planted(seed=0, n=2000, fpr_b=0.4, names=("A", "B")):
    """Two equal groups with the same base rate and true-positive rate; B's label-negatives are flagged twice as
    often (FPR 0.2 vs 0.4 at τ = 0.5)."""
    rng = np.random.default_rng(seed)
    g = np.repeat(names, n)
    y = rng.random(2 * n) < 0.4
    flagged = np.where(y, rng.random(2 * n) < 0.7, rng.random(2 * n) < np.where(g == names[1], fpr_b, 0.2))
    score = np.where(flagged, rng.uniform(0.5, 1.0, 2 * n), rng.uniform(0.0, 0.5, 2 * n))
    return _predictions(g, y.astype(int), score)


def test_planted_fpr_gap_is_found_with_direction_group_and_size():
    audit = run_audit(_planted(), AuditParams(threshold=0.5, **FAST))
    top = audit.findings.top
    fpr = next(f for f in top if f.candidate.kind == "fpr")
    assert (fpr.candidate.group, fpr.candidate.reference) in {("B", "A"), ("A", "B")}
    sign = 1 if fpr.candidate.group == "B" else -1
    assert sign * fpr.candidate.effect == pytest.approx(0.2, abs=0.04)
    low, high = fpr.candidate.ci
    assert low < fpr.candidate.effect < high and (low > 0 or high < 0)
    assert fpr.p_adjusted < 0.001
    assert not any(f.candidate.kind == "fnr" for f in top)          # TPR was planted equal
    assert audit.data["findings"]["top"][0]["headline"] is True


@pytest.mark.slow
def test_null_data_yields_no_material_finding_in_95_percent_of_seeds():
    clean = 0
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        n = 3000
        y = (rng.random(n) < 0.4).astype(int)
        score = np.clip(0.4 + 0.3 * (y - 0.4) + rng.normal(0, 0.2, n), 0, 1)
        groups = rng.choice(["p", "q", "r"], n)
        audit = run_audit(_predictions(groups, y, score), AuditParams(threshold=0.5, **FAST))
        clean += audit.findings.material_count == 0
    assert clean >= 19


def test_a_twenty_row_group_never_headlines():
    rng = np.random.default_rng(3)
    n = 2000
    g = np.array(["big"] * n + ["tiny"] * 20)
    y = (rng.random(n + 20) < 0.5).astype(int)
    score = np.where(g == "tiny", 0.99, rng.uniform(0, 1, n + 20))    # the tiny group is flagged every time
    audit = run_audit(_predictions(g, y, score), AuditParams(threshold=0.5, **FAST))
    assert not any(f.candidate.group == "tiny" or f.candidate.reference == "tiny" for f in audit.findings.top)
    assert [s.group for s in audit.findings.small_groups] == ["tiny"]
    assert any(f.candidate.group == "tiny" and f.significant and f.material and not f.large_enough
               for f in audit.findings.findings)


def test_materiality_and_reference_are_settable_and_stated():
    pred = _planted(fpr_b=0.26)                      # a gap of 0.06
    default = run_audit(pred, AuditParams(threshold=0.5, **FAST))
    strict = run_audit(pred, AuditParams(threshold=0.5, findings=FindingsParams(reference="B").with_materiality(
        fpr=0.10, selection_rate=0.10), **FAST))
    assert any(f.candidate.kind == "fpr" for f in default.findings.top)
    assert not any(f.candidate.kind == "fpr" for f in strict.findings.top)
    assert strict.data["findings"]["reference"] == "B"
    assert strict.data["findings"]["policy"]["materiality"]["fpr"] == 0.10
    with pytest.raises(ValueError, match="unknown finding kind"):
        FindingsParams().with_materiality(fpx=0.1)


def test_compas_summary_opens_on_african_american_vs_caucasian_at_tau_04():
    pred = load_sample("compas")
    audit = run_audit(pred, AuditParams(attribute="race", threshold=0.4, benefit="negative",
                                        findings=FindingsParams(reference="Caucasian")))
    first = audit.data["findings"]["top"][0]
    assert (first["group"], first["reference"]) == ("African-American", "Caucasian")
    assert first["ci"][0] > 0.15 and first["p_adjusted"] < 0.001
    fpr = next(f for f in audit.data["findings"]["top"] if f["kind"] == "fpr")
    assert round(fpr["group_value"], 2) == 0.45 and round(fpr["reference_value"], 2) == 0.23
    assert {s["group"] for s in audit.data["findings"]["too_small"]} == {"Asian", "Native American"}


def test_hostile_group_names_stay_inert_in_the_summary():
    audit = run_audit(_planted(names=("A", HOSTILE)), AuditParams(threshold=0.5, **FAST))
    html = to_html(audit.summary_display())
    assert "<a " not in html and "<img" not in html and "&lt;b&gt;b&lt;/b&gt;" in html
    assert HOSTILE in to_terminal(audit.summary_display())
