"""Streamlit glue shared by the Group parity and Sample-size significance pages: the beneficial-outcome switch
remembered per data set, figures kept as built (never escaped again), downloads of a display list's tables."""
from __future__ import annotations

from typing import Callable, Iterable

import streamlit as st

from app_pages import _render
from app_pages._ui import CACHE_TTL
from fairviz.core.display import Item, Table
from fairviz.core.markup import csv_bytes
from fairviz.data import Predictions
from fairviz.data.samples import negative_benefit_samples

BENEFIT_STATE = "parity_benefit"          # {data fingerprint: "positive" | "negative"}, kept across pages
BENEFIT_LABELS = {"positive": "Positive prediction (score ≥ τ)", "negative": "Negative prediction (score < τ)"}
NEGATIVE_BY_DEFAULT = negative_benefit_samples()   # samples whose positive prediction is a harm (assets/samples.json)


def benefit_choice(pred: Predictions) -> str:
    """Which prediction is the benefit. Remembered per data set; COMPAS starts flipped, as the thesis does."""
    choices = st.session_state.setdefault(BENEFIT_STATE, {})
    if pred.fingerprint not in choices:
        choices[pred.fingerprint] = "negative" if st.session_state.get("sample_key") in NEGATIVE_BY_DEFAULT \
            else "positive"
    options = list(BENEFIT_LABELS)
    value = st.sidebar.radio(
        "Beneficial outcome", options, index=options.index(choices[pred.fingerprint]),
        format_func=BENEFIT_LABELS.get,
        help="OFI and DI need to know which prediction helps a person (hired, granted, released). For COMPAS a "
             "high risk score is a harm, so the benefit is the negative prediction ('low risk'); flipping swaps "
             "TP↔TN and FN↔FP.")
    choices[pred.fingerprint] = value
    return value


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
