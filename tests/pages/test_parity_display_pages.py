"""The Group parity and Sample-size significance pages render their sections' display lists: the page's tables are
the HTML report's tables and the JSON rows; a hostile group name stays inert on the page while our bold DI cells
stay bold."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairviz.core.display import Table, tables
from fairviz.data.samples import load_sample
from fairviz.parity import display as parity
from fairviz.sample_size import display as sample_size
from fairviz.report.options import AuditParams
from fairviz.report.render import to_html
from fairviz.sample_size import METRIC_LABELS, MatchParams
from tests.conftest import ROOT
from tests.pages.tabs import open_tab
from tests.report.test_parity_display import EVIL, hostile_predictions

COMPAS = AuditParams(attribute="race", threshold=0.4, benefit="negative")


def _open(page: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _page_frame(at: AppTest, table: Table) -> pd.DataFrame:
    headings = [table.heading(c) for c in table.frame.columns]
    return next(d.value for d in at.dataframe if list(d.value.columns) == headings)


def _assert_page_is_html_table(page: pd.DataFrame, table: Table) -> None:
    """Numbers the page keeps as numbers equal the table's values; every other cell reads as the HTML report's."""
    shown = table.formatted()
    assert len(page) == len(table.frame)
    for column in table.frame.columns:
        heading = table.heading(column)
        if table.formats.get(column) in ("int", "num", "num2", "num4"):
            expected = pd.to_numeric(table.frame[column], errors="coerce").to_numpy(float)
            np.testing.assert_allclose(pd.to_numeric(page[heading]).to_numpy(float), expected, rtol=1e-12,
                                       equal_nan=True, err_msg=heading)
        else:
            assert page[heading].astype(str).tolist() == shown[heading].tolist(), heading
    html = to_html([table])
    assert shown.to_html(index=False, escape=True, border=0, classes="table") in html


def test_parity_page_tables_are_the_html_tables_and_the_json_rows():
    at = _open("app_pages/parity.py")
    pred = load_sample("compas")
    audit = parity.parity_run(parity.SECTION.given(pred), COMPAS)
    found = tables(parity.display(pred, audit, COMPAS))
    rows = at.session_state["page_json"]["parity"]["parity"]
    by_pair = {(p["group_i"], p["group_j"]): p for p in rows["pairs"]}

    open_tab(at, "parity_tab", "All pairs")
    _assert_page_is_html_table(_page_frame(at, found["pairs"]), found["pairs"])
    for record in found["pairs"].records():
        entry = by_pair[(record["group_i"], record["group_j"])]
        for column, value in record.items():
            assert (value is None and entry[column] is None) or entry[column] == pytest.approx(value, nan_ok=True) \
                if isinstance(value, float) else entry[column] == value, column

    open_tab(at, "parity_tab", "Groups and confusion matrices")
    _assert_page_is_html_table(_page_frame(at, found["groups"]), found["groups"])
    for record in found["groups"].records():
        stored = rows["groups"][record["group"]]
        assert [record[c] for c in ("tp", "fn", "fp", "tn")] == [stored[c] for c in ("tp", "fn", "fp", "tn")]
        assert record["marginal_benefit"] == pytest.approx(stored["marginal_benefit"], abs=1e-15)


def test_significance_page_tables_are_the_html_tables_and_the_json_rows():
    at = _open("app_pages/significance.py")
    pred = load_sample("compas")
    options = AuditParams(attribute="race", threshold=0.4, benefit="negative", match=MatchParams(), cps_lambda=5.0)
    result = sample_size.significance_run(sample_size.SECTION.given(pred), options)
    found = tables(sample_size.display(pred, result, options))
    rows = at.session_state["page_json"]["significance"]["parity"]

    _assert_page_is_html_table(_page_frame(at, found["match"]), found["match"])
    label_to_key = {label: key for key, label in METRIC_LABELS.items()}
    for record in found["match"].records():
        entry = rows["match"][record["group"]][label_to_key[record["metric"]]]
        assert (record["p_adjusted"], record["cdf"], record["method"]) == (
            entry["p_adjusted"], entry["cdf"], entry["method"])

    open_tab(at, "match_tab", "Cross-Prior Smoothing")
    _assert_page_is_html_table(_page_frame(at, found["cps"]), found["cps"])
    for record in found["cps"].records():
        entry = rows["cps"][record["group"]]
        assert [record[c] for c in ("n", "tp", "fn", "fp", "tn")] == [entry[c] for c in ("n", "tp", "fn", "fp", "tn")]


def _hostile_app(page: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["predictions"] = hostile_predictions()
    at.session_state["sample_key"] = None
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _shown_markdown(at: AppTest) -> str:
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    texts += [e.value for kind in (at.info, at.warning, at.error, at.success) for e in kind]
    return "\n".join(texts)


@pytest.mark.parametrize("page", ["app_pages/parity.py", "app_pages/significance.py"])
def test_a_hostile_name_stays_inert_on_the_page(page):
    at = _hostile_app(page)
    shown = _shown_markdown(at)
    assert "\\<b\\>b\\</b\\>" in shown                                     # named, escaped for Markdown
    for raw in ("<b>b</b>", "](http://e.x/)", "![i](", "**x**"):
        assert raw not in shown, raw
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    data = json.dumps([s["data"] for s in specs])
    assert "<b>b</b>" not in data and "&lt;b&gt;b&lt;/b&gt;" in data
    if page == "app_pages/parity.py":
        open_tab(at, "parity_tab", "All pairs")
    frames = [d.value for d in at.dataframe]
    assert any(EVIL in frame.astype(str).to_numpy() for frame in frames)   # table cells are plain text, as typed


def test_the_di_heatmap_on_the_page_shows_bold_cells_and_an_escaped_name():
    at = _hostile_app("app_pages/parity.py")
    at.selectbox(key="parity_metric").set_value("di").run()
    assert not at.exception
    heatmap = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]
    cells = [c for row in heatmap["text"] for c in row]
    assert any(c.startswith("<b>") and c.endswith("</b>") for c in cells), cells      # not "&lt;b&gt;0.63…"
    assert "**x** [a](http://e.x/) ![i](http://e.x/p.png) &lt;b&gt;b&lt;/b&gt;" in heatmap["x"]
