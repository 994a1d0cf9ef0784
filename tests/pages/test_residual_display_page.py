"""AppTest: the residual page draws its section's display list, so its tables are the HTML report's tables and the
JSON's rows, cell for cell; a hostile group name stays inert on the page, in the HTML report and in the terminal."""
from __future__ import annotations


import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairviz.core.display import format_cell, tables
from fairviz.core.markup import md, plot_text
from fairviz.data import ColumnMapping, build_predictions
from fairviz.data.samples import load_sample
from fairviz.report.audit import run_audit
from fairviz.report.options import AuditParams
from fairviz.report.render import to_html
from fairviz.residuals.display import SECTION
from fairviz.residuals import RDFParams
from tests.conftest import ROOT
from tests.html_tables import html_tables
from tests.pages.tabs import open_tab

pytestmark = pytest.mark.slow
PAGE = "app_pages/residuals.py"
HOSTILE = "**x** [a](http://e.x/) ![i](http://e.x/p.png) <b>b</b>"
# the tab that draws each table of the section, in the order the page draws them
TABLES = {"Pair metrics": ["pairs", "pairs_detail"], "Groups": ["groups", "mean_decomposition"],
          "Threshold view (Thm 6.1)": ["threshold_gaps"]}


@pytest.fixture(scope="module")
def page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.selectbox(key="sample_choice").set_value("synthetic").run()
    at.switch_page(PAGE).run()
    assert not at.exception and not at.error
    return at


def test_page_tables_are_the_html_tables_and_the_json_rows(page):
    pred = load_sample("synthetic")
    params = AuditParams(attribute="group", threshold=page.slider(key="threshold").value, rdf=RDFParams())
    result = SECTION.run(pred, params)
    items = SECTION.display(pred, result, params)
    shown = tables(items)
    report_tables = {tuple(t[0]): t[1:] for t in html_tables(to_html(items))}
    data = page.session_state["page_json"]["residuals"]
    json_rows = {"groups": {name: row for name, row in data["groups"].items()},
                 "pairs": {f"{p['group_i']} vs {p['group_j']}": p for p in data["pairs"]}}
    checked = 0
    for tab, keys in TABLES.items():
        frames = [d.value for d in open_tab(page, "rdf_tab", tab).dataframe]
        assert len(frames) == len(keys), tab
        for key, frame in zip(keys, frames):
            table = shown[key]
            headings = [table.heading(c) for c in table.frame.columns]
            assert list(frame.columns) == headings, key
            html_rows = report_tables[tuple(headings)]
            assert len(html_rows) == len(frame)
            for (_, page_row), html_row, record in zip(frame.iterrows(), html_rows, table.records()):
                label = record.get("group", record.get("pair"))
                stored = json_rows["groups"].get(label) or json_rows["pairs"].get(label) or {}
                for column, heading, html_cell in zip(table.frame.columns, headings, html_row):
                    kind = table.formats.get(column)
                    value = page_row[heading]
                    if kind in ("int", "num", "num2", "num4"):          # numbers stay numbers on the page
                        assert format_cell(None if pd.isna(value) else value, kind) == html_cell, (key, heading)
                        json_key = column.replace("_direct", "")
                        nested = stored.get("mean_decomposition", {})
                        if json_key in stored or column in nested:
                            expected = stored[json_key] if json_key in stored else nested[column]
                            assert (pd.isna(value) and expected is None) or \
                                value == pytest.approx(expected, rel=1e-12, abs=1e-12), (key, column)
                            checked += 1
                    else:                                               # text, p-values, intervals: as read
                        assert value == html_cell, (key, heading)
    assert checked > 50


def _hostile_predictions():
    rng = np.random.default_rng(5)
    n = 1200
    score = rng.uniform(0.05, 0.95, n)
    frame = pd.DataFrame({"y": rng.binomial(1, score), "score": score,
                          "group": np.repeat([HOSTILE, "plain"], n // 2)})
    return build_predictions(frame, ColumnMapping("y", "score", ("group",)), source="hostile.csv",
                             file_fingerprint="residual-hostile")


def test_a_hostile_group_name_is_inert_on_the_page_in_html_and_in_the_terminal():
    pred = _hostile_predictions()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["predictions"] = pred
    at.session_state["sample_key"] = None
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    spec = at.get("plotly_chart")[0].proto.spec                  # the curves: the name escaped once, where it entered
    spec = spec.replace("\\u002f", "/").replace("\\u003c", "<").replace("\\u003e", ">")
    assert f"{plot_text(HOSTILE)} (n = 600)" in spec
    assert "&amp;lt;" not in spec and "<b>b</b>" not in spec
    texts, cells = [], []
    for tab in ("Pair metrics", "Groups", "Threshold view (Thm 6.1)", "Knee error concentration", "Diagnostic set D*"):
        open_tab(at, "rdf_tab", tab)
        cells += [v for d in at.dataframe for v in d.value.astype(str).to_numpy().ravel()]
        texts += [m.value for m in at.markdown] + [c.value for c in at.caption]
        texts += [e.value for kind in (at.info, at.warning, at.error, at.success) for e in kind]
    page = "\n".join(texts)
    assert md(HOSTILE) in page                          # the reading and the warnings name it, escaped
    for raw in ("**x**", "[a](http", "![i](http", "<b>b</b>"):
        assert raw not in page, raw
    assert HOSTILE in cells                              # table cells are plain text: shown as typed

    audit = run_audit(pred, AuditParams(attribute="group", rdf=RDFParams(resamples=50, knee_resamples=0)))
    html = to_html(audit.display(SECTION))
    assert "&lt;b&gt;b&lt;/b&gt;" in html and "<b>b</b>" not in html and "<img" not in html
    terminal = audit.to_terminal()
    assert HOSTILE in terminal and "&lt;" not in terminal and "\\*" not in terminal
