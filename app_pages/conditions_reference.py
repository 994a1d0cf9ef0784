"""Paper reference: the published tables of *Systematic Evaluation of Predictive Fairness* (Han, Shen, Cohn,
Baldwin and Frermann, AACL 2022), with DTO recomputed from the printed means: the display list of
``fairviz.conditions.display.reference_tables``, one tab per table."""
from __future__ import annotations

import streamlit as st

from fairviz.conditions import readings
from fairviz.conditions.display import reference_tables
from app_pages import _ui
from app_pages._render import render


def page() -> None:
    st.title("Paper reference: data conditions and debiasing")
    _ui.own_data("the tables printed in the paper")
    render([readings.reference_about()])
    groups = reference_tables()
    for tab, group in zip(st.tabs([g.title for g in groups]), groups):
        with tab:
            render(group.items, figure_cache=_ui.figure)


_ui.guarded(page)
