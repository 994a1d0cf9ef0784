"""Streamlit glue shared by the Group parity and Sample-size significance pages: the beneficial outcome (the frame's
choice), pickers that stay valid when the groups change, figures kept as built, downloads of a display list's
tables."""
from __future__ import annotations

from typing import Callable, Iterable

import streamlit as st

from app_pages import _render, _ui
from app_pages._ui import CACHE_TTL
from fairviz.core.display import Item, Table
from fairviz.core.markup import csv_bytes
from fairviz.data import Predictions

NEGATIVE_BY_DEFAULT = _ui.NEGATIVE_BY_DEFAULT   # samples whose positive prediction is a harm (assets/samples.json)


def benefit_choice(pred: Predictions) -> str:
    """Which prediction is the benefit: the frame's choice (drawn by app.py in the sidebar), which starts on the
    data set's own default when data is loaded (COMPAS flipped, as the thesis does)."""
    return _ui.context().benefit


def keep_choice(key: str, options: list, default) -> None:
    """Reset a selectbox's remembered value when it is no longer among the options (e.g. other groups)."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = default


@st.cache_resource(show_spinner=False, max_entries=64, ttl=CACHE_TTL)
def _figure(key: tuple, _build: Callable[[], object]):
    return _build()


def figure(key: tuple, build: Callable[[], object]):
    """A figure built once per ``key`` (the data's fingerprint and every parameter it draws) and kept, shared and
    never mutated. Our figures escape names where they enter them (``plot_text``), so nothing is escaped here: the
    markup we write (a bold DI cell) survives."""
    return _figure(key, build)


def render(items: Iterable[Item], where=None) -> None:
    """Draw a display list on the page, its figures kept per key."""
    _render.render(list(items), where, figure_cache=figure)


def download(table: Table, file_name: str, label: str) -> None:
    """A table of the display list as CSV: its headings, its values as computed, formula-safe."""
    frame = table.frame.rename(columns={c: table.heading(c) for c in table.frame.columns})
    st.download_button(label, csv_bytes(frame), file_name, "text/csv")
