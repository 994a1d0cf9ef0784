"""``fairviz explain`` and ``fairviz audit --explain``: JSON shape, CSV, reload, and one-line errors."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from fairviz.cli.main import main
from fairviz.explain import results as xresults
from fairviz.explain import compare


def _shipped_key() -> str:
    keys = list(xresults.shipped())
    if not keys:
        pytest.fail("assets/explain/ holds no shipped results")
    return "neutral" if "neutral" in keys else keys[0]


def test_shipped_results_json_has_every_method_metric_cell(tmp_path, capsys):
    key = _shipped_key()
    out = tmp_path / "tests.json"
    assert main(["explain", "--shipped", key, "--json", str(out), "--csv", str(tmp_path / "s.csv"),
                 "--correction", "bh"]) == 0
    payload = json.loads(out.read_text())
    result = xresults.load_shipped(key)
    assert payload["groups"] == ["male", "female"] and payload["correction"] == "bh"
    assert set(payload["tests"]) == set(result.methods)
    cell = payload["tests"]["igxi"]["gini"]
    assert set(cell) >= {"n", "median", "p_value", "p_adjusted", "cohens_d", "ci"}
    expected = compare(result, correction="bh").cell("igxi", "gini")
    assert cell["p_value"] == pytest.approx(expected.p_value)
    assert cell["p_adjusted"] == pytest.approx(expected.p_adjusted)
    assert cell["cohens_d"] == pytest.approx(expected.cohens_d)
    assert cell["n"] == {"male": expected.n_i, "female": expected.n_j}
    assert cell["median"]["male"] == pytest.approx(expected.median_i)
    csv = pd.read_csv(tmp_path / "s.csv")
    assert len(csv) == len(result.scores) and {"text", "gini", "method", "p_gold"} <= set(csv.columns)
    assert "Gini index" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words", [
    (["explain", "--methods", "grad,magic"], "Unknown method(s) magic"),
    (["explain", "--metrics", "accuracy"], "Unknown metric(s) accuracy"),
    (["explain", "--data", "missing.csv"], "neither a built-in data set"),
    (["explain", "--shipped", "nope"], "No shipped result 'nope'"),
    (["explain", "--shipped", "neutral", "--alpha", "2"], "--alpha must be between 0 and 1"),
    (["explain", "--load", "/nonexistent"], "is not an explanation result"),
])
def test_bad_input_is_one_line_and_exit_2(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and "Traceback" not in err


def test_upload_with_bad_columns_is_one_line(tmp_path, capsys):
    path = tmp_path / "texts.csv"
    pd.DataFrame({"text": ["a b", "c d"] * 5, "label": [0, 1] * 5, "sex": ["m", "f"] * 5}).to_csv(path, index=False)
    assert main(["explain", "--data", str(path), "--group-column", "gender"]) == 2
    assert "The group column 'gender' is not in the file" in capsys.readouterr().err


@pytest.mark.slow
def test_compute_save_and_reload(tmp_path, capsys):
    folder, out = tmp_path / "run", tmp_path / "t.json"
    assert main(["explain", "--data", "neutral", "--generate", "200", "--pairs", "4", "--methods", "grad,igxi,random",
                 "--metrics", "gini,soft_comp,aopc_comp", "--save", str(folder), "--json", str(out)]) == 0
    first = json.loads(out.read_text())
    assert set(first["tests"]) == {"grad", "igxi", "random"}
    assert first["tests"]["grad"]["gini"]["n"] == {"male": 4, "female": 4}
    assert first["model_behaviour"]["0"]["accuracy"] >= 0.9
    assert main(["explain", "--load", str(folder), "--json", str(tmp_path / "again.json")]) == 0
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["tests"].keys() == first["tests"].keys()
    for method, cells in first["tests"].items():              # the CSVs keep 6 significant digits
        assert again["tests"][method].keys() == cells.keys()
        for metric, cell in cells.items():
            other = again["tests"][method][metric]
            assert other["n"] == cell["n"] and other["significant"] == cell["significant"]
            for key in ("p_value", "cohens_d"):
                assert other[key] == pytest.approx(cell[key], rel=1e-3, abs=1e-4), (method, metric, key)


@pytest.mark.slow
def test_audit_with_explain_section(tmp_path, capsys):
    rng = np.random.default_rng(0)
    words = {1: ["loved", "enjoyed"], 0: ["hated", "feared"]}
    rows = []
    for i in range(160):
        y = int(rng.integers(0, 2))
        gender = "female" if i % 2 else "male"
        subject = "she" if gender == "female" else "he"
        rows.append({"review": f"{subject} {words[y][i % 2]} the film number {i % 7}", "label": y,
                     "score": float(np.clip(0.8 * y + rng.normal(0.1, 0.1), 0, 1)), "gender": gender})
    path = tmp_path / "reviews.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    out, html = tmp_path / "audit.json", tmp_path / "audit.html"
    assert main(["audit", str(path), "--label", "label", "--score", "score", "--group", "gender", "--text", "review",
                 "--explain", "--explain-pairs", "6", "--resamples", "50", "--knee-resamples", "0",
                 "--json", str(out), "--html", str(html)]) == 0
    data = json.loads(out.read_text())
    tests = data["explanations"]["tests"]
    assert set(tests) == {"grad", "gxi", "ig", "igxi", "lime", "shap", "random"}
    assert tests["igxi"]["gini"]["n"]["male"] + tests["igxi"]["gini"]["n"]["female"] == 6
    assert "Explanation disparity" in html.read_text()


def test_audit_without_text_skips_the_section(tmp_path):
    path = tmp_path / "p.csv"
    pd.DataFrame({"y": [0, 1] * 20, "score": np.linspace(0.1, 0.9, 40), "g": ["a", "b"] * 20}).to_csv(path, index=False)
    from fairviz.report.audit import AuditParams, run_audit
    from fairviz.data import load_predictions
    from fairviz.explain.display import ExplainAuditParams
    pred = load_predictions(path)
    audit = run_audit(pred, AuditParams(explain=ExplainAuditParams()))
    assert audit.data["explanations"] == {"skipped": "no text column is mapped, so there is nothing to explain"}
    assert "Skipped" in audit.to_html()
    assert "explanations" not in run_audit(pred).data
