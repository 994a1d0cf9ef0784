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
    from fairviz.data.model import slice_attribute
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


def test_the_page_searches_a_regressions_slices_by_mean_residual_and_prunes_on_request():
    from tests.slices.data import regression_frame, regression_predictions
    data = regression_frame(12_000, seed=36, planted=True)
    pred = regression_predictions(data)
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.session_state["predictions"] = pred
    at.session_state["sample_key"] = None
    at.run()
    assert not at.exception, at.exception
    assert not any("two-valued label" in i.value for i in at.info)       # the page no longer refuses a regression
    metric = at.selectbox(key="slices_metric")
    assert metric.options == ["mean residual (prediction − target)", "mean absolute error"]
    payload = at.session_state["page_json"]["slices"]
    assert payload["task"] == "regression" and payload["metric"] == "mean_residual"
    assert payload["slices"][0]["slice"].startswith("sex=F ∧ age=18-25") and payload["slices"][0]["significant"]
    at.number_input(key="slices_top_k").set_value(3).run()
    assert not at.exception, at.exception
    payload = at.session_state["page_json"]["slices"]
    assert payload["search"]["top_k"] == 3 and payload["family"] == payload["tested"] + payload["search"]["pruned"]
    metric.set_value("mae").run()
    assert at.session_state["page_json"]["slices"]["metric"] == "mae"


def test_the_page_searches_a_multiclass_error_rate_over_every_class_and_one_class_vs_the_rest():
    import pandas as pd
    from fairviz.data.model import ColumnMapping
    from fairviz.data.validation import build_predictions
    rng = np.random.default_rng(37)
    n = 6_000
    group, region = rng.choice(["a", "b", "c"], n), rng.choice(["N", "S"], n)
    label = rng.choice(["cat", "dog", "bird"], n)
    wrong = rng.random(n) < np.where((group == "a") & (region == "N"), 0.45, 0.25)
    other = {"cat": "dog", "dog": "bird", "bird": "cat"}
    data = pd.DataFrame({"group": group, "region": region, "label": label,
                         "predicted": np.where(wrong, [other[v] for v in label], label)})
    pred = build_predictions(data, ColumnMapping("label", "", ("group", "region"), task="multiclass",
                                                 predicted="predicted"))
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.session_state["predictions"] = pred
    at.session_state["sample_key"] = None
    at.run()
    assert not at.exception, at.exception
    payload = at.session_state["page_json"]["slices"]
    assert payload["task"] == "multiclass" and payload["metric"] == "error_rate"
    assert payload["slices"][0]["slice"] == "group=a ∧ region=N" and payload["slices"][0]["significant"]
    assert at.selectbox(key="slices_metric").options[0] == "error rate (predicted class ≠ label), every class"
    at.selectbox(key="slices_metric").set_value("fpr").run()
    assert not at.exception, at.exception
    payload = at.session_state["page_json"]["slices"]
    assert payload["task"] == "binary" and payload["metric"] == "fpr"


def test_many_attributes_are_searched_with_the_pruned_search_by_default():
    from tests.slices.data import WIDE
    wide = {**WIDE, "tier": ("1", "2", "3")}
    pred = predictions(frame(8_000, seed=38, planted=True, attributes=wide), tuple(wide))
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.session_state["predictions"] = pred
    at.session_state["sample_key"] = None
    at.run()
    assert not at.exception, at.exception
    assert at.number_input(key="slices_top_k").value == 20
    payload = at.session_state["page_json"]["slices"]
    assert payload["search"]["top_k"] == 20 and payload["search"]["lattice_grouping_sets"] == 7 + 21 + 35
    assert payload["search"]["grouping_sets"] < 63 and payload["family"] >= payload["tested"]


def test_any_ranked_slice_not_only_a_significant_one_can_be_audited():
    """The expander offers every slice of the ranked table: a slice with no evidence of a difference is chosen and
    becomes the attribute, its two groups the slice's rows and the rest."""
    data = frame(12_000, seed=10, planted=True)
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.session_state["predictions"] = predictions(data)
    at.session_state["sample_key"] = None
    at.session_state["attribute"] = "sex"
    at.session_state["threshold"] = 0.5
    at.run()
    assert not at.exception, at.exception
    table = find_slices(slice_counts(predictions(data))).table
    plain = int(np.flatnonzero(~table["significant"].to_numpy() & (table["depth"].to_numpy() == 1))[0])
    name = table["slice"].iloc[plain]
    at.selectbox(key="slices_pick").set_value(plain).run()
    at.button(key="slices_audit_pick").click().run()
    assert not at.exception, at.exception
    assert at.session_state["attribute"] == "slice: " + name
    attribute, value = name.split("=")
    view = at.session_state["predictions"].attributes["slice: " + name]
    np.testing.assert_array_equal(view.codes == view.names.index("in the slice"), (data[attribute] == value).to_numpy())
