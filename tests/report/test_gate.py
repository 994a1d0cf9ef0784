"""The release gate: policy files, exit codes and JUnit XML from the findings."""
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from fairviz.calibration import CalibrationParams
from fairviz.data import ColumnMapping, build_predictions
from fairviz.report import plan
from fairviz.report.audit import AuditParams
from fairviz.report.gate import PolicyError, exit_code, junit_xml, load_policy
from fairviz.residuals import RDFParams

FAST = dict(rdf=RDFParams(resamples=100, knee_resamples=0), calibration=CalibrationParams(resamples=100))


def _audit(gap: float, findings=None):
    rng = np.random.default_rng(0)
    n = 2000
    g = np.repeat(["A", "B", "t"], [n, n, 15])
    y = rng.random(g.size) < 0.4
    flag = np.where(y, rng.random(g.size) < 0.7, rng.random(g.size) < np.where(g == "B", 0.2 + gap, 0.2))
    score = np.where(flag, rng.uniform(0.5, 1, g.size), rng.uniform(0, 0.5, g.size))
    pred = build_predictions(pd.DataFrame({"y": y.astype(int), "s": score, "g": g}),
                             ColumnMapping(label="y", score="s", groups=("g",)))
    params = AuditParams(threshold=0.5, **FAST) if findings is None else AuditParams(threshold=0.5, findings=findings,
                                                                                       **FAST)
    return plan.audit(pred, params)


def test_exit_code_and_junit_follow_the_findings():
    biased, fair = _audit(0.2), _audit(0.0)
    assert exit_code(biased.findings, "material") == 1 and exit_code(biased.findings, "never") == 0
    assert exit_code(fair.findings, "material") == 0
    suite = ET.fromstring(junit_xml(biased.findings))
    failures = suite.findall("testcase/failure")
    assert int(suite.get("failures")) == len(failures) == biased.findings.material_count > 0
    assert any("B" in f.get("message") and f.get("type") == "fpr" for f in failures)
    assert [c.get("name") for c in suite.findall("testcase") if c.find("skipped") is not None] == ["t"]


def test_a_policy_file_sets_the_thresholds_and_refuses_typos(tmp_path):
    toml = tmp_path / "policy.toml"
    toml.write_text('alpha = 0.01\nmin_group_size = 50\n[materiality]\nfpr = 0.5\nselection_rate = 0.5\n'
                    'ofi = 0.5\nresidual_distance = 0.5\nfnr = 0.5\ncalibration = 0.5\n')
    params = load_policy(toml)
    assert params.alpha == 0.01 and params.min_group_size == 50 and params.threshold("fpr") == 0.5
    assert exit_code(_audit(0.2, params).findings, "material") == 0       # a lax policy passes the same model
    bad = tmp_path / "bad.json"
    bad.write_text('{"materialty": {"fpr": 0.1}}')
    with pytest.raises(PolicyError, match="unknown keys: materialty"):
        load_policy(bad)
    bad.write_text('{"materiality": {"fpr": "high"}}')
    with pytest.raises(PolicyError, match="wrong type"):
        load_policy(bad)
    bad.write_text('{"alpha": 2}')
    with pytest.raises(PolicyError, match="out of range"):
        load_policy(bad)
