"""One metric, one meaning (issue 34 item 9): FPR, FNR and the selection rate are taken on the label (Y = 1 as the
data defines it, predicted positive = score ≥ τ) on Home, Slices, Sample-size significance, Group parity, the HTML
report and the JSON, whichever prediction is the benefit; and a finding's link opens the view of its own quantity.

On COMPAS (benefit = the negative prediction) the Sample-size page read "FPR 0.280" for African-American (the
label's FNR) where Home and Slices read 0.448, and Home's FPR-gap link (+0.214) opened Group parity on PP, the TPR
gap on the benefit (−0.214). The truth here is scikit-learn's confusion matrix of the rows."""
from __future__ import annotations

import re
from urllib.parse import parse_qsl

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import confusion_matrix
from streamlit.testing.v1 import AppTest

from fairviz.core.display import tables
from fairviz.core.wording import fmt
from fairviz.data.samples import load_sample, samples
from fairviz.findings import KIND_TITLES
from fairviz.parity import metric_label
from fairviz.parity import display as parity
from fairviz.sample_size import display as sample_size
from fairviz.report.api import findings_settings
from fairviz.report.plan import audit as run_audit
from fairviz.report.options import AuditParams
from fairviz.report.render import to_html
from tests.conftest import ROOT
from tests.html_tables import html_tables
from tests.pages.tabs import open_tab

# frame → (attribute, group, reference, τ, benefit): COMPAS flips the benefit, Adult does not
FRAMES = {"compas": ("race", "African-American", "Caucasian", 0.4, "negative"),
          "adult": ("sex", "Female", "Male", 0.5, "positive")}
FINDING_PAGES = {"parity": "app_pages/parity.py"}


def _truth(key: str) -> dict[str, dict[str, float]]:
    """Each group's FPR, FNR and selection rate on the label, from the rows by scikit-learn."""
    pred = load_sample(key)
    attribute, _, _, tau, _ = FRAMES[key]
    view = pred.groups(attribute)
    out = {}
    for code, name in enumerate(view.names):
        rows = view.codes == code
        tn, fp, fn, tp = confusion_matrix(pred.y[rows], (pred.score[rows] >= tau).astype(int), labels=[0, 1]).ravel()
        out[name] = {"fpr": fp / (fp + tn), "fnr": fn / (fn + tp), "ppr": (tp + fp) / (tp + fp + tn + fn)}
    return out


@pytest.fixture(scope="module", params=list(FRAMES))
def frame(request):
    key = request.param
    attribute, group, reference, tau, benefit = FRAMES[key]
    pred = load_sample(key)
    findings, words = findings_settings(samples()[key], attribute)
    options = AuditParams(attribute=attribute, threshold=tau, benefit=benefit, findings=findings, words=words,
                          sections=("parity", "significance"))
    audit = run_audit(pred, options)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params["sample"] = key
    at.query_params["attribute"] = attribute
    at.run()
    assert not at.exception, at.exception
    return key, pred, options, audit, at, _truth(key)


def _go(at: AppTest, page: str) -> AppTest:
    for name in ("group", "vs", "metric"):
        at.query_params.pop(name, None)
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"[-+]?\d+\.\d+", text.replace("\\", ""))]


def test_fpr_fnr_and_selection_rate_are_one_number_everywhere(frame):
    key, pred, options, audit, at, truth = frame
    attribute, group, reference, _, _ = FRAMES[key]
    data = audit.data
    labels = {"fpr": "FPR", "fnr": "FNR", "ppr": "Positive prediction rate"}

    # the JSON: MATCH's scores, the parity pairs' label gaps and the findings' rates
    for metric in labels:
        assert data["parity"]["match"][group][metric]["score"] == pytest.approx(truth[group][metric], abs=1e-12), \
            metric
    pair = next(p for p in data["parity"]["pairs"] if {p["group_i"], p["group_j"]} == {group, reference})
    sign = 1 if pair["group_i"] == group else -1
    for metric in labels:
        gap = truth[group][metric] - truth[reference][metric]
        assert sign * pair[f"{metric}_gap"] == pytest.approx(gap, abs=1e-12), metric
    kinds = {"fpr": "fpr", "fnr": "fnr", "selection_rate": "ppr"}
    for record in data["findings"]["candidates"]:
        if record["kind"] in kinds and record["attribute"] == attribute:
            metric = kinds[record["kind"]]
            assert record["group_value"] == pytest.approx(truth[record["group"]][metric], abs=1e-12)
            assert record["reference_value"] == pytest.approx(truth[record["reference"]][metric], abs=1e-12)

    # the HTML report: the MATCH table's scores and the parity groups table's rates
    sig_result = sample_size.significance_run(pred, options)
    html_match = html_tables(to_html(sample_size.display(pred, sig_result, options)))
    match_rows = next(t for t in html_match if t[0][:3] == ["group", "n", "metric"])
    for metric, label in labels.items():
        row = next(r for r in match_rows if r[0] == group and r[2] == label)
        assert float(row[3]) == pytest.approx(truth[group][metric], abs=5e-5), label
    parity_audit = parity.parity_run(parity.SECTION.given(pred), options)
    groups_table = tables(parity.display(pred, parity_audit, options))["groups"]
    html_groups = next(t for t in html_tables(to_html([groups_table])) if "FPR" in t[0])
    row = next(r for r in html_groups if r[0] == group)
    for metric, label in (("fpr", "FPR"), ("fnr", "FNR")):
        assert float(row[html_groups[0].index(label)]) == pytest.approx(truth[group][metric], abs=5e-4), label

    # Home: the findings' sentences and the slices' line say the same rates (as rounded there)
    words = samples()[key].words
    phrases = {"fpr": f"**{group}** {words['unit']} {words['label_negative']}",
               "fnr": f"**{group}** {words['unit']} {words['label_positive']}"}
    lines = [line for m in at.markdown for line in m.value.replace("\\", "").split("\n")]
    said = 0
    for kind, phrase in phrases.items():
        for line in (x for x in lines if phrase in x):
            said += 1
            assert _numbers(line)[:2] == [round(truth[group][kind], 2), round(truth[reference][kind], 2)], line
    assert said or key != "compas"                         # COMPAS' Summary states the FPR gap
    slice_line = next((s for m in at.markdown for s in m.value.split("\n")
                       if f"{attribute}={group}" in s and "false positive rate" in s), None)
    if key == "compas":
        assert slice_line is not None
        assert _numbers(slice_line)[0] == round(truth[group]["fpr"], 3), slice_line

    # Slices: the false positive rate of the group's slice
    _go(at, "app_pages/slices.py")
    assert at.selectbox(key="slices_metric").value == "fpr"
    table = next(d.value for d in at.dataframe if "slice" in d.value.columns)
    row = table[table["slice"].astype(str) == f"{attribute}={group}"]
    if key == "compas":
        assert len(row) == 1
    if len(row):
        assert float(row["metric"].iloc[0]) == pytest.approx(truth[group]["fpr"], abs=5e-4)

    # Sample-size significance: the MATCH table and the focused score
    _go(at, "app_pages/significance.py")
    match = next(d.value for d in at.dataframe if list(d.value.columns)[:3] == ["group", "n", "metric"])
    for metric, label in labels.items():
        score = match[(match["group"] == group) & (match["metric"] == label)]["score"]
        assert float(score.iloc[0]) == pytest.approx(truth[group][metric], abs=1e-9), label
    at.selectbox(key="match_group").set_value(group).run()
    at.selectbox(key="match_metric").set_value("fpr").run()
    observed = next(m.value for m in at.metric if m.label == "Observed")
    assert observed == fmt(truth[group]["fpr"])

    # Group parity: the groups table's rates and the FPR gap on the label
    _go(at, "app_pages/parity.py")
    at.selectbox(key="parity_metric").set_value("fpr_gap").run()
    shown = next(m.value for m in at.metric if m.label == metric_label("fpr_gap"))
    i, j = at.selectbox(key="parity_i").value, at.selectbox(key="parity_j").value
    assert (i, j) == (group, reference)
    assert shown == fmt(truth[group]["fpr"] - truth[reference]["fpr"])
    open_tab(at, "parity_tab", "Groups and confusion matrices")
    groups = next(d.value for d in at.dataframe if "FPR" in d.value.columns)
    mine = groups[groups["group"] == group]
    assert float(mine["FPR"].iloc[0]) == pytest.approx(truth[group]["fpr"], abs=1e-9)
    assert float(mine["FNR"].iloc[0]) == pytest.approx(truth[group]["fnr"], abs=1e-9)


@pytest.mark.parametrize("key", list(FRAMES))
def test_each_findings_link_opens_the_findings_own_quantity(key):
    """Each of Home's links, opened as a browser would (its address), lands on the finding's quantity and value:
    the pair, the metric and the number the finding states (on main: COMPAS' selection-rate gap +0.240 opened DPPL
    −0.240, its FPR gap +0.214 opened PP −0.214, its FNR gaps the same number named 'EO FPR gap')."""
    home = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    home.query_params["sample"] = key
    home.run()
    assert not home.exception, home.exception
    links = [e.proto for e in home.get("page_link") if e.proto.label.startswith("Open on")]
    assert links
    audits = {}
    for link in links:
        params = dict(parse_qsl(link.query_string))
        attribute = params["attribute"]
        if attribute not in audits:
            findings, words = findings_settings(samples()[key], attribute)
            audits[attribute] = run_audit(load_sample(key), AuditParams(
                attribute=attribute, threshold=float(params["tau"]), benefit=params["benefit"], findings=findings,
                words=words, sections=("parity",))).data["findings"]["candidates"]
        finding = next(f for f in audits[attribute] if f["group"] == params["group"] and
                       f["reference"] == params["reference"] and link.label.endswith(KIND_TITLES[f["kind"]]))
        assert params["metric"] == finding["view"]["metric"]
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        for name, value in params.items():
            at.query_params[name] = value
        at.run()
        at.switch_page(FINDING_PAGES[link.page]).run()
        assert not at.exception, at.exception
        assert at.selectbox(key="attribute").value == attribute
        assert at.selectbox(key="parity_metric").value == params["metric"]
        assert (at.selectbox(key="parity_i").value, at.selectbox(key="parity_j").value) == (
            finding["group"], finding["reference"])
        label = "OFI (i − j)" if params["metric"] == "ofi" else metric_label(params["metric"], params["benefit"])
        shown = next(m.value for m in at.metric if m.label == label)
        assert shown == fmt(finding["effect"]), (link.label, shown, finding["effect"])


def test_compare_models_names_fpr_on_the_label_too():
    """Compare models' rates and FPR gap on COMPAS (benefit flipped) are the label's, as on every page (on main its
    table's "FPR at τ" for African-American was the benefit's 0.280 and its FPR gap the label's FNR gap)."""
    from fairviz.compare import CompareParams, compare_models
    pred = load_sample("compas")
    truth = _truth("compas")
    joint = pred.joint()
    shifted = pred.with_added_model("shifted", np.clip(joint.score + 0.05, 0, 1), "the score plus 0.05")
    result = compare_models(shifted, "race", 0.4, "negative", "Caucasian",
                            params=CompareParams(resamples=20, permutations=20))
    first = result.table[(result.table["model"] == result.model_a) & (result.table["group"] == "African-American")]
    for metric, column in (("fpr", "fpr"), ("fnr", "fnr"), ("ppr", "selection_rate")):
        assert float(first[column].iloc[0]) == pytest.approx(truth["African-American"][metric], abs=1e-12), metric
    gap = result.difference("fpr_gap", "African-American", pair=True)
    assert gap.value_a == pytest.approx(truth["African-American"]["fpr"] - truth["Caucasian"]["fpr"], abs=1e-12)


def test_the_parity_label_gaps_are_the_residual_sections_rate_gaps():
    """docs/cli.md: ``fpr_gap``, ``fnr_gap``, ``ppr_gap`` are the residual section's ``eo_fpr_diff``,
    −``eo_tpr_diff`` and ``dp_diff`` (both on the label), with COMPAS' benefit flipped."""
    from fairviz.residuals.results import RDFParams
    pred = load_sample("compas")
    data = run_audit(pred, AuditParams(attribute="race", threshold=0.4, benefit="negative",
                                       rdf=RDFParams(resamples=0, knee_resamples=0, threshold=0.4),
                                       sections=("residuals", "parity"))).data
    residual = {(p["group_i"], p["group_j"]): p for p in data["pairs"]}
    for pair in data["parity"]["pairs"]:
        pair = {**residual[(pair["group_i"], pair["group_j"])], **pair}      # the same (i, j) in both sections
        for label_gap, rate_gap, sign in (("fpr_gap", "eo_fpr_diff", 1), ("fnr_gap", "eo_tpr_diff", -1),
                                          ("ppr_gap", "dp_diff", 1)):
            if pair[label_gap] is not None and pair.get(rate_gap) is not None:
                assert pair[label_gap] == pytest.approx(sign * pair[rate_gap], abs=1e-12), (pair["group_i"], label_gap)
    aa = next(p for p in data["parity"]["pairs"] if (p["group_i"], p["group_j"]) == ("African-American", "Caucasian"))
    assert aa["fpr_gap"] == pytest.approx(0.21392495582112797, abs=1e-12)
    assert residual[("African-American", "Caucasian")]["eo_fpr_diff"] is not None
