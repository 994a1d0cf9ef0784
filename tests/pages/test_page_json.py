"""One result, many renderers: the JSON behind every audit page equals `fairviz audit --json` for the same data and
settings (the page renders its section with the same function as the CLI, from the result it shows)."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from fairviz.cli.main import main
from tests.conftest import ROOT

pytestmark = pytest.mark.slow
PAGES = {"residuals": "app_pages/residuals.py", "calibration": "app_pages/calibration.py",
         "parity": "app_pages/parity.py", "significance": "app_pages/significance.py"}


@pytest.fixture(scope="module")
def cli_json(tmp_path_factory) -> dict:
    """The synthetic sample audited by the CLI with the pages' default settings."""
    out = tmp_path_factory.mktemp("cli") / "audit.json"
    code = main(["audit", str(ROOT / "assets" / "synthetic.csv"), "--label", "y", "--score", "score", "--group", "group",
                 "--threshold", "0.5", "--resamples", "1000", "--knee-resamples", "200", "--json", str(out)])
    assert code == 0
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def app() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.selectbox(key="sample_choice").set_value("synthetic").run()
    assert not at.exception
    return at


def _same(page: dict, cli: dict, path: str = "") -> None:
    """Every key the page writes is in the CLI's JSON with the same value (the CLI merges all sections, so it may
    hold more; pair and group records are matched by their names)."""
    if isinstance(page, dict):
        for key, value in page.items():
            assert key in cli, f"{path}.{key} missing from the CLI's JSON"
            _same(value, cli[key], f"{path}.{key}")
    elif isinstance(page, list) and page and isinstance(page[0], dict) and "group_i" in page[0]:
        index = {(p["group_i"], p["group_j"]): p for p in cli}
        for entry in page:
            _same(entry, index[(entry["group_i"], entry["group_j"])], f"{path}[{entry['group_i']} vs {entry['group_j']}]")
    elif isinstance(page, list) and isinstance(cli, list) and len(page) == len(cli):
        for k, (mine, theirs) in enumerate(zip(page, cli)):      # the CLI sums the engine's cells: 1e-12, not bits
            _same(mine, theirs, f"{path}[{k}]")
    elif isinstance(page, float):
        assert cli == pytest.approx(page, rel=1e-12, abs=1e-12), path
    else:
        assert page == cli, path


@pytest.mark.parametrize("section", list(PAGES))
def test_page_json_equals_cli_json(app, cli_json, section):
    app.switch_page(PAGES[section]).run()
    assert not app.exception
    page = app.session_state["page_json"][section]
    assert page, f"the {section} page rendered no JSON"
    _same(page, cli_json)


@pytest.mark.parametrize("section", ["residuals", "calibration"])
def test_intersections_reach_every_audit_page(section):
    """The shared sidebar offers 'race × sex'; the residual and calibration pages audit its 12 groups too."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.switch_page(PAGES[section]).run()
    at.selectbox(key="attribute").set_value("race × sex").run()
    assert not at.exception
    assert not any("Something went wrong" in e.value for e in at.error)
    page = at.session_state["page_json"][section]
    groups = page["groups"] if section == "residuals" else page["calibration"]["groups"]
    assert "African-American × Male" in groups
    assert len([g for g in groups if "×" in g]) == 12
