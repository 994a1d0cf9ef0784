"""The audit of regression and multiclass predictions (issue 25): the task's sections hold exactly what the concepts
give when called directly, the JSON states the task and is strict JSON, the Summary reads the task's parity records
under the binary rules, and a binary audit's JSON only gains ``task``."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from fairviz.calibration import analyse_multiclass as calibration_multiclass
from fairviz.calibration import analyse_regression as calibration_regression
from fairviz.calibration.mincer_zarnowitz_display import mean_calibration_to_dict
from fairviz.calibration.mincer_zarnowitz_display import params_of as mean_calibration_params
from fairviz.calibration.top_label_display import params_of as top_label_calibration_params
from fairviz.calibration.top_label_display import top_label_calibration_to_dict
from fairviz.core.serialize import clean
from fairviz.data import ColumnMapping, build_predictions
from fairviz.findings import FindingsParams
from fairviz.parity import analyse_multiclass, analyse_regression
from fairviz.parity import display as parity_display
from fairviz.report import plan
from fairviz.report.audit import AuditParams
from fairviz.report.plan import sections_for, summary_sections
from fairviz.residuals import RDFParams
from fairviz.sample_size.class_match import CLASS_MATCH, analyse_class_match
from fairviz.sample_size.display import CLASS_MATCH_METRICS

CLASSES = np.array(["cat", "dog", "bird"])
OPTIONS = AuditParams(rdf=RDFParams(resamples=100, knee_resamples=0))


def regression_frame(n=1500, seed=0, bias_b=4.0, small=False):
    rng = np.random.default_rng(seed)
    group = rng.choice(["a", "b", "c"], n, p=[0.5, 0.35, 0.15]).astype(object)
    if small:
        group[:40] = "tiny"
    prediction = rng.normal(50, 10, n)
    target = prediction + rng.normal(0, 5, n) + bias_b * (group == "b")
    return pd.DataFrame({"price": target, "y_pred": prediction, "group": group})


def multiclass_frame(n=2000, seed=1, planted=True):
    rng = np.random.default_rng(seed)
    group = rng.choice(["x", "y"], n, p=[0.6, 0.4])
    p = rng.dirichlet([2, 2, 2], n)
    labels = (rng.random(n)[:, None] > np.cumsum(p, 1)).sum(1)
    if planted:                                   # group y's cats are scored as dogs half the time
        swap = (group == "y") & (labels == 0) & (rng.random(n) < 0.5)
        p[swap] = p[swap][:, [1, 0, 2]]
        p[swap, 1] = np.maximum(p[swap, 1], p[swap].max(1) + 0.01)
        p[swap] /= p[swap].sum(1, keepdims=True)
    return pd.DataFrame({"label": CLASSES[labels], "p_cat": p[:, 0], "p_dog": p[:, 1], "p_bird": p[:, 2],
                         "group": group})


@pytest.fixture(scope="module")
def regression():
    pred = build_predictions(regression_frame(), ColumnMapping("price", "y_pred", ("group",), task="regression"))
    return pred, plan.audit(pred, replace(OPTIONS, units="USD"))


@pytest.fixture(scope="module")
def multiclass():
    mapping = ColumnMapping("label", "", ("group",), task="multiclass", class_scores=("p_cat", "p_dog", "p_bird"))
    pred = build_predictions(multiclass_frame(), mapping)
    return pred, plan.audit(pred, OPTIONS)


def _same(a, b) -> None:
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_binary_sections_stay_as_they_are():
    assert [s.name for s in sections_for("binary")] == ["residuals", "threshold_invariance", "calibration", "parity",
                                                       "significance", "explanations"]


def test_regression_sections_hold_the_concepts_numbers(regression):
    pred, audit = regression
    data = audit.data
    assert data["task"] == "regression" and data["units"] == "USD"
    options = replace(OPTIONS, attribute="group", units="USD")
    direct = analyse_regression(pred, "group", parity_display.regression_parity_params(options))
    _same(data["parity"], clean(direct.to_dict()))
    assert data["parity"]["method"] == "error_prediction_parity" and data["parity"]["settings"]["units"] == "USD"
    calibration = calibration_regression(pred, "group", mean_calibration_params(options))
    _same(data["calibration"], clean(mean_calibration_to_dict(calibration)))
    b = data["parity"]["groups"]["b"]
    rows = regression_frame()
    rows = rows[rows.group == "b"]
    assert b["mae"] == pytest.approx(np.abs(rows.y_pred - rows.price).mean(), rel=1e-12)
    json.dumps(data, allow_nan=False)                                  # strict JSON: no NaN anywhere
    # the residual section is task-aware elsewhere: either it ran, or its failure is recorded and the rest carried on
    assert "residuals" in audit.results or any(e["section"] == "residuals" for e in data["errors"])


def test_regression_report_states_the_task(regression):
    _, audit = regression
    terminal = audit.to_terminal()
    assert terminal.splitlines()[1] == "Task: regression — target 'price', prediction 'y_pred' (units: USD)"
    assert "Group parity (regression)" in terminal and "Calibration in the mean" in terminal
    html = audit.to_html()
    assert "Task: regression — target &#x27;price&#x27;, prediction &#x27;y_pred&#x27; (units: USD)" in html
    assert "<h2>Group parity (regression)</h2>" in html


def test_a_failing_residual_section_on_a_regression_is_recorded(monkeypatch):
    residuals = plan.check("residuals")
    monkeypatch.setitem(residuals.methods, "regression", replace(residuals.section("regression"), run=_boom))
    pred = build_predictions(regression_frame(600), ColumnMapping("price", "y_pred", ("group",), task="regression"))
    audit = plan.audit(pred, OPTIONS)
    assert audit.data["errors"] == [{"section": "residuals", "error": "ValueError: not for regressions"}]
    assert audit.data["parity"]["method"] == "error_prediction_parity" and audit.findings is not None
    assert "This section could not be computed: ValueError: not for regressions" in audit.to_terminal()


def _boom(pred, params):
    raise ValueError("not for regressions")


def test_multiclass_sections_hold_the_concepts_numbers(multiclass):
    pred, audit = multiclass
    data = audit.data
    assert data["task"] == "multiclass"
    options = replace(OPTIONS, attribute="group")
    _same(data["parity"],
          clean(analyse_multiclass(pred, "group", parity_display.multiclass_parity_params(options)).to_dict()))
    match = analyse_class_match(pred, "group", replace(CLASS_MATCH, metrics=CLASS_MATCH_METRICS))
    _same(data["class_match"], clean(match.to_dict()))
    calibration = calibration_multiclass(pred, "group", top_label_calibration_params(options))
    _same(data["calibration"], clean(top_label_calibration_to_dict(calibration)))
    json.dumps(data, allow_nan=False)
    assert "errors" not in data


def test_per_class_record_is_each_class_one_vs_rest(multiclass):
    pred, audit = multiclass
    frame = multiclass_frame()
    assert audit.data["per_class"]["method"] == "one_vs_rest" and audit.data["per_class"]["attribute"] == "group"
    per_class = audit.data["per_class"]["classes"]
    assert list(per_class) == ["cat", "dog", "bird"]
    for name in CLASSES:
        record, truth = per_class[name], (frame.label == name)
        assert record["n_true"] == int(truth.sum()) and record["prevalence"] == pytest.approx(truth.mean())
        predicted = frame[["p_cat", "p_dog", "p_bird"]].to_numpy().argmax(1) == list(CLASSES).index(name)
        assert record["n_predicted"] == int(predicted.sum())
        assert record["auroc"] == pytest.approx(roc_auc_score(truth, frame[f"p_{name}"]), rel=1e-12)
        for g in ("x", "y"):
            rows = frame.group == g
            assert record["auroc_groups"][g] == pytest.approx(roc_auc_score(truth[rows], frame[f"p_{name}"][rows]),
                                                              rel=1e-12)


def test_multiclass_report_states_the_task(multiclass):
    _, audit = multiclass
    assert audit.to_terminal().splitlines()[1] == ("Task: multiclass classification — label 'label' (3 classes: cat, "
                                                   "dog, bird), class probabilities 'p_cat', 'p_dog', 'p_bird'")
    html = audit.to_html()
    for title in ("Group parity per class", "MATCH per class", "Calibration: top-label and class-wise",
                  "Each class, one vs rest"):
        assert f"<h2>{title}</h2>" in html


# ----------------------------------------------------------------------------------------------- the Summary

def test_regression_findings_read_the_parity_record(regression):
    _, audit = regression
    record = audit.data["parity"]
    mae = {name: g["mae"] for name, g in record["groups"].items()}
    scale = mae[record["reference"]]
    pair = next(p for p in record["pairs"] if p["group"] == "b" and p["against_reference"])
    found = {(c["kind"], c["group"]): c for c in audit.data["findings"]["candidates"]}
    for kind, key in (("bias_gap", "bias_gap"), ("mae_gap", "mae_gap"), ("prediction_w1", "w1")):
        c = found[(kind, "b")]
        assert c["effect"] == pytest.approx(pair[key] / scale) and c["p_value"] == pair[f"{key}_p"]
        assert c["scale"] == scale and c["class"] is None
    top = audit.data["findings"]["top"]
    assert top and top[0]["group"] == "b" and {t["kind"] for t in top} >= {"bias_gap", "mae_gap"}
    bias = next(t for t in top if t["kind"] == "bias_gap")       # the residual distance may rank first now
    assert "Predictions of price for b" in bias["sentence"] and "USD" in bias["sentence"]
    assert set(audit.data["findings"]["policy"]["materiality"]) == {"bias_gap", "mae_gap", "prediction_w1",
                                                                    "residual_distance"}


def test_regression_without_disparity_has_no_headline():
    pred = build_predictions(regression_frame(seed=3, bias_b=0.0),
                             ColumnMapping("price", "y_pred", ("group",), task="regression"))
    audit = plan.audit(pred, replace(OPTIONS, sections=("parity_regression",)))
    assert audit.data["findings"]["top"] == [] and audit.data["sections_skipped"] == ["residuals",
                                                                                      "calibration_regression"]
    assert "No material, significant disparity" in audit.to_terminal()


def test_a_small_regression_group_is_too_small_to_tell():
    pred = build_predictions(regression_frame(small=True),
                             ColumnMapping("price", "y_pred", ("group",), task="regression"))
    audit = plan.audit(pred, replace(OPTIONS, sections=("parity_regression",)))
    small = audit.data["findings"]["too_small"]
    assert [s["group"] for s in small] == ["tiny"] and small[0]["n"] == 40
    assert "too small to tell — MAE" in small[0]["sentence"]
    assert not any(c["group"] == "tiny" and c["headline"] for c in audit.data["findings"]["candidates"])


def test_multiclass_findings_name_the_class_and_groups(multiclass):
    _, audit = multiclass
    findings = audit.data["findings"]
    cells = {(c["class"], c["group"]): c for c in audit.data["parity"]["per_class"]}
    tpr = next(c for c in findings["candidates"] if c["kind"] == "class_tpr" and c["class"] == "cat")
    y, x = cells[("cat", "y")], cells[("cat", "x")]
    assert tpr["group"] == "y" and tpr["effect"] == pytest.approx(y["tpr"] - x["tpr"])
    ofi = next(c for c in findings["candidates"] if c["kind"] == "class_ofi" and c["class"] == "cat")
    assert ofi["effect"] == y["ofi"] and ofi["p_value"] == y["ofi_p_value"]
    gap = next(c for c in findings["candidates"] if c["kind"] == "gap_tpr")
    assert gap["effect"] == audit.data["parity"]["gaps"]["tpr"]["gap"] and gap["group"] == "all groups"
    top = findings["top"]
    assert top and any(t["kind"] == "class_tpr" and t["class"] == "cat" and t["group"] == "y" for t in top)
    sentence = next(t["sentence"] for t in top if t["kind"] == "class_tpr")
    assert sentence.startswith("y rows of class cat are predicted cat at")


def test_null_multiclass_data_has_no_headline():
    mapping = ColumnMapping("label", "", ("group",), task="multiclass", class_scores=("p_cat", "p_dog", "p_bird"))
    pred = build_predictions(multiclass_frame(seed=5, planted=False), mapping)
    audit = plan.audit(pred, replace(OPTIONS, sections=("parity_multiclass",)))
    assert audit.data["findings"]["top"] == []


def test_the_quick_audit_runs_the_task_parity():
    pred = build_predictions(regression_frame(600), ColumnMapping("price", "y_pred", ("group",), task="regression"))
    assert summary_sections(pred, "group") == ("parity_regression",)


def test_binary_json_only_gains_the_task(two_group_frame):
    pred = build_predictions(two_group_frame, ColumnMapping("y", "score", ("group",)))
    audit = plan.audit(pred, AuditParams(threshold=0.5, rdf=RDFParams(resamples=50, knee_resamples=0),
                                        findings=FindingsParams()))
    data = audit.data
    assert data["task"] == "binary"
    assert [k for k in data if k != "task"] == [          # main's keys before the task, in order
        "fairviz_version", "source", "n_rows", "threshold", "attribute", "mapping", "notes", "groups", "pairs",
        "knees", "pooled_knees", "knee_concentration", "rdf_settings", "warnings", "threshold_invariance",
        "calibration", "parity", "findings"]
    findings = data["findings"]
    assert set(findings["policy"]["materiality"]) == {"fpr", "fnr", "selection_rate", "ofi", "residual_distance",
                                                      "calibration"}
    assert all(set(c) == BINARY_CANDIDATE_KEYS for c in findings["candidates"])
    assert audit.to_terminal().splitlines()[1].startswith("Task: binary classification — label 'y'")


BINARY_CANDIDATE_KEYS = {"kind", "attribute", "group", "reference", "effect", "ci", "p_value", "p_adjusted", "n_group",
                         "n_reference", "group_value", "reference_value", "significant", "material", "large_enough",
                         "headline", "strength", "test", "view", "sentence"}


def test_task_materiality_is_a_policy_setting(regression):
    from fairviz.findings import summarise
    from fairviz.report.gate import policy_from_dict
    _, audit = regression
    strict = policy_from_dict({"materiality": {"mae_gap": 10.0, "bias_gap": 10.0}})
    summary = summarise(audit.checked, strict)
    assert summary.params.threshold("mae_gap") == 10.0
    assert not any(f.headline and f.candidate.kind in ("mae_gap", "bias_gap") for f in summary.findings)
    assert any(f.candidate.kind == "mae_gap" and f.significant for f in summary.findings)   # still significant
