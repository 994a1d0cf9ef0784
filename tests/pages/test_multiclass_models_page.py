"""Two models on a multiclass file in the app (issue 35): the sidebar's Model picker offers both, the Group parity
page audits the one it picks (its confusion matrices are that model's), and with every class at once it compares
the two by paired error rates, as the CLI does."""
from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fairviz.data import build_predictions
from fairviz.data.view import View
from tests.conftest import ROOT
from tests.data.test_engine_multiclass_models import BY_PREDICTED, two_models

pytestmark = pytest.mark.app


def _app(model: str | None = None) -> AppTest:
    pred = build_predictions(two_models(), BY_PREDICTED[1], source="classes.csv", file_fingerprint="classes")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["predictions"] = pred
    at.session_state["sample_key"] = None
    if model is not None:
        at.session_state["model"] = model
    at.run()
    at.switch_page("app_pages/parity.py").run()
    assert not at.exception, at.exception
    return at


def test_the_model_picker_offers_both_models_and_the_page_compares_them():
    at = _app()
    picker = next(s for s in at.sidebar.selectbox if s.label == "Model")
    assert picker.options == ["conf_a", "conf_b"] and picker.value == "conf_a"
    assert "Compare models" in [h.value for h in at.subheader]
    assert any(m.value.startswith("Two models of classes on the same rows") for m in at.markdown)
    errors = next(d.value for d in at.dataframe if "Error rate" in d.value.columns)
    frame = two_models()
    for model, column in (("conf_a", "pred_a"), ("conf_b", "pred_b")):
        shown = errors[(errors["Model"] == model) & (errors["Group"] == "All rows")]["Error rate"]
        assert shown.tolist() == pytest.approx([np.mean(frame[column] != frame["label"])], rel=1e-12)


@pytest.mark.parametrize("model", ["conf_a", "conf_b"])
def test_the_picked_model_is_the_one_audited(model):
    """Each group's accuracy on the page is the picked model's (the page once read the first model whatever the
    picker said: the frame's data were every model's joint predictions)."""
    at = _app(model)
    shown = next(d.value for d in at.dataframe if "accuracy" in d.value.columns)
    table = build_predictions(two_models(), BY_PREDICTED[1]).at(View(model=model))
    groups = table.groups("grp")
    expected = {name: np.mean(table.predicted[groups.codes == k] == table.y[groups.codes == k])
                for k, name in enumerate(groups.names)}
    assert dict(zip(shown["group"], shown["accuracy"])) == pytest.approx(expected, rel=1e-12)
