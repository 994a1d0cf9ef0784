"""AppTest: the residual page's threshold-invariance section shows the numbers of the audit's JSON section."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from fairviz.data.samples import load_sample
from fairviz.core.serialize import clean
from fairviz.residuals import threshold_invariance
from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def test_residual_page_threshold_invariance_section():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.selectbox(key="sample_choice").set_value("synthetic").run()
    at.switch_page("app_pages/residuals.py").run()
    assert not at.exception
    assert "threshold_invariance" not in at.session_state["page_json"]       # computed when its expander opens
    at.session_state["rdf_invariance"] = True
    at.run()
    assert not at.exception
    expected = threshold_invariance(load_sample("synthetic"), "group")
    page = at.session_state["page_json"]["threshold_invariance"]
    assert page == {"threshold_invariance": clean(expected.to_dict())}
    table = next(df.value for df in at.dataframe if "F_pattern" in df.value.columns and "DP ratio" in df.value.columns)
    first = expected.pairs[0]
    row = table.set_index("pair").loc[f"{first.group_i} vs {first.group_j}"]
    assert row["F_pattern"] == "0.00%"
    assert row["DP ratio"] == f"{first.cv['dp_ratio']:.2f}%"
    assert "do not depend on the threshold" in " ".join(c.value for c in at.caption)
