"""Findings link to their page views, and the audit pages open on the reference group against the Summary's top
group (COMPAS: African-American vs Caucasian at τ = 0.4), never on a group under the size floor (issue 23)."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

TINY = ("Asian", "Native American")            # COMPAS race groups of 32 and 18 rows


def _open(**params) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    for name, value in params.items():
        at.query_params[name] = value
    return at.run()


def _go(at: AppTest, page: str) -> AppTest:
    """Open a page from the sidebar: a browser clears the address's parameters on a page switch (the frame writes
    its own back), AppTest keeps them, so the previous page's selection is dropped here."""
    for name in ("group", "vs", "metric"):
        at.query_params.pop(name, None)
    return at.switch_page(f"app_pages/{page}.py").run()


def _param(at: AppTest, name: str):
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def test_each_finding_on_home_links_to_its_page_with_the_view_preselected():
    at = _open(sample="compas")
    assert not at.exception
    links = [e.proto for e in at.get("page_link") if e.proto.label.startswith("Open on")]
    assert len(links) == 5                                  # one per top finding
    first = links[0]
    assert first.page == "parity"
    assert first.label == "Open on Group parity: African-American vs Caucasian, selection rate gap"
    assert first.query_string == ("sample=compas&attribute=race&tau=0.40&benefit=negative&reference=Caucasian"
                                  "&group=African-American&metric=ppr_gap")


def test_compas_pages_open_on_african_american_vs_caucasian():
    at = _open(sample="compas")
    _go(at, "parity")
    assert not at.exception
    assert (at.selectbox(key="parity_i").value, at.selectbox(key="parity_j").value) == (
        "African-American", "Caucasian")                     # on main: Other vs Native American
    reading = "\n".join(m.value for m in at.markdown if "OFI" in m.value)
    assert not any(name in reading for name in TINY)

    _go(at, "significance")
    assert not at.exception
    assert at.selectbox(key="match_group").value == "African-American"        # on main: Asian, F1
    assert at.selectbox(key="match_metric").value == "ppr"                    # the top finding's selection rate

    _go(at, "residuals")
    assert not at.exception
    reading = next(m.value for m in at.markdown if m.value.startswith("**Reading.** Typical error"))
    assert "*African-American* against the reference *Caucasian*: F_dist" in reading
    assert not any(name in reading for name in TINY)        # on main: African-American vs Asian


def test_calibration_never_headlines_a_group_under_the_floor():
    at = _open(sample="compas")
    at.session_state["cal_resamples"] = 0                   # the headline does not need the intervals
    at.switch_page("app_pages/calibration.py").run()
    assert not at.exception
    labels = [m.label for m in at.metric]
    assert any(label.startswith("Best group: ") for label in labels)
    assert not any(name in label for label in labels for name in TINY)         # on main: "Best group: Asian"
    assert any("African-American** against the reference **Caucasian**: smooth ECE" in m.value or
               "African\\-American** against the reference **Caucasian**: smooth ECE" in m.value
               for m in [*at.markdown, *at.info])


def test_a_finding_link_opens_its_view_and_the_address_then_follows_the_pickers():
    at = _open(sample="compas", group="Hispanic", metric="di")
    at.switch_page("app_pages/parity.py").run()
    assert not at.exception
    assert at.selectbox(key="parity_i").value == "Hispanic"
    assert at.selectbox(key="parity_j").value == "Caucasian"
    assert at.selectbox(key="parity_metric").value == "di"
    at.selectbox(key="parity_i").set_value("Other").run()
    assert at.selectbox(key="parity_i").value == "Other"    # the picker wins over the address it came from
    assert _param(at, "group") == "Other" and _param(at, "metric") == "di"
    link = at.sidebar.code[0].value
    assert "group=Other" in link and "metric=di" in link and "reference=Caucasian" in link
    at.run()                                                 # a rerun keeps the picked pair
    assert at.selectbox(key="parity_i").value == "Other"
