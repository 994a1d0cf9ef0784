"""Streamlit glue shared by the Group parity and Sample-size significance pages: the beneficial-outcome switch
remembered per data set."""
from __future__ import annotations

import streamlit as st

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
