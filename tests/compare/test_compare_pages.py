"""The 'Compare models' tab of the Residual, Group parity and Sample-size significance pages in AppTest, on the Adult
sample's two models: the tab shows the page's part of the comparison with the concept's own numbers; with one model
there is no tab."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from fairviz.compare import CompareParams, compare_models
from fairviz.core.wording import fmt_p
from fairviz.data.samples import load_sample
from tests.conftest import ROOT
from tests.pages.tabs import TAB_KEYS, labels, open_tab

PAGES = {"app_pages/residuals.py": ("F_dist", "Sorted residuals of both models"),
         "app_pages/parity.py": ("FPR gap", None),
         "app_pages/significance.py": ("AUROC", "Reliability of both models")}


def _compare_tab(page: str, sample: str = "adult") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params["sample"] = sample
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("page", list(PAGES))
def test_the_compare_tab_shows_the_pages_part_with_the_concepts_numbers(page):
    at = _compare_tab(page)
    at.session_state["compare_resamples"] = 200
    open_tab(at, TAB_KEYS[page], "Compare models")
    assert at.selectbox(key="compare_a").value == "gradient boosting"
    assert at.selectbox(key="compare_b").value == "logistic regression"
    metric, figure = PAGES[page]
    frames = {tuple(df.value.columns): df.value for df in at.dataframe}
    differences = next(v for k, v in frames.items() if "Δ (second − first)" in k)
    assert metric in set(differences["Metric"])
    expected = compare_models(load_sample("adult"), "sex", 0.5, "positive", None, "gradient boosting",
                              "logistic regression", CompareParams(resamples=200, permutations=200))
    if metric in ("F_dist", "FPR gap"):
        row = differences[(differences["Metric"] == metric) & (differences["Group"] == "Female")].iloc[0]
        want = expected.difference({"F_dist": "f_dist", "FPR gap": "fpr_gap"}[metric], "Female", pair=True)
    else:
        row = differences[(differences["Metric"] == metric) & (differences["Group"] == "every row")].iloc[0]
        want = expected.difference("auroc")
    assert row["Δ (second − first)"] == pytest.approx(want.difference)
    assert row["p (BH)"] == fmt_p(want.p_adjusted)
    shown = "\n".join(i.value for i in at.info)
    assert "logistic regression" in shown                        # the readings, in the finding boxes
    titles = [c.proto.spec for c in at.get("plotly_chart")]
    if figure is not None:
        assert any(figure in t for t in titles), page
    else:
        assert not any("of both models" in t for t in titles)


def test_one_model_has_no_compare_tab():
    at = _compare_tab("app_pages/parity.py", sample="compas")
    assert "Compare models" not in labels(at)
