"""AppTest: the "Knee probing & augmentation" page shows the shipped results at once, and a fresh computation
gives exactly the JSON of `fairviz probe` for the same settings."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from fairviz.cli.main import main
from fairviz.core.markup import md
from fairviz.probing.shipped import load_shipped
from tests.conftest import ROOT

PAGE = "app_pages/knee_probing.py"


def _page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.switch_page(PAGE).run()
    assert not at.exception
    return at


def _same(page, cli, path=""):
    if isinstance(page, dict):
        assert set(page) == set(cli), path
        for key in page:
            _same(page[key], cli[key], f"{path}.{key}")
    elif isinstance(page, list):
        assert len(page) == len(cli), path
        for i, (a, b) in enumerate(zip(page, cli)):
            _same(a, b, f"{path}[{i}]")
    elif isinstance(page, float):
        assert cli == pytest.approx(page, rel=1e-9, abs=1e-12), path
    else:
        assert page == cli, path


def test_shipped_results_render_the_shipped_json():
    at = _page()
    assert at.title[0].value == "Knee probing & augmentation"
    probe, augment = load_shipped("probe"), load_shipped("augment")
    assert at.session_state["page_json"]["probe"] == probe
    assert at.session_state["page_json"]["augment"] == augment
    swap = probe["probes"]["demographic_swap"]
    shown = next(m for m in at.metric if m.label == "Demographic swap: knee / non-knee").value
    assert shown == ("undefined" if swap["ratio"] is None else f"{swap['ratio']:.2f}×")
    table = next(df.value for df in at.dataframe if "knee mean |Δd|" in df.value.columns)
    assert table.set_index("probe").loc["Demographic swap", "knee mean |Δd|"] == pytest.approx(swap["knee_mean"])
    records = next(df.value for df in at.dataframe if "ΔF_pattern" in df.value.columns)
    rdf = next(r for r in augment["records"] if r["strategy"] == "rdf" and r["k"] == 100)
    row = records[(records["strategy"] == "RDF-guided (D*)") & (records["k"] == 100)].iloc[0]
    mean, std = rdf["delta"]["f_pattern"]["mean"], rdf["delta"]["f_pattern"]["std"]
    assert row["ΔF_pattern"] == f"{mean:+.4f} ± {std:.4f}"
    assert any("Sign convention" in i.value for i in at.info)
    assert any("App. E" in i.value and md(augment["calibration"]["reading"]) in i.value for i in at.info)


@pytest.mark.slow
def test_compute_now_equals_the_cli_json(tmp_path):
    out = tmp_path / "probe.json"
    assert main(["probe", "--data", "neutral-biased", "--generate", "100", "--epochs", "2", "--n", "15",
                 "--n-strategy", "10", "--json", str(out)]) == 0
    cli = json.loads(out.read_text())
    at = _page()
    at.radio(key="probing_mode").set_value("Compute now").run()
    at.number_input(key="probing_generate").set_value(100).run()
    at.number_input(key="probing_epochs_tiny_neutral-biased").set_value(2).run()
    at.number_input(key="probing_n").set_value(15).run()
    at.number_input(key="probing_n_strategy").set_value(10).run()
    at.button(key="_job_run_probing").click().run()
    assert not at.exception
    page = at.session_state["page_json"]["probe"]
    _same(page, cli)
