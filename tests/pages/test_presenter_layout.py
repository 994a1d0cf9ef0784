"""AppTest: presenter-ready pages (issue 23). Caveats fold into one "N caveats" expander right after the page's first
chart, every chart keeps the figure's own template (Streamlit's chart theme would draw 12.75 px grey text), and a
table too wide for the grid's columns is drawn whole, with the sortable grid on request."""
from __future__ import annotations

import re

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_pages import _render
from fairviz.core.display import Table, text
from fairviz.core.markup import md
from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def _walk(node, out=None) -> list:
    """The page's elements in reading order, blocks included."""
    out = [] if out is None else out
    for child in getattr(node, "children", {}).values():
        out.append(child)
        _walk(child, out)
    return out


@pytest.fixture(scope="module")
def residuals() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.switch_page("app_pages/residuals.py").run()
    assert not at.exception
    return at


def test_caveats_fold_into_one_expander_after_the_first_chart(residuals):
    elements = _walk(residuals.main)
    kinds = [e.type for e in elements]
    folds = [e for e in elements if e.type == "expander" and re.fullmatch(r"\d+ caveats?", e.label)]
    assert len(folds) == 1
    fold = folds[0]
    inside = [e for e in _walk(fold) if e.type == "warning"]
    assert len(inside) == int(fold.label.split()[0]) >= 1
    assert len(residuals.warning) == len(inside)                   # no caveat left outside the fold
    assert kinds.index("plotly_chart") < elements.index(fold)      # the chart comes first
    assert "Knees need about 1,000 rows per group" in " ".join(w.value for w in inside)


def test_charts_keep_the_figures_template(residuals):
    charts = residuals.get("plotly_chart")
    assert charts and all(chart.proto.theme == "" for chart in charts)


def test_a_wide_table_is_drawn_whole_with_the_grid_on_request():
    wide = Table(pd.DataFrame({f"a rather long heading {i}": [0.123456] for i in range(14)}),
                 key="wide", formats={f"a rather long heading {i}": "num" for i in range(14)})
    narrow = Table(wide.frame.iloc[:, :3], key="narrow")
    assert _render.too_wide(wide) and not _render.too_wide(narrow)
    hostile = Table(pd.DataFrame({"group": ["[x](http://evil.example/)"], "n": [3]}), key="h")
    assert _render.static_frame(hostile).iloc[0, 0] == md("[x](http://evil.example/)")   # st.table reads Markdown


def test_a_caveat_before_any_chart_or_finding_stays_where_it_came():
    """A page with no chart and no finding still shows its caveats (where the first came)."""
    def script():
        from app_pages import _render
        from fairviz.core.display import text
        _render.render([text("only a caveat", "caveat")])

    at = AppTest.from_function(script).run()
    assert [e.label for e in at.expander] == ["1 caveat"] and at.warning[0].value == "only a caveat"
    assert text("x", "caveat").level == "caveat"


OWN_DATA_PAGES = ["lorenz", "synthetic_data", "simulator", "conditions_reference", "forecast_fairness",
                  "knee_probing", "explanations"]


@pytest.mark.parametrize("name", OWN_DATA_PAGES)
def test_a_page_with_its_own_data_says_so_under_its_title(name):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.switch_page(f"app_pages/{name}.py").run()
    assert not at.exception
    elements = _walk(at.main)
    title = next(i for i, e in enumerate(elements) if e.type == "title")
    assert elements[title + 1].type == "markdown" and "This page uses its own data" in elements[title + 1].value
    badge = " ".join(m.value for m in at.sidebar.markdown)
    assert "**Data:** COMPAS" not in badge                        # the sidebar does not claim the loaded data


def test_an_audit_page_names_the_loaded_data(residuals):
    assert any(m.value.startswith("**Data:** COMPAS") for m in residuals.sidebar.markdown)
    assert not any("This page uses its own data" in m.value for m in residuals.markdown)
