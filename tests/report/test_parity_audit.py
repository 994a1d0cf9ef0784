"""The parity and significance sections of the headless audit: JSON keys (one ``parity`` envelope), merging, CLI
and HTML."""
from __future__ import annotations

import json
import re

import pytest

from fairviz.report import plan
from fairviz.report.audit import AuditParams, merge_section
from fairviz.cli.main import main
from fairviz.residuals import RDFParams
from fairviz.data.samples import load_sample, sample_path
from fairviz.sample_size import MATCH_METRICS, MatchParams

TABLE_32 = ("ofi", "di", "dppl", "accd", "mccd", "pp", "te", "eo_fpr_gap", "eo_max_gap", "aaod", "dca", "dcr")
FAST_RDF = RDFParams(resamples=50, knee_resamples=0)


@pytest.fixture(scope="module")
def compas_audit():
    options = AuditParams(attribute="race", threshold=0.4, rdf=FAST_RDF, benefit="negative")
    return plan.audit(load_sample("compas"), options)


def test_parity_writes_one_envelope_beside_the_residual_pairs(compas_audit):
    data = compas_audit.data
    parity = data["parity"]
    assert list(parity)[:7] == ["method", "attribute", "reference", "groups", "pairs", "settings", "warnings"]
    assert parity["method"] == "ofi_di_match_cps" and parity["attribute"] == "race"
    assert parity["reference"] == "African-American"                          # the largest group: the readings'
    assert len(parity["pairs"]) == len(data["pairs"]) == 15                   # 6 groups, in the residual pairs' order
    assert [(p["group_i"], p["group_j"]) for p in parity["pairs"]] == \
        [(p["group_i"], p["group_j"]) for p in data["pairs"]]
    for pair, residual in zip(parity["pairs"], data["pairs"]):
        assert "f_dist" in residual and "ofi" not in residual                 # each section keeps its own keys
        for key in TABLE_32:
            assert key in pair
        assert pair["four_fifths"] in ("for i", "for j", "none", "undefined")
    aa_white = next(p for p in parity["pairs"] if (p["group_i"], p["group_j"]) == ("African-American", "Caucasian"))
    assert aa_white["ofi"] == pytest.approx(-0.119503, abs=1e-6)
    assert aa_white["di"] == pytest.approx(0.631593, abs=1e-6)
    assert aa_white["dppl"] == pytest.approx(-0.240200, abs=1e-6)
    assert aa_white["parity_reading"] == "algorithmic" and aa_white["ofi_p_value"] < 1e-6
    assert parity["groups"]["African-American"]["tp"] == 990                  # flipped counts
    assert data["groups"]["African-American"]["tp"] == 1369                   # the residuals' on the label
    assert parity["settings"]["benefit"] == "negative"
    json.dumps(data, allow_nan=False)                                          # strict JSON: no NaN anywhere


def test_match_and_cps_sections(compas_audit):
    data = compas_audit.data["parity"]                      # the sample-size check's keys join the envelope
    assert set(data["match"]) == {"African-American", "Caucasian", "Hispanic", "Other", "Asian", "Native American"}
    # MATCH is on the label (issue 34 item 9): the benefit's TPR the section used to call TPR is the label's TNR,
    # with the same test
    asian_tnr = data["match"]["Asian"]["tnr"]
    assert set(asian_tnr) >= {"score", "cdf", "p_value", "p_adjusted", "undefined_probability", "method"}
    assert asian_tnr["score"] == pytest.approx(21 / 23)
    assert asian_tnr["cdf"] == pytest.approx(0.986424, abs=1e-6)
    assert asian_tnr["method"] == "exact joint-ratio"
    assert set(data["match"]["Native American"]) == set(MATCH_METRICS)
    native = data["cps"]["Native American"]
    assert native["lambda"] == 5.0 and native["n"] == 18
    assert native["tp"] + native["fn"] + native["fp"] + native["tn"] == pytest.approx(18.0)
    assert native["tn"] == pytest.approx(5.368200, abs=1e-6)          # on the label: the benefit's TP was TN


def test_undefined_metrics_are_null_with_a_reason():
    options = AuditParams(attribute="race", threshold=0.0, rdf=FAST_RDF, benefit="negative",
                           match=MatchParams(metrics=("acc", "npv")))
    data = plan.audit(load_sample("compas"), options).data
    pair = data["parity"]["pairs"][0]
    assert pair["di"] is None and "neither group gets any benefit" in pair["parity_undefined"]["di"]
    assert pair["ofi"] is not None
    npv = data["parity"]["match"]["Asian"]["npv"]          # τ = 0: every score is ≥ τ, so no negative prediction on the label
    assert npv["score"] is None and npv["p_value"] is None and "no negative predictions" in npv["note"]


def test_merge_section_merges_pairs_groups_and_envelopes_by_key():
    data = {"pairs": [{"group_i": "a", "group_j": "b", "x": 1}], "groups": {"a": {"n": 3}},
            "parity": {"method": "m", "groups": {"a": {}}}}
    merge_section(data, {"pairs": [{"group_i": "a", "group_j": "b", "y": 2}, {"group_i": "a", "group_j": "c", "y": 3}],
                         "groups": {"a": {"z": 1}, "c": {"z": 2}}, "parity": {"match": {"a": {}}}})
    assert data["pairs"] == [{"group_i": "a", "group_j": "b", "x": 1, "y": 2}, {"group_i": "a", "group_j": "c", "y": 3}]
    assert data["groups"] == {"a": {"n": 3, "z": 1}, "c": {"z": 2}}
    assert data["parity"] == {"method": "m", "groups": {"a": {}}, "match": {"a": {}}}


def test_cli_writes_parity_json_and_html(tmp_path, capsys):
    out_json, out_html = tmp_path / "audit.json", tmp_path / "audit.html"
    code = main(["audit", str(sample_path("compas")), "--label", "two_year_recid", "--score", "score",
                 "--group", "race", "--threshold", "0.4", "--benefit", "negative", "--resamples", "50",
                 "--knee-resamples", "0", "--cps-lambda", "10", "--json", str(out_json), "--html", str(out_html)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Benefit = score < 0.40" in printed                                  # the sections' display lists
    assert re.search(r"African-American +Caucasian +-0\.120 +< 0\.001 +0\.632 +for j +algorithmic", printed)
    assert re.search(r"\d+ of \d+ group × metric scores differ from all other rows", printed)
    data = json.loads(out_json.read_text())
    assert data["parity"]["cps"]["Asian"]["lambda"] == 10.0
    page = out_html.read_text(encoding="utf-8")
    assert "Group parity: OFI and DI" in page and "Cross-Prior Smoothing (λ = 10)" in page


@pytest.mark.parametrize("flag, value, message", [
    ("--benefit", "sideways", "invalid choice"),
    ("--cps-lambda", "-1", "--cps-lambda must be >= 0"),
    ("--match-reference", "Martians", "neither 'complement', 'population' nor a group"),
])
def test_cli_bad_parity_options_exit_2_with_one_line(flag, value, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        code = main(["audit", str(sample_path("compas")), "--group", "race", "--resamples", "50",
                     "--knee-resamples", "0", flag, value])
        raise SystemExit(code)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
