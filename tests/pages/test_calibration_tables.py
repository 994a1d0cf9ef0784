"""One result, every renderer, for calibration: the tables the page draws, the tables of the HTML report and the rows
of the JSON are the same records (the section's display list), on COMPAS by race."""
from __future__ import annotations

import math

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fairviz.calibration import CalibrationParams
from fairviz.core.display import tables
from fairviz.core.serialize import clean
from fairviz.data.samples import load_sample
from fairviz.report.plan import AuditParams, audit as run_audit
from fairviz.calibration.reliability_display import SECTION
from fairviz.residuals import RDFParams
from tests.conftest import ROOT
from tests.html_tables import html_tables
from tests.pages.tabs import open_tab

pytestmark = pytest.mark.slow
NUMERIC = ("int", "num", "num2", "num4")


@pytest.fixture(scope="module")
def audit():
    return run_audit(load_sample("compas"), AuditParams(attribute="race", threshold=0.4,
                                                        rdf=RDFParams(resamples=0, knee_resamples=0),
                                                        calibration=CalibrationParams(resamples=200)))


@pytest.fixture(scope="module")
def shown(audit):
    """The section's tables, as the display list holds them."""
    return tables(audit.display(SECTION))


@pytest.fixture(scope="module")
def page_frames():
    """Every table the page draws, tab by tab (heading tuple → DataFrame), and the page's JSON."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["cal_resamples"] = 200
    at.run()
    at.switch_page("app_pages/calibration.py").run()
    assert not at.exception, at.exception
    frames = {}
    for tab in ("Reliability diagram", "Calibration tests", "Calibration error", "Subgroup performance"):
        open_tab(at, "cal_tab", tab)
        frames.update({tuple(d.value.columns): d.value for d in at.dataframe})
    return frames, at.session_state["page_json"]["calibration"]


def _equal(a, b) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    undefined = (lambda v: v is None or (isinstance(v, float) and math.isnan(v)))
    if undefined(a) or undefined(b):
        return undefined(a) and undefined(b)
    if isinstance(a, (int, float, np.number)) and isinstance(b, (int, float, np.number)):
        return b == pytest.approx(a, rel=1e-12, abs=1e-12)
    return a == b


@pytest.mark.parametrize("key", ["tests", "errors", "pairs", "performance", "differences", "bins"])
def test_page_tables_equal_the_html_tables(audit, shown, page_frames, key):
    table = shown[key]
    headings = tuple(table.heading(c) for c in table.frame.columns)
    frames, _ = page_frames
    page = frames[headings]
    expected = table.formatted()
    if key == "bins":                          # the page shows one group's bins at a time (all rows by default)
        expected = expected[expected["group"] == "overall"].reset_index(drop=True)
        values = table.frame[table.frame["group"] == "overall"].reset_index(drop=True)
    else:
        values = table.frame
    assert len(page) == len(expected) > 0
    for column in table.frame.columns:
        heading = table.heading(column)
        if table.formats.get(column) in NUMERIC or table.formats.get(column) is None:
            assert all(_equal(a, b) for a, b in zip(values[column], page[heading])), heading
        else:
            assert list(page[heading]) == list(expected[heading]), heading

    html = next(rows for rows in html_tables(audit.to_html()) if tuple(rows[0]) == headings)
    assert html[1:] == table.formatted().values.tolist()


def _json_rows(key: str, data: dict) -> list[dict]:
    record = data["calibration"]
    rows = {**record["groups"], "overall": record["overall"]}        # the tables' order: all rows last
    if key in ("tests", "errors", "performance"):
        return [{"group": g, **{k: v for k, v in row.items() if k != "bins"}} for g, row in rows.items()]
    if key == "pairs":
        return record["pairs"]
    return [{"group": g, **b} for g, row in rows.items() for b in row["bins"]]


@pytest.mark.parametrize("key", ["tests", "errors", "pairs", "performance", "bins"])
def test_tables_are_the_json_rows(audit, shown, page_frames, key):
    """Each table's records equal the JSON's rows, key for key (the CLI's JSON and the page's JSON alike)."""
    _, page_json = page_frames
    records = clean(shown[key].records())
    for data in (audit.data, page_json):
        rows = _json_rows(key, data)
        assert len(rows) == len(records)
        for record, row in zip(records, rows):
            common = [k for k in record if k in row]
            assert len(common) >= len(record) - 3, (key, set(record) - set(row))      # bin, post_mean, wald_moe
            for k in common:
                assert _equal(record[k], row[k]), (key, record.get("group"), k)
