"""The data picker's operator-listed sources: named tables and queries (``FAIRVIZ_SOURCES``) on a DuckDB file or a
PostgreSQL database, reduced where they live. A visitor picks a name and confirms the column roles; the path, the DSN
and the SQL stay on the server, and so do the engines' messages (they name server paths): the visitor reads that the
source could not be read, the server log says why.
"""
from __future__ import annotations

import logging

import pandas as pd
import streamlit as st

from fairviz.data import ColumnMapping, DataError, Predictions, guess_mapping, guess_positive_label, label_values
from fairviz.core.markup import md
from fairviz.data.engine import Engine, SufficientStats
from fairviz.data.sources import Listed, listed_sources
from app_pages import _ui, _upload
from app_pages._ui import CACHE_TTL

log = logging.getLogger("fairviz.sources")


def offered() -> list[Listed]:
    """The operator's sources; none when FAIRVIZ_SOURCES is unset or malformed (the log says what is wrong)."""
    try:
        return listed_sources()
    except DataError as err:
        log.error("FAIRVIZ_SOURCES is not used: %s", " ".join(err.problems))
        return []


def _listed(name: str) -> Listed:
    return next(s for s in offered() if s.name == name)


def _engine(listed: Listed) -> Engine:
    database = listed.source.database if listed.engine == "duckdb" else None
    return Engine(listed.engine, dsn=listed.dsn, database=database)


@st.cache_data(show_spinner="Reading the first rows…", max_entries=8, ttl=CACHE_TTL)
def preview(name: str) -> pd.DataFrame:
    """The first rows of the listed source ``name``: enough to guess and confirm the roles."""
    engine = _engine(_listed(name))
    try:
        return engine.preview(_listed(name).source)
    finally:
        engine.close()


@st.cache_data(show_spinner="Reducing the source to counts per group, label and score…", max_entries=4,
               ttl=CACHE_TTL)
def reduce_listed(name: str, mapping_key: str, _mapping: ColumnMapping) -> SufficientStats:
    """The listed source ``name`` reduced where it lives under the mapping (``mapping_key``: its repr)."""
    listed = _listed(name)
    engine = _engine(listed)
    try:
        return engine.reduce(listed.source, _mapping, name=listed.name)
    finally:
        engine.close()


def source_picker() -> None:
    """The picker: a listed source by name, its roles confirmed, then every page reads its reduced table."""
    listed = offered()
    if not listed:
        st.info("The server lists no sources.")
        return
    names = [s.name for s in listed]
    name = st.selectbox("Source", names, key="listed_source")
    chosen = listed[names.index(name)]
    try:
        frame = preview(name)
    except DataError as err:
        _unreadable(name, err)
        return
    pred = _roles_form(chosen, frame)
    if pred is None:
        return
    _ui.use_predictions(pred)
    st.session_state["sample_key"] = None
    st.session_state["flash"] = (f"Loaded {pred.n:,} rows from '{name}' (reduced where they live to {pred.y.size:,} "
                                 "(group, label, score) cells). Every page now uses this source.")
    st.rerun()


def _roles_form(chosen: Listed, frame: pd.DataFrame) -> Predictions | None:
    guess = guess_mapping(frame)
    columns = list(frame.columns)
    _upload.preview(frame, chosen.name, "Check the column roles:")
    with st.form("listed_mapping"):
        c1, c2, c3 = st.columns(3)
        label = _upload.pick(c1, "Label column (binary)", columns, chosen.label or guess.label)
        score = _upload.pick(c2, "Score column (probability in [0, 1])", columns, chosen.score or guess.score)
        groups = c3.multiselect("Group column(s)", columns,
                                default=[g for g in (chosen.groups or guess.groups) if g in columns])
        values = label_values(frame[label]) if label in frame else []
        positive = st.selectbox("Positive label value", values or ["—"],
                                index=values.index(guess_positive_label(values)) if len(values) == 2 else 0)
        intersect = st.checkbox("Also compare intersections of the first two group columns", value=False)
        submitted = st.form_submit_button("Use this source", type="primary")
    if not submitted:
        return None
    mapping = ColumnMapping(label=label, score=score, groups=tuple(groups),
                            positive_label=positive if len(values) == 2 else None, intersect=intersect)
    try:
        stats = reduce_listed(chosen.name, repr(mapping), mapping)
    except DataError as err:                      # the engine's message: for the server log
        _unreadable(chosen.name, err)
        return None
    try:
        return stats.predictions()
    except DataError as err:                      # validation of the visitor's roles: columns, labels, groups
        _ui.show_data_error(err)
        st.caption("Nothing was replaced: the pages keep showing the previous data until these are fixed.")
        return None


def _unreadable(name: str, err: DataError) -> None:
    log.error("listed source %r could not be read: %s", name, " ".join(err.problems))
    st.error(f"The source **{md(name)}** could not be read right now; the server log says why. The pages keep "
             "showing the previous data.")
