"""`fairviz audit` on regression and multiclass files (issue 25): --task (guessed when omitted), --score as the
prediction, --class-scores as a glob or a list, --predicted with its confidence, --units; the JSON written with its
task; the gate on every task; bad input → one plain line and exit 2."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from fairviz.cli.main import main

CLASSES = np.array(["cat", "dog", "bird"])
FAST = ["--resamples", "100", "--knee-resamples", "0"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tasks")
    rng = np.random.default_rng(0)
    n = 1500
    group = rng.choice(["a", "b", "c"], n, p=[0.5, 0.35, 0.15]).astype(object)
    prediction = rng.normal(50, 10, n)
    target = prediction + rng.normal(0, 5, n) + 5 * (group == "b")
    pd.DataFrame({"price": target.round(3), "y_pred": prediction.round(3), "group": group}).to_csv(
        folder / "regression.csv", index=False)
    p = rng.dirichlet([2, 2, 2], n)
    labels = (rng.random(n)[:, None] > np.cumsum(p, 1)).sum(1)
    swap = (group == "b") & (labels == 0) & (rng.random(n) < 0.6)     # group b's cats read as dogs
    p[swap] = p[swap][:, [1, 0, 2]]
    p[swap, 1] = p[swap].max(1) + 0.05
    p /= p.sum(1, keepdims=True)
    frame = pd.DataFrame({"label": CLASSES[labels], "p_cat": p[:, 0], "p_dog": p[:, 1], "p_bird": p[:, 2],
                          "group": group})
    frame.to_csv(folder / "multiclass.csv", index=False)
    pd.DataFrame({"label": frame.label, "predicted": CLASSES[p.argmax(1)], "confidence": p.max(1),
                  "group": group}).to_csv(folder / "predicted.csv", index=False)
    broken = frame.copy()
    broken.loc[3, "p_dog"] = 1.7
    broken.to_csv(folder / "broken.csv", index=False)
    pd.DataFrame({"price": rng.integers(0, 2, n), "y_pred": prediction, "group": group}).to_csv(
        folder / "two_values.csv", index=False)
    return folder


def _audit(capsys, *args):
    code = main(["audit", *map(str, args), *FAST])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_regression_file(files, tmp_path, capsys):
    out = tmp_path / "audit.json"
    code, terminal, _ = _audit(capsys, files / "regression.csv", "--task", "regression", "--label", "price",
                               "--score", "y_pred", "--group", "group", "--units", "USD", "--json", out,
                               "--fail-on", "material")
    assert code == 1                                         # b's errors are biased: the gate fails
    data = json.loads(out.read_text())
    assert data["task"] == "regression" and data["units"] == "USD" and data["mapping"]["score"] == "y_pred"
    frame = pd.read_csv(files / "regression.csv")
    b = data["parity"]["groups"]["b"]
    rows = frame[frame.group == "b"]
    assert b["bias"] == pytest.approx((rows.y_pred - rows.price).mean(), rel=1e-9)
    assert data["calibration"]["method"] == "mincer_zarnowitz"
    assert "Task: regression — target 'price', prediction 'y_pred' (units: USD)" in terminal
    assert data["findings"]["top"][0]["group"] == "b"


def test_regression_is_guessed(files, tmp_path, capsys):
    out = tmp_path / "audit.json"
    code, terminal, _ = _audit(capsys, files / "regression.csv", "--json", out)
    data = json.loads(out.read_text())
    assert code == 0 and data["task"] == "regression" and data["mapping"]["score"] == "y_pred"


@pytest.mark.parametrize("given", ["p_*", "p_cat,p_dog,p_bird", None])
def test_multiclass_with_class_probabilities(files, tmp_path, capsys, given):
    out = tmp_path / "audit.json"
    extra = ["--class-scores", given] if given else []
    code, terminal, _ = _audit(capsys, files / "multiclass.csv", *extra, "--group", "group", "--json", out)
    assert code == 0
    data = json.loads(out.read_text())
    assert data["task"] == "multiclass" and data["mapping"]["class_scores"] == ["p_cat", "p_dog", "p_bird"]
    assert data["mapping"]["classes"] == ["cat", "dog", "bird"]
    assert {"parity", "class_match", "calibration", "per_class"} <= set(data)
    assert data["calibration"]["method"] == "top_label_ece" and data["parity"]["method"] == "one_vs_rest"
    assert "class probabilities 'p_cat', 'p_dog', 'p_bird'" in terminal


def test_multiclass_with_a_predicted_class_and_its_confidence(files, tmp_path, capsys):
    out, junit = tmp_path / "audit.json", tmp_path / "audit.xml"
    code, terminal, _ = _audit(capsys, files / "predicted.csv", "--predicted", "predicted", "--score", "confidence",
                               "--json", out, "--fail-on", "material", "--junit", junit)
    data = json.loads(out.read_text())
    assert data["task"] == "multiclass" and data["mapping"]["predicted"] == "predicted"
    assert data["mapping"]["score"] == "confidence"
    assert "predicted class 'predicted', confidence 'confidence'" in terminal
    assert data["findings"]["material_count"] > 0 and code == 1              # the gate holds for every task
    failed = [case.get("name") for case in ET.parse(junit).getroot() if case.find("failure") is not None]
    assert "b vs a (class cat)" in failed


def test_regression_gate_passes_without_a_material_finding(files, tmp_path, capsys):
    frame = pd.read_csv(files / "regression.csv")
    rng = np.random.default_rng(4)
    frame["group"] = rng.choice(["a", "b"], len(frame))                   # groups unrelated to the errors
    path = tmp_path / "null.csv"
    frame.to_csv(path, index=False)
    code, _, _ = _audit(capsys, path, "--label", "price", "--score", "y_pred", "--group", "group", "--fail-on",
                        "material")
    assert code == 0


@pytest.mark.parametrize("args, message", [
    (["multiclass.csv", "--class-scores", "prob_*"], "--class-scores 'prob_*' matches no column"),
    (["multiclass.csv", "--class-scores", "p_cat,p_cow"], "names column 'p_cow' that the file does not have"),
    (["broken.csv", "--class-scores", "p_*"], "has values outside [0, 1]"),
    (["two_values.csv", "--task", "regression", "--score", "y_pred"], "that is a binary task, not a regression"),
    (["regression.csv", "--task", "regression", "--thresholds", "equal-tpr"], "--thresholds applies to binary"),
    (["multiclass.csv", "--units", "USD"], "--units states a regression target's units"),
    (["regression.csv", "--task", "regression", "--predicted", "y_pred"], "--class-scores and --predicted name"),
    (["multiclass.csv", "--class-scores", "p_*", "--predicted", "label"], "not both"),
])
def test_bad_input_is_one_plain_line(files, capsys, args, message):
    code, _, err = _audit(capsys, files / args[0], *args[1:])
    assert code == 2 and message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_predicted_class_without_confidence_skips_top_label_calibration_plainly(files, tmp_path, capsys):
    frame = pd.read_csv(files / "predicted.csv").drop(columns=["confidence"])
    path, out = tmp_path / "no_confidence.csv", tmp_path / "audit.json"
    frame.to_csv(path, index=False)
    code, terminal, err = _audit(capsys, path, "--predicted", "predicted", "--json", out)
    data = json.loads(out.read_text())
    assert code == 0 and "no confidence column" in terminal and "Not applicable to these data" in terminal
    assert "errors" not in data             # not mapped is not a failure: the gate must not fail on it
    assert [s["section"] for s in data["not_applicable"]] == ["calibration_multiclass"]
    assert "No confidence is mapped" in data["not_applicable"][0]["reason"] and "Traceback" not in err
    assert data["per_class"]["classes"]["cat"]["auroc"] is None and data["parity"]["method"] == "one_vs_rest"
    gated, _, _ = _audit(capsys, path, "--predicted", "predicted", "--fail-on", "material",
                         "--json", tmp_path / "gated.json")
    gate = json.loads((tmp_path / "gated.json").read_text())["gate"]
    assert gate["failed"] == [] and gated == int(gate["material_count"] > 0)


def test_a_binary_audit_states_its_task(tmp_path, capsys, two_group_frame):
    path, out = tmp_path / "binary.csv", tmp_path / "audit.json"
    two_group_frame.to_csv(path, index=False)
    code, terminal, _ = _audit(capsys, path, "--label", "y", "--score", "score", "--group", "group", "--json", out)
    data = json.loads(out.read_text())
    assert code == 0 and data["task"] == "binary" and "groups" in data
    assert data["parity"]["method"] == "ofi_di_match_cps"
    assert terminal.splitlines()[1] == "Task: binary classification — label 'y', score 'score'"


def test_regression_quantile_columns_give_coverage(tmp_path):
    """--quantiles names the prediction-interval columns: calibration's JSON holds each group's coverage."""
    rng = np.random.default_rng(11)
    n = 900
    price = rng.normal(200, 40, n)
    predicted = price + rng.normal(0, 10, n)
    frame = pd.DataFrame({"price": price, "y_pred": predicted, "q0.1": predicted - 13, "q0.9": predicted + 13,
                          "group": rng.choice(["a", "b", "c"], n)})
    path = tmp_path / "intervals.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "audit.json"
    code = main(["audit", str(path), "--task", "regression", "--label", "price", "--score", "y_pred",
                 "--group", "group", "--quantiles", "q0.*", "--json", str(out)])
    assert code == 0
    coverage = json.loads(out.read_text())["calibration"]["coverage"]
    overall = next(r for r in coverage if r["group"] == "overall")
    inside = ((frame.price >= frame["q0.1"]) & (frame.price <= frame["q0.9"])).mean()
    assert overall["nominal"] == pytest.approx(0.8) and overall["coverage"] == pytest.approx(inside, abs=1e-12)
    assert main(["audit", str(path), "--task", "regression", "--label", "price", "--score", "y_pred",
                 "--group", "group", "--quantiles", "z*"]) == 2
