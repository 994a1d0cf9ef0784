"""The calibration section of the headless audit: its one JSON shape (method, attribute, groups, pairs, settings,
notes) with the keys the issue names in every group's record, the CLI and the HTML report."""
from __future__ import annotations

import json

import pytest

from fairviz.core.serialize import clean
from fairviz.report import plan
from fairviz.report.audit import AuditParams
from fairviz.calibration.reliability_display import calibration_to_dict
from fairviz.calibration import CalibrationParams, analyse
from fairviz.core.wording import fmt, fmt_p
from fairviz.cli.main import main
from fairviz.residuals import RDFParams
from fairviz.data.samples import load_sample, sample_path

SUMMARY_KEYS = ("ece", "smooth_ece", "intercept", "intercept_p", "slope", "slope_p", "lr_p_value")    # the issue's, first
BIN_KEYS = {"lower", "upper", "n", "n_pos", "mean_pred", "observed", "ci_low", "ci_high"}


def test_calibration_json_is_the_one_section_shape_with_the_issue_keys():
    pred = load_sample("compas")
    cal = analyse(pred, "race", CalibrationParams(resamples=50))
    data = clean(calibration_to_dict(cal))
    assert list(data) == ["calibration"]
    record = data["calibration"]
    assert list(record) == ["method", "attribute", "groups", "pairs", "overall", "group_difference", "settings", "notes"]
    assert record["method"] == "reliability" and record["attribute"] == "race"
    assert list(record["groups"]) == list(pred.groups("race").names)
    section = {**record["groups"], "overall": record["overall"]}
    for name, values in section.items():
        assert tuple(values)[:len(SUMMARY_KEYS)] == SUMMARY_KEYS and list(values)[-1] == "bins", name
        assert len(values["bins"]) == 10 and all(set(b) == BIN_KEYS for b in values["bins"])
    assert section["Native American"]["slope"] is None                  # not enough data: null, never 0
    assert section["Native American"]["status"].startswith("not enough data (n = 18")
    assert record["overall"]["n"] == pred.n and record["overall"]["ece"] == pytest.approx(cal.overall.ece, abs=1e-15)
    aa = section["African-American"]
    assert aa["slope"] == pytest.approx(cal.group("African-American").linear.slope.estimate)
    assert sum(b["n"] for b in section["overall"]["bins"]) == pred.n
    empty = [b for b in section["overall"]["bins"] if b["n"] == 0]
    assert all(b["observed"] is None and b["ci_low"] is None for b in empty)
    json.dumps(data)                                                     # JSON-safe


@pytest.mark.slow
def test_cli_writes_calibration_json_and_html(tmp_path, capsys):
    out, report = tmp_path / "audit.json", tmp_path / "audit.html"
    code = main(["audit", str(sample_path("synthetic")), "--label", "y", "--score", "score", "--group", "group",
                 "--json", str(out), "--html", str(report), "--resamples", "100", "--knee-resamples", "0",
                 "--bins", "8", "--bin-strategy", "quantile"])
    assert code == 0
    data = json.loads(out.read_text())
    groups = data["calibration"]["groups"]
    assert set(groups) == {"A", "B", "C"} and "overall" in data["calibration"]
    assert len(groups["A"]["bins"]) == 8
    assert data["calibration"]["settings"]["strategy"] == "quantile"
    assert groups["B"]["intercept"] < 0 and groups["C"]["slope"] > 0
    text = capsys.readouterr().out
    # the terminal summary (report/summary.py) gives way to Audit.to_terminal() when issue 21 is merged: either
    # prints group C's calibration and the group-difference headline
    assert "calibration C:" in text or any(line.split()[:1] == ["C"] for line in text.splitlines())   # a table row
    assert "calibration differs by group?" in text or "Does calibration differ by group?" in text
    page = report.read_text()
    assert "Calibration: reliability diagrams" in page and "Subgroup performance with uncertainty" in page


def test_cli_rejects_bad_bins(capsys):
    code = main(["audit", str(sample_path("synthetic")), "--bins", "1"])
    assert code == 2 and "--bins must be between 2 and 100" in capsys.readouterr().err


def test_the_audit_keeps_the_calibration_options():
    pred = load_sample("default")
    audit = plan.audit(pred, AuditParams(rdf=RDFParams(resamples=50, knee_resamples=0),
                                         calibration=CalibrationParams(n_bins=5, resamples=0)))
    assert len(audit.data["calibration"]["overall"]["bins"]) == 5
    assert audit.data["calibration"]["overall"]["smooth_ece_ci"] == [None, None]


def test_group_difference_headline_is_in_every_renderer(capsys):
    """The page's headline p (the smaller of two LR tests, Bonferroni for two) is in the JSON, the HTML and the
    terminal summary: one number from the result, not recomputed by the page."""
    pred = load_sample("compas")
    audit = plan.audit(pred, AuditParams(attribute="race", threshold=0.4, rdf=RDFParams(resamples=0, knee_resamples=0),
                                         calibration=CalibrationParams(resamples=0)))
    diff = audit.results["calibration"].difference
    expected = min(1.0, 2 * min(diff.linear.p, diff.in_the_large.p))
    group = audit.data["calibration"]["group_difference"]
    assert group["p_value_bonferroni"] == pytest.approx(expected)
    assert expected < 0.001                                              # COMPAS: calibration differs by race
    assert "(the smaller of two likelihood-ratio tests, Bonferroni-corrected)" in audit.to_html()
    assert main(["audit", str(sample_path("compas")), "--label", "two_year_recid", "--score", "score", "--group",
                 "race", "--resamples", "0", "--knee-resamples", "0"]) == 0
    printed = " ".join(capsys.readouterr().out.split())              # the terminal wraps paragraphs
    assert ("calibration differs by group? p < 0.001 (Bonferroni over two LR tests" in printed        # report/summary.py
            or "Calibration differs between groups: p < 0.001 (the smaller of two likelihood-ratio tests, "
               "Bonferroni-corrected)" in printed)                                           # Audit.to_terminal()
    assert "Calibration differs between groups: p < 0.001 (the smaller of two likelihood-ratio tests, " \
           "Bonferroni-corrected)" in " ".join(audit.to_terminal().split())


def test_terminal_carries_every_group_and_the_group_difference():
    """What the terminal printed for calibration before the display list (per group: ECE, smooth ECE, intercept
    and slope with their p, the joint LR p or why untested; the group-difference p with χ²(df)) it still prints,
    from the section's display list (collapsed groups and figures left out)."""
    pred = load_sample("compas")
    audit = plan.audit(pred, AuditParams(attribute="race", threshold=0.4, rdf=RDFParams(resamples=0, knee_resamples=0),
                                         calibration=CalibrationParams(resamples=0)))
    terminal = audit.to_terminal()
    lines = terminal.splitlines()
    record = audit.data["calibration"]
    for name, g in {**record["groups"], "overall": record["overall"]}.items():
        rows = [line for line in lines if line.split()[:len(name.split())] == name.split()]
        assert any(fmt(g["ece"], 4) in line and fmt(g["smooth_ece"], 4) in line for line in rows), name
        status = g["status"]
        if status is None:
            wanted = [fmt(g["intercept"]), fmt_p(g["intercept_p"]), fmt(g["slope"]), fmt_p(g["slope_p"]),
                      fmt_p(g["lr_p_value"])]
            assert any(all(w in line for w in wanted) for line in rows), name
        else:
            assert any(status in line for line in rows), name
    diff = record["group_difference"]
    finding = " ".join(terminal.split())                     # the terminal wraps the paragraph
    assert (f"p {fmt_p(diff['p_value_bonferroni'])} (the smaller of two likelihood-ratio tests, Bonferroni-corrected)"
            in finding)
    assert f"χ²({diff['df']}) = {diff['lr_statistic']:.2f}, p {fmt_p(diff['p_value'])}" in finding
    assert "Binning table" not in terminal                   # a collapsed detail
