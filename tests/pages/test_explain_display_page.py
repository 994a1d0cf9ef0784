"""The explanation-disparity page draws the section's display list: its tests table is the HTML report's table and
the JSON's cells, the Default-class asymmetry warning shows bold (not literal asterisks), and a group named with
markup stays text on the page."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from fairviz.core.display import tables
from fairviz.core.markup import md
from fairviz.explain import METHOD_NAMES, METRICS, compare, load_shipped
from fairviz.explain import results as xresults
from fairviz.explain.display import disparity_display
from fairviz.report.render import to_html
from tests.conftest import ROOT
from tests.html_tables import html_tables
from tests.explain.test_explain_display import HOSTILE, _same, hostile_result

PAGE = "app_pages/explanations.py"


def _open(key: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(PAGE).run()
    if key is not None:
        at.selectbox(key="explain_shipped").set_value(key).run()
    assert not at.exception, at.exception
    return at


def _texts(at: AppTest) -> list[str]:
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    return texts + [e.value for kind in (at.info, at.warning, at.error, at.success) for e in kind]


@pytest.mark.parametrize("bh", [False, True])
def test_page_table_equals_html_table_equals_json_cells(bh):
    at = _open("neutral")
    if bh:
        at.toggle(key="explain_bh").set_value(True).run()
        assert not at.exception
    page = next(df.value for df in at.dataframe if "p (Mann–Whitney)" in df.value.columns)
    result = load_shipped("neutral")
    report = compare(result, correction="bh" if bh else "none")
    items = disparity_display(result, report)
    table = tables(items)["explanation_tests"]
    html = next(t for t in html_tables(to_html(items)) if "p (Mann–Whitney)" in t[0])
    assert list(page.columns) == html[0] == list(table.formatted().columns)
    formatted = table.formatted()
    numeric = {table.heading(c) for c, kind in table.formats.items() if kind in ("int", "num")}
    for k, (_, row) in enumerate(page.iterrows()):
        for heading, value in row.items():
            if heading in numeric:                   # the page keeps numbers sortable; HTML shows them formatted
                assert value == pytest.approx(table.frame.iloc[k][_key(table, heading)], nan_ok=True)
            else:
                assert value == formatted.iloc[k][heading] == html[k + 1][html[0].index(heading)], heading
    cells = at.session_state["page_json"]["explanations"]["tests"]
    method_key = {name: key for key, name in METHOD_NAMES.items()}
    metric_key = {m.label: key for key, m in METRICS.items()}
    gi, gj = report.groups
    assert len(page) == sum(len(c) for c in cells.values())
    for _, row in page.iterrows():
        cell = cells[method_key[row["method"]]][metric_key[row["metric"]]]
        assert (row[f"n {gi}"], row[f"n {gj}"]) == (cell["n"][gi], cell["n"][gj])
        assert _same(row[f"Cohen's d ({gi} − {gj})"], cell["cohens_d"])
        assert _same(row[f"median {gi}"], cell["median"][gi])


def _key(table, heading: str) -> str:
    return next(c for c in table.frame.columns if table.heading(c) == heading)


def test_default_class_asymmetry_warning_is_bold_not_asterisks():
    at = _open("geco-all")
    warnings = [w.value for w in at.warning]
    asymmetry = next(w for w in warnings if "Default-class asymmetry" in w)
    assert asymmetry.startswith("**Default-class asymmetry**")         # our mark, drawn bold by Streamlit
    assert "\\*\\*Default-class asymmetry" not in asymmetry               # not escaped into literal asterisks
    assert "\n- every word deleted" in asymmetry                          # one line per removal, as a list


def test_a_hostile_group_name_stays_text_on_the_page(tmp_path, monkeypatch):
    hostile_result().save(tmp_path / "hostile")
    monkeypatch.setattr(xresults, "SHIPPED", tmp_path)
    at = _open()
    assert at.selectbox(key="explain_shipped").value == "hostile"
    joined = "\n".join(_texts(at))
    for raw in ("**x**", "[a](http://e.x/)", "![i](http", "<b>b</b>"):
        assert raw not in joined, raw
    assert md(HOSTILE) in joined and md(HOSTILE).startswith("\\*\\*x\\*\\* \\[a\\]")
    page = next(df.value for df in at.dataframe if "p (Mann–Whitney)" in df.value.columns)
    assert f"n {HOSTILE}" in page.columns                                 # a table heading is plain text
    specs = json.dumps([json.loads(c.proto.spec)["data"] for c in at.get("plotly_chart")])
    assert specs != "[]" and "<b>b</b>" not in specs and "**x**" in specs     # in legends and hover: as text
