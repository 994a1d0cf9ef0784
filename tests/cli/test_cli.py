"""`fairviz audit`: the JSON contract, the HTML report, and one clear line plus exit 2 on bad input."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from fairviz.cli.main import main
from fairviz.data.samples import sample_path

ARGS = ["--label", "y", "--score", "score", "--group", "group", "--resamples", "100", "--knee-resamples", "20"]


@pytest.fixture
def csv_path(tmp_path, two_group_frame):
    path = tmp_path / "preds.csv"
    two_group_frame.to_csv(path, index=False)
    return path


def test_audit_json_has_the_contract(csv_path, tmp_path, capsys, two_group_frame):
    out = tmp_path / "audit.json"
    assert main(["audit", str(csv_path), *ARGS, "--threshold", "0.5", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["n_rows"] == 4000 and data["threshold"] == 0.5
    frame = two_group_frame
    for name in ("A", "B"):
        g = data["groups"][name]
        rows = frame[frame.group == name]
        decided = rows.score >= 0.5
        assert g["n"] == 2000 and g["positives"] == int(rows.y.sum())
        assert g["tp"] == int((decided & (rows.y == 1)).sum()) and g["fp"] == int((decided & (rows.y == 0)).sum())
        assert g["tn"] + g["fn"] == int((~decided).sum())
        assert g["ppr"] == pytest.approx(decided.mean()) and g["tpr"] == pytest.approx(decided[rows.y == 1].mean())
        assert g["median_residual"] == pytest.approx(np.median(rows.score - rows.y))
        assert 0 <= g["ece"] <= 1
        assert {"percentile", "residual"} <= set(data["knees"][name][0])
    pair = data["pairs"][0]
    assert (pair["group_i"], pair["group_j"]) == ("A", "B")
    assert pair["dp_diff"] == pytest.approx(data["groups"]["A"]["ppr"] - data["groups"]["B"]["ppr"])
    assert pair["eo_fpr_diff"] == pytest.approx(data["groups"]["A"]["fpr"] - data["groups"]["B"]["fpr"])
    for key in ("f_pattern", "f_dist", "f_h", "f_v", "eo_tpr_diff"):
        assert key in pair
    assert set(data["knee_concentration"]) >= {"ratio", "p_value", "ece", "regime"}
    assert "F_pattern" in capsys.readouterr().out


def test_json_to_stdout_is_pure_json_with_the_summary_on_stderr(csv_path, capsys):
    assert main(["audit", str(csv_path), *ARGS, "--json", "-"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["n_rows"] == 4000          # pipes into jq without the summary lines
    assert "F_pattern" in captured.err


def test_audit_html_is_self_contained_and_escapes(tmp_path, two_group_frame):
    frame = two_group_frame.assign(group=two_group_frame.group.map({"A": "<script>alert(1)</script>", "B": "B&B"}))
    path = tmp_path / "x.csv"
    frame.to_csv(path, index=False)
    html_path = tmp_path / "r.html"
    assert main(["audit", str(path), *ARGS, "--html", str(html_path)]) == 0
    page = html_path.read_text()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script src=" not in page and "<link " not in page          # nothing is fetched from the network
    assert page.count("Plotly.newPlot") >= 4


def test_null_rates_are_null_not_zero(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("y,score,group\n0,0.9,a\n0,0.2,a\n1,0.7,b\n0,0.1,b\n")
    out = tmp_path / "a.json"
    assert main(["audit", str(path), *ARGS, "--json", str(out)]) == 0
    assert json.loads(out.read_text())["groups"]["a"]["tpr"] is None


@pytest.mark.parametrize("content, fragment", [
    ("", "is empty"),
    ("y,score,group\n1,high,a\n0,0.2,b\n", "non-numeric"),
    ("y,score,group\n1,0.9,a\n0,0.2,a\n", "single value"),
    ("y,score,group\n3,0.9,a\n0,0.2,b\n1,0.2,b\n", "must be binary"),
    ("y,score,group\n1,1.9,a\n0,0.2,b\n", "outside [0, 1]"),
])
def test_bad_input_one_line_exit_2(tmp_path, capsys, content, fragment):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    assert main(["audit", str(path), *ARGS]) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1 and "Traceback" not in err


def test_console_script_usage_errors_exit_2():
    result = subprocess.run([sys.executable, "-m", "fairviz.cli", "audit", "missing.csv"], capture_output=True,
                            text=True)
    assert result.returncode == 2 and result.stderr.strip() == "fairviz: error: File not found: missing.csv"
    result = subprocess.run([sys.executable, "-m", "fairviz.cli", "audit"], capture_output=True, text=True)
    assert result.returncode == 2 and result.stderr.count("\n") == 1


def test_compas_sample_reproduces_propublica_counts(tmp_path):
    out = tmp_path / "c.json"
    assert main(["audit", str(sample_path("compas")), "--label", "two_year_recid", "--score", "score",
                 "--group", "race", "--threshold", "0.4", "--resamples", "50", "--knee-resamples", "0",
                 "--json", str(out)]) == 0
    black = json.loads(out.read_text())["groups"]["African-American"]
    # ProPublica's truth table (High/Medium = predicted positive = decile ≥ 5)
    assert (black["tp"], black["fn"], black["fp"], black["tn"]) == (1369, 532, 805, 990)
