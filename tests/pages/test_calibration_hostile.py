"""A group (and a feature) named with Markdown and HTML stays inert on the Calibration page, in the HTML report and
in the terminal: it shows as typed, nothing renders, links or loads, and figures escape it exactly once."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairviz.calibration import CalibrationParams
from fairviz.data import ColumnMapping, build_predictions
from fairviz.report.plan import AuditParams, audit as run_audit
from fairviz.residuals import RDFParams
from tests.conftest import ROOT
from tests.pages.tabs import open_tab

EVIL = "**x** [a](http://e.x/) ![i](http://e.x/p.png) <b>b</b>"
FEATURE = "**f** <i>age</i>"
RAW = ("**x**", "[a](http", "![i](http", "<b>b</b>", "<i>age</i>", "**f**")
pytestmark = pytest.mark.slow


def _predictions():
    rng = np.random.default_rng(3)
    n = 2000
    score = rng.uniform(0.05, 0.95, n)
    group = np.where(np.arange(n) % 2 == 0, EVIL, "plain")
    y = rng.binomial(1, np.where(group == EVIL, np.clip(score + 0.1, 0, 1), score))
    frame = pd.DataFrame({"y": y, "score": score, "group": group, FEATURE: rng.normal(40, 10, n)})
    return build_predictions(frame, ColumnMapping(label="y", score="score", groups=("group",), features=(FEATURE,)),
                             source="hostile.csv", file_fingerprint="calibration-hostile")


def _texts(at: AppTest) -> list[str]:
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    texts += [e.value for kind in (at.info, at.warning, at.error, at.success) for e in kind]
    return texts + [m.label for m in at.metric]


def test_a_hostile_group_name_is_inert_on_the_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["predictions"] = _predictions()
    at.session_state["sample_key"] = None
    at.session_state["cal_resamples"] = 0
    at.run()
    at.switch_page("app_pages/calibration.py").run()
    assert not at.exception, at.exception
    texts, specs, cells = [], [], []
    for tab in ("Reliability diagram", "Calibration tests", "Calibration error", "Recalibration",
                "Residuals vs features", "Subgroup performance"):
        open_tab(at, "cal_tab", tab)
        if tab == "Residuals vs features":
            at.toggle(key="cal_model_run").set_value(True).run()
        assert not at.exception, (tab, at.exception)
        assert not any("Something went wrong" in e.value for e in at.error), tab
        texts += _texts(at)
        specs += [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
        cells += [v for d in at.dataframe for column in d.value.columns for v in d.value[column] if isinstance(v, str)]
    joined = "\n".join(texts)
    assert "x" in joined and "plain" in joined
    for raw in RAW:
        assert raw not in joined, raw
    figures = json.dumps(specs)
    assert specs and "<b>b</b>" not in figures and "<i>age</i>" not in figures
    assert "&lt;b&gt;b&lt;/b&gt;" in figures and "&amp;lt;" not in figures          # escaped once, where it entered
    assert EVIL in cells                                                             # tables show it as typed


def test_a_hostile_group_name_is_inert_in_the_html_report_and_the_terminal():
    audit = run_audit(_predictions(), AuditParams(rdf=RDFParams(resamples=0, knee_resamples=0),
                                                  calibration=CalibrationParams(resamples=0)))
    assert "errors" not in audit.data
    report = audit.to_html()
    assert "<b>b</b>" not in report and 'href="http://e.x/' not in report and 'src="http://e.x/p.png' not in report
    assert "&lt;b&gt;b&lt;/b&gt;" in report and "&amp;lt;b&amp;gt;b" not in report             # escaped once
    terminal = audit.to_terminal()
    assert EVIL in terminal                                                          # as typed, nothing to render
