"""The data picker's operator-listed sources (FAIRVIZ_SOURCES): a visitor picks a name, confirms the roles, and every
page reads the source reduced where it lives; a source that cannot be read says so without naming server paths."""
from __future__ import annotations

import json

import duckdb
import pytest
from streamlit.testing.v1 import AppTest


def _picker():
    from app_pages import _sources
    _sources.source_picker()


@pytest.fixture
def listing(tmp_path, monkeypatch):
    path = tmp_path / "scored.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE compas AS SELECT * FROM read_csv('assets/compas.csv')")
    con.close()
    monkeypatch.setenv("FAIRVIZ_SOURCES", json.dumps([
        {"name": "COMPAS scores", "table": "compas", "database": str(path), "label": "two_year_recid",
         "score": "score", "groups": ["race"]},
        {"name": "Broken", "table": "nowhere", "database": str(path)}]))
    return path


def test_a_listed_table_becomes_the_data_of_every_page(listing):
    at = AppTest.from_function(_picker, default_timeout=120).run()
    assert at.selectbox(key="listed_source").options == ["COMPAS scores", "Broken"]
    at.button[0].click().run()
    pred = at.session_state["predictions"]
    assert "Loaded 7,214 rows from 'COMPAS scores'" in at.session_state["flash"]
    assert pred.n == 7214 and pred.weighted and pred.source == "COMPAS scores" and list(pred.attribute_names) == ["race"]


def test_an_unreadable_source_names_no_server_path(listing):
    at = AppTest.from_function(_picker, default_timeout=120).run()
    at.selectbox(key="listed_source").select("Broken").run()
    assert len(at.error) == 1 and "could not be read right now" in at.error[0].value
    assert str(listing) not in at.error[0].value and "nowhere" not in at.error[0].value


def test_home_offers_listed_sources_only_when_the_operator_lists_some(listing, monkeypatch):
    from tests.conftest import ROOT
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    assert at.radio(key="home_source").options == ["Bundled sample", "Upload a file", "Listed source"]
    at.radio(key="home_source").set_value("Listed source").run()
    assert not at.exception
    assert at.selectbox(key="listed_source").options == ["COMPAS scores", "Broken"]
    monkeypatch.delenv("FAIRVIZ_SOURCES")
    plain = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    assert plain.radio(key="home_source").options == ["Bundled sample", "Upload a file"]
