"""AppTest: the residual page on COMPAS by race shows the paper's knees (all n points) and the verdict read on the
unrounded knee/non-knee ratio."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from fairviz.data.samples import load_sample
from fairviz.residuals import RDFParams, analyse
from tests.conftest import ROOT
from tests.pages.tabs import open_tab


@pytest.mark.slow
def test_compas_race_knees_and_verdict_on_the_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("app_pages/residuals.py").run()
    assert not at.exception and not at.error
    groups = open_tab(at, "rdf_tab", "Groups").dataframe[0].value.set_index("group")
    assert groups.loc["African-American", "left knee"].startswith("13.6% / ")
    assert groups.loc["African-American", "right knee"].startswith("88.3% / ")
    expected = analyse(load_sample("compas"), "race", RDFParams()).concentration
    assert expected.ratio > 1.5 and expected.verdict == "supported"
    open_tab(at, "rdf_tab", "Knee error concentration")
    assert any(m.label == "Error ratio knee / elsewhere" and m.value == f"{expected.ratio:.2f}×" for m in at.metric)
    assert any("Knees are diagnostic here (supported)" in box.value for box in at.success)
    assert any("reads the unrounded ratio" in c.value for c in at.caption)
    assert "{" not in " ".join(w.value for w in at.warning)
