"""Streamlit glue shared by the Group parity and Sample-size significance pages: the beneficial outcome (the frame's
choice), its caption, and pickers that stay valid when the groups change."""
from __future__ import annotations

import streamlit as st

from fairviz.data import Predictions
from app_pages import _ui

NEGATIVE_BY_DEFAULT = _ui.NEGATIVE_BY_DEFAULT   # samples whose positive prediction is a harm (assets/samples.json)


def benefit_choice(pred: Predictions) -> str:
    """Which prediction is the benefit: the frame's choice (drawn by app.py in the sidebar), which starts on the
    data set's own default when data is loaded (COMPAS flipped, as the thesis does)."""
    return _ui.context().benefit


def benefit_caption(pred: Predictions, benefit: str, threshold: float) -> str:
    label = pred.mapping.label
    if benefit == "negative":
        return (f"Benefit = score < {threshold:.2f}; a label of 0 in '{label}' means the person deserved it "
                "(positive class after the flip).")
    return f"Benefit = score ≥ {threshold:.2f}; a label of 1 in '{label}' means the person deserved it."


def keep_choice(key: str, options: list, default) -> None:
    """Reset a selectbox's remembered value when it is no longer among the options (e.g. other groups)."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = default
