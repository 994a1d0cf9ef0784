"""The Group parity and Sample-size significance pages in Streamlit's AppTest, on the COMPAS sample."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT
from tests.pages.tabs import open_tab


def _open(page: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _radio(at: AppTest, label: str):
    return next(r for r in at.radio if r.label == label)


def _text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [e.body for kind in (at.error, at.warning, at.success, at.info) for e in kind]
    return "\n".join(parts)


def test_parity_page_reproduces_compas_and_reads_the_pair():
    at = _open("app_pages/parity.py")
    assert at.session_state["threshold"] == 0.4                      # the sample's threshold survives the switch
    assert _radio(at, "Beneficial outcome").value == "negative"       # COMPAS: low risk is the benefit
    # the Summary's top group against the reference is preselected (issue 23), never a group under the size floor
    assert at.selectbox(key="parity_i").value == "African-American"
    assert at.selectbox(key="parity_j").value == "Caucasian"
    assert (_metrics(at)["OFI (i − j)"], _metrics(at)["DI (i ÷ j)"]) == ("-0.120", "0.632")
    at.selectbox(key="parity_i").set_value("Other").run()             # the largest |OFI|, two small groups
    at.selectbox(key="parity_j").set_value("Native American").run()
    m = _metrics(at)
    assert (m["OFI (i − j)"], m["DI (i ÷ j)"], m["DPPL (i − j)"]) == ("0.254", "2.371", "0.457")
    assert "Algorithmic bias in favour of Other" in _text(at)

    at.selectbox(key="parity_i").set_value("African-American").run()
    at.selectbox(key="parity_j").set_value("Caucasian").run()
    m = _metrics(at)
    assert (m["OFI (i − j)"], m["DI (i ÷ j)"]) == ("-0.120", "0.632")             # [3] §3.4, Fig. 3.2
    text = _text(at)
    assert "Algorithmic bias in favour of Caucasian" in text
    assert "below 4/5, so the four-fifths rule flags bias for Caucasian" in text
    # the confusion matrices of the pair, in the flipped orientation: African-American (990, 805, 532, 1369)
    frames = [d.value for d in at.dataframe]
    aa = next(f for f in frames if list(f.columns) == ["actual", "predicted benefit", "predicted no benefit"])
    assert aa["actual"].tolist() == ["deserved (actual +)", "not deserved (actual −)"]
    assert aa[["predicted benefit", "predicted no benefit"]].to_numpy().tolist() == [[990, 805], [532, 1369]]

    _radio(at, "Beneficial outcome").set_value("positive").run()     # the raw orientation negates OFI
    assert _metrics(at)["OFI (i − j)"] == "0.120"
    assert _metrics(at)["DI (i ÷ j)"] == "1.690"
    assert not at.exception


def test_parity_page_undefined_cells_intersections_and_tables():
    at = _open("app_pages/parity.py")
    at.slider(key="threshold").set_value(0.0).run()                   # everyone high risk: nobody gets the benefit
    assert _metrics(at)["DI (i ÷ j)"] == "undefined"
    assert "DI is undefined: neither group gets any benefit (0/0)" in _text(at)

    at.slider(key="threshold").set_value(0.4).run()
    at.selectbox(key="attribute").set_value("race × sex").run()        # intersections from the shared sidebar
    groups = at.selectbox(key="parity_i").options
    assert "African-American × Male" in groups and len(groups) == 12
    at.selectbox(key="parity_metric").set_value("te").run()
    assert not at.exception
    open_tab(at, "parity_tab", "All pairs")
    pairs = next(d.value for d in at.dataframe if "reading" in d.value.columns)
    assert len(pairs) == 12 * 11 // 2
    open_tab(at, "parity_tab", "Groups and confusion matrices")
    group_table = next(d.value for d in at.dataframe if "marginal benefit 𝓑" in d.value.columns)
    assert group_table["n"].sum() == 7214


def test_scenario_builder_tables_3_1_and_3_3():
    at = open_tab(_open("app_pages/parity.py"), "parity_tab", "Scenario builder")
    m = _metrics(at)
    assert (m["OFI = 𝓑_i − 𝓑_j"], m["DI = b_i ÷ b_j"]) == ("-0.056", "0.375")      # Table 3.1, Scenario A
    at.selectbox(key="scenario_preset").set_value("B").run()
    m = _metrics(at)
    assert m["OFI = 𝓑_i − 𝓑_j"] == "0.222" and m["DI = b_i ÷ b_j"] == "undefined (= 1 by convention)"
    at.selectbox(key="scenario_preset").set_value("C").run()
    c = _metrics(at)
    at.selectbox(key="scenario_preset").set_value("D").run()
    d = _metrics(at)
    assert (c["TE"], c["DCA"], c["OFI = 𝓑_i − 𝓑_j"]) == ("1.500", "0.833", "-0.367")
    assert (d["TE"], d["DCA"], d["OFI = 𝓑_i − 𝓑_j"]) == ("1.500", "0.833", "-0.325")
    at.number_input(key="scenario_j_tn").set_value(40).run()            # j gains many correct rejections
    assert _metrics(at)["TE"] == "1.500" and _metrics(at)["OFI = 𝓑_i − 𝓑_j"] == "-0.223"    # −1/5 − 1/44
    for cell in ("tp", "fn", "fp", "tn"):
        at.number_input(key=f"scenario_i_{cell}").set_value(0)
    at.run()
    assert "Each group needs at least one person" in _text(at)
    assert not at.exception


def test_significance_page_match_cps_and_jaggedness():
    at = _open("app_pages/significance.py")
    # every metric on the label (issue 34 item 9): the benefit's TPR and PPV, as this page named them on main, are
    # the label's TNR and NPV; F1 and PT on the label flag 7 fewer scores (57 on main) and move BH's p a little
    assert "50 of 96" in _text(at)
    at.selectbox(key="match_group").set_value("Asian").run()
    at.selectbox(key="match_metric").set_value("tnr").run()
    m = _metrics(at)
    assert (m["Observed"], m["Percentile"], m["BH-adjusted p"]) == ("0.913", "98.6%", "0.051")
    assert "Not distinguishable from sampling noise at n = 32 (adjusted p 0.051)" in _text(at)      # 0.049 on main

    at.selectbox(key="match_metric").set_value("npv").run()
    assert "Not distinguishable from sampling noise at n = 32" in _text(at)

    open_tab(at, "match_tab", "Cross-Prior Smoothing")
    cps = next(d.value for d in at.dataframe if "TN (CPS)" in d.value.columns)
    native = cps[cps["group"] == "Native American"].iloc[0]
    assert native["TN (CPS)"] == pytest.approx(5.3682, abs=1e-4) and native["n"] == 18    # the benefit's TP
    text = _text(at)
    assert "CPS with λ = 5 gives" in text
    text = _text(open_tab(at, "match_tab", "Jaggedness and holes"))
    assert "Random subsamples of 5 people from 'Other'" in text                        # smallest group ≥ 100
    holes = next(d.value for d in at.dataframe if "Theorem 4.3 (as printed)" in d.value.columns)
    column = next(c for c in holes.columns if c.startswith("holes among the 455 matrices of n = 12"))
    assert int(holes.set_index("metric").loc["MCC", column]) == 4 * 12                  # Theorem 4.3: 4n

    open_tab(at, "match_tab", "MATCH test")
    assert at.selectbox(key="match_metric").value == "npv"          # kept while its tab was closed
    at.selectbox(key="match_reference").set_value("Caucasian").run()
    at.selectbox(key="match_group").set_value("Caucasian").run()
    assert "'Caucasian' is the reference group itself." in _text(at)
    assert not at.exception


@pytest.mark.slow
@pytest.mark.parametrize("sample", ["adult", "default", "synthetic"])
def test_both_pages_on_the_other_samples(sample):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.selectbox(key="sample_choice").set_value(sample).run()
    assert at.session_state["sample_key"] == sample
    for page in ("app_pages/parity.py", "app_pages/significance.py"):
        at.switch_page(page).run()
        assert not at.exception, (sample, page, at.exception)
        failures = [e.value for e in at.error if "Something went wrong" in e.value or "cannot be used" in e.value]
        assert not failures, (sample, page, failures)                     # (red verdict boxes are fine)
        assert _radio(at, "Beneficial outcome").value == "positive"       # only COMPAS starts flipped
        assert at.metric, (sample, page)                                   # real numbers are shown
