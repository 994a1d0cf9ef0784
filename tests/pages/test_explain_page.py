"""The explanation-disparity page in Streamlit's AppTest: shipped results (instant) and a small live run."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fairviz.explain import METRICS
from fairviz.explain import results as xresults
from fairviz.explain import compare
from fairviz.core.wording import fmt_p

from tests.conftest import ROOT

PAGE = "app_pages/explanations.py"


def _open(timeout: int = 120) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def _figures(at) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def _boxplot_panels(fig: dict) -> list[str]:
    return [a["text"] for a in fig["layout"].get("annotations", []) if a.get("xref") == "paper"]


def _dataframe(at, column: str):
    return next(df.value for df in at.dataframe if column in df.value.columns)


@pytest.fixture(scope="module")
def shipped_keys():
    keys = list(xresults.shipped())
    if not keys:
        pytest.fail("assets/explain/ holds no shipped results (run scripts/make_explain_demo.py)")
    return keys


def test_shipped_results_render_every_panel_and_the_real_test_values(shipped_keys):
    at = _open()
    assert at.radio(key="explain_mode").value.startswith("Shipped")
    key = at.selectbox(key="explain_shipped").value
    figures = _figures(at)
    result = xresults.load_shipped(key)
    panels = _boxplot_panels(figures[0])
    assert len(panels) == len(result.metrics) == 7
    assert all(any(METRICS[m].label in p for p in panels) for m in result.metrics)
    heat = next(f for f in figures if f["data"][0]["type"] == "heatmap" and len(f["data"]) == 1
                and len(f["data"][0]["y"]) == len(result.methods))
    assert heat["data"][0]["x"][0] == "AOPC-C" and len(heat["data"][0]["x"]) == 7
    report = compare(result)
    table = _dataframe(at, "p (Mann–Whitney)")
    assert len(table) == len(result.methods) * 7
    row = table[(table["method"] == "IGxI") & (table["metric"] == "Gini index")].iloc[0]
    assert row["p (Mann–Whitney)"] == fmt_p(report.cell("igxi", "gini").p_value)
    assert row["Cohen's d (male − female)"] == pytest.approx(report.cell("igxi", "gini").cohens_d)
    assert row["runs significant"] == f"{report.cell('igxi', 'gini').runs_significant}/5"
    texts = " ".join(m.value for m in at.markdown)
    assert "Reading." in texts and "Random baseline" in texts


def test_metric_choice_changes_the_panels_and_bh_changes_the_table(shipped_keys):
    at = _open()
    at.multiselect(key=f"explain_show_metrics_shipped:{at.selectbox(key='explain_shipped').value}") \
        .set_value(["soft_comp", "gini"]).run()
    assert not at.exception
    assert len(_boxplot_panels(_figures(at)[0])) == 2
    at.toggle(key="explain_bh").set_value(True).run()
    table = _dataframe(at, "p (Mann–Whitney)")
    assert "p (BH)" in table.columns and set(table["metric"]) == {"Soft comprehensiveness", "Gini index"}


@pytest.mark.parametrize("key, kind, words", [("geco-all", "warning", "label is gender"),
                                               ("neutral", "success", "barely reacts to gender")])
def test_model_disparity_warning_matches_the_data(shipped_keys, key, kind, words):
    if key not in shipped_keys:
        pytest.skip(f"{key} not shipped")
    at = _open()
    at.selectbox(key="explain_shipped").set_value(key).run()
    assert not at.exception
    assert any(words in el.value for el in getattr(at, kind))


@pytest.mark.parametrize("key", ["neutral", "compas"])
def test_twin_pair_shows_both_sentences_tokens(shipped_keys, key):
    if key not in shipped_keys:
        pytest.skip(f"{key} not shipped")
    at = _open()
    at.selectbox(key="explain_shipped").set_value(key).run()
    result = xresults.load_shipped(key)
    if key == "compas":                                  # unpaired: one sentence of each group is chosen
        assert at.selectbox(key=f"explain_twin_a_shipped:{key}").value in set(result.instances.instance_id)
        assert len([f for f in _figures(at) if len(f["data"]) == 2 and f["data"][0]["type"] == "heatmap"]) == 1
        return
    twin = next(f for f in _figures(at) if len(f["data"]) == 2 and f["data"][0]["type"] == "heatmap")
    first, second = twin["data"][0]["text"][0], twin["data"][1]["text"][0]
    pair = at.selectbox(key=f"explain_twin_pair_shipped:{key}").value
    inst = result.instances[(result.instances["run"] == 0) & (result.instances["pair_id"] == pair)]
    assert first == json.loads(inst[inst.group == "male"]["tokens"].iloc[0])
    assert second == json.loads(inst[inst.group == "female"]["tokens"].iloc[0])
    assert np.isclose(np.abs(twin["data"][0]["z"][0]).sum(), 1.0, atol=1e-3)


@pytest.mark.slow
def test_compute_now_with_the_tiny_model():
    at = _open(timeout=300)
    at.radio(key="explain_mode").set_value("Compute now").run()
    at.selectbox(key="explain_source").set_value("neutral").run()
    at.slider(key="explain_pairs").set_value(4).run()
    at.multiselect(key="explain_methods_run").set_value(["grad", "igxi", "random"]).run()
    at.multiselect(key="explain_metrics_run").set_value(["soft_comp", "gini", "sensitivity"]).run()
    assert not at.exception
    at.button(key="_job_run_explain").click().run()
    assert not at.exception, at.exception
    table = _dataframe(at, "p (Mann–Whitney)")
    assert len(table) == 3 * 3 and table["n male"].eq(4).all()
    assert any("barely reacts to gender" in s.value for s in at.success)
    assert len(_boxplot_panels(_figures(at)[0])) == 3


def test_upload_source_waits_for_a_file():
    at = _open()
    at.radio(key="explain_mode").set_value("Compute now").run()
    at.selectbox(key="explain_source").set_value("upload").run()
    assert not at.exception
    assert any("Upload a file" in i.value for i in at.info)


def test_page_modules_do_not_import_model_libraries():
    code = ("import sys; import fairviz.explain.disparity, fairviz.explain.analysis, fairviz.explain.results, "
            "fairviz.explain.data, fairviz.explain.pipeline, fairviz.explain.readings, fairviz.cli.explain, fairviz.explain.figures, fairviz.report.audit; "
            "heavy = [m for m in ('torch', 'transformers', 'captum', 'shap', 'lime') if m in sys.modules]; "
            "print(heavy); sys.exit(1 if heavy else 0)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
