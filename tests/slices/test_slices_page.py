"""AppTest of the Slices page: the ranked table and treemap on the loaded data, and "Audit this slice vs the rest"
adds the slice as a two-group attribute of the session's data and selects it."""
from __future__ import annotations

import numpy as np
from streamlit.testing.v1 import AppTest

from fairviz.slices import find_slices, slice_counts
from tests.conftest import ROOT
from tests.slices.data import frame, predictions

PAGE = str(ROOT / "app_pages" / "slices.py")


def test_slices_page_ranks_the_planted_slice_and_audits_it_on_every_page():
    data = frame(12_000, seed=10, planted=True)
    pred = predictions(data)
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.session_state["predictions"] = pred
    at.session_state["sample_key"] = None
    at.session_state["attribute"] = "sex"
    at.session_state["threshold"] = 0.5
    at.run()
    assert not at.exception, at.exception
    expected = find_slices(slice_counts(pred)).table
    shown = at.dataframe[0].value
    assert list(shown.iloc[:, 0][:5]) == list(expected["slice"][:5])
    json_rows = at.session_state["page_json"]["slices"]["slices"]
    assert json_rows[0]["slice"] == expected["slice"][0] and json_rows[0]["significant"]
    buttons = [b for b in at.button if b.label.startswith("Audit this slice vs the rest")]
    assert buttons and "sex=F ∧ age=18-25" in " ".join(b.label for b in buttons)
    target = next(b for b in buttons if b.label.endswith(": sex=F ∧ age=18-25"))
    target.click().run()
    assert not at.exception, at.exception
    name = "slice: sex=F ∧ age=18-25"
    assert at.session_state["attribute"] == name
    view = at.session_state["predictions"].attributes[name]
    inside = ((data["sex"] == "F") & (data["age"] == "18-25")).to_numpy()
    assert view.names == ("the rest", "in the slice")
    np.testing.assert_array_equal(view.codes == 1, inside)


def test_a_slice_attribute_holds_the_slice_rows_and_the_rest():
    from fairviz.slices.counts import slice_attribute
    data = frame(3_000, seed=11)
    pred = predictions(data)
    _, view = slice_attribute(pred, {"sex": "F", "region": "N"})
    expected = ((data["sex"] == "F") & (data["region"] == "N")).sum()
    assert view.sizes[view.names.index("in the slice")] == expected
    assert view.sizes.sum() == 3_000


def test_in_the_app_the_audited_slice_becomes_the_frames_attribute_for_every_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["predictions"] = predictions(frame(12_000, seed=10, planted=True))
    at.session_state["sample_key"] = None
    at.run()
    assert not at.exception, at.exception
    at.switch_page("app_pages/slices.py").run()
    assert not at.exception, at.exception
    target = next(b for b in at.button if b.label.endswith(": sex=F ∧ age=18-25"))
    target.click().run()
    assert not at.exception, at.exception
    picker = at.sidebar.selectbox(key="attribute")
    assert picker.value == "slice: sex=F ∧ age=18-25" and "slice: sex=F ∧ age=18-25" in picker.options
    at.switch_page("app_pages/parity.py").run()
    assert not at.exception, at.exception
    assert at.sidebar.selectbox(key="attribute").value == "slice: sex=F ∧ age=18-25"
