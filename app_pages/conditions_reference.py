"""Paper reference: the published tables of *Systematic Evaluation of Predictive Fairness* (Han, Shen, Cohn,
Baldwin and Frermann, AACL 2022), with DTO recomputed from the printed means."""
from __future__ import annotations

import streamlit as st

from fairviz.conditions import figures as figs
from fairviz.conditions import reference as ref
from app_pages import _ui


def page() -> None:
    st.title("Paper reference: data conditions and debiasing")
    st.caption(f"{ref.PAPER}. The paper trains nine debiasing methods under controlled changes of the training "
               "distribution (§3) and selects models on dev by their distance to the utopia point (DTO, §4.4). "
               "Below: its published tables, as printed.")
    tabs = st.tabs(["Table 3: Moji", "Table 1: Valence", "Table 4: Arousal", "Table 2: Bios"])
    with tabs[0]:
        st.markdown("**Table 3** (Appendix C.2): Moji test set (binary sentiment, dialect as the group), mean ± std "
                    "over 5 runs, in %. DTO = √((100 − accuracy)² + (100 − Fairness)²); recomputing it from the "
                    "rounded means agrees to within 0.01.")
        st.dataframe(ref.table3(), hide_index=True, width="stretch")
    with tabs[1]:
        st.markdown("**Table 1** (§7): Valence regression test set. Performance is Pearson r, Fairness = 1 − |r_M − "
                    "r_F| (in %). There is no DS row: downsampling leaves a regression bin empty (§8).")
        st.dataframe(ref.table1(), hide_index=True, width="stretch")
    with tabs[2]:
        st.markdown("**Table 4** (Appendix F): arousal regression; gaps are absolute differences between genders.")
        st.dataframe(ref.table4(), hide_index=True, width="stretch")
    with tabs[3]:
        st.markdown("**Table 2** (Appendix A.2): the Bios training set, 257,478 biographies over 28 professions. "
                    "Joint balance at α ≥ 1.25 clips the professor class to zero training rows; the Retraining "
                    "simulator's Bios-like data reproduce these cells at a smaller scale.")
        _ui.chart(figs.table2_figure(), width="stretch")
        st.dataframe(ref.table2(), hide_index=True, width="stretch")


_ui.guarded(page)
