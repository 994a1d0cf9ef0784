"""Group parity (seed 002 ch. 3): does each group get the benefit its labels warrant? OFI, DI and Table 3.2."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from fairviz.core.counts import ConfusionCounts
from fairviz.parity import figures as figs
from fairviz.core.markup import csv_bytes, md
from fairviz.core.wording import fmt, fmt_p
from fairviz.report.options import AuditParams
from fairviz.sample_size.analysis import MatchParams
from fairviz.parity.analysis import FOUR_FIFTHS, PAIR_METRICS, SCENARIOS, TABLE_32, ParityAudit, ParityParams, analyse, read_pair, scenario
from app_pages import _parity_common as common
from fairviz.report.parity import SECTION as PARITY
from app_pages import _ui
from app_pages._ui import CACHE_TTL

CELLS = ("tp", "fn", "fp", "tn")
MAX_PAIR_ROWS = 2000            # rows sent to the browser; more groups than ~63 give more pairs than this


@st.cache_data(show_spinner="Counting and comparing groups…", max_entries=32, ttl=CACHE_TTL)
def cached_parity(fingerprint: str, attribute: str, params: ParityParams, _pred) -> ParityAudit:
    return analyse(_pred, attribute, params)


TABS = ["Heatmaps", "Groups and confusion matrices", "All pairs", "Scenario builder"]
TAB_WIDGETS = {0: ("parity_metric", "parity_i", "parity_j"),
               3: ("scenario_preset", *(f"scenario_{side}_{cell}" for side in "ij" for cell in CELLS))}


def settings() -> tuple[str, bool, float, float]:
    with st.sidebar.expander("Parity settings", expanded=False):
        variant = st.radio("DI definition", ["def31", "cikm"], horizontal=False, format_func={
            "def31": "Definition 3.1: (P̂/n)_i ÷ (P̂/n)_j", "cikm": "Published Fig. 3.2: (P̂/P)_i ÷ (P̂/P)_j"}.get,
            help="The thesis defines DI on benefit rates; its published COMPAS heatmap divided by the actual "
                 "positives instead. Keep Definition 3.1 unless you are reproducing that figure.")
        convention = st.toggle("DI = 1 when neither group gets any benefit", value=False,
                               help="0/0 is undefined; the thesis sets it to 1 'by DI's philosophy' (Table 3.1 B).")
        tolerance = st.slider("OFI tolerance for 'no algorithmic bias'", 0.0, 0.10, 0.02, 0.005,
                              help="Not in the thesis, which gives no tolerance for OFI ≈ 0. The reading also "
                                   "tests OFI against sampling noise (normal two-sample test).")
        alpha = st.select_slider("Significance level α", [0.01, 0.05, 0.10], value=0.05)
    return variant, convention, tolerance, alpha


def page() -> None:
    ctx = _ui.context()
    pred = PARITY.given(ctx.pred)         # the engine's table (weighted counts) is read as is
    benefit = common.benefit_choice(pred)
    variant, convention, tolerance, alpha = settings()
    st.title("Group parity: Objective Fairness Index and Disparate Impact")
    st.caption("A group's **marginal benefit** 𝓑 is the share of it that got the benefit minus the share its labels "
               "say deserved it. **OFI(i, j) = 𝓑_i − 𝓑_j** is the model's own contribution to the disparity; "
               "**DI** compares raw benefit rates (the four-fifths rule). Read them together: OFI ≠ 0 is algorithmic "
               "bias; OFI ≈ 0 with DI ≠ 1 is a disparity outside the model (different base rates).")
    attribute = ctx.attribute
    params = ParityParams(threshold=ctx.threshold, benefit=benefit, di_variant=variant,
                          di_zero_convention=convention, ofi_tolerance=tolerance, alpha=alpha)
    audit = cached_parity(pred.fingerprint, attribute, params, pred)
    st.info(common.benefit_caption(pred, benefit, ctx.threshold))
    for warning in audit.warnings:
        st.warning(warning)

    # only the open tab runs (a click on another reruns the page from the caches)
    tabs = _ui.lazy_tabs(TABS, key="parity_tab", keep=TAB_WIDGETS)
    key = (pred.fingerprint, attribute, params)
    for tab, body in zip(tabs, (lambda: _heatmap_tab(audit, key), lambda: _groups_tab(audit),
                                lambda: _pairs_tab(audit), _scenario_tab)):
        if tab.open:
            with tab:
                body()
    _ui.section_json("parity", pred, audit, AuditParams(attribute=attribute, threshold=ctx.threshold, benefit=benefit,
                                                         match=MatchParams(alpha=alpha)))


def _heatmap_tab(audit: ParityAudit, key: tuple) -> None:
    names = list(audit.names)
    default_i, default_j = audit.most_disparate()
    common.keep_choice("parity_i", names, default_i)
    common.keep_choice("parity_j", names, default_j)
    c1, c2, c3 = st.columns([2, 2, 2])
    metric = c1.selectbox("Metric", list(PAIR_METRICS), format_func=lambda k: PAIR_METRICS[k].label,
                          key="parity_metric",
                          help="OFI and DI first; the rest are the other metrics of the thesis's Table 3.2.")
    group_i = c2.selectbox("Row group i", names, key="parity_i")
    group_j = c3.selectbox("Column group j", names, key="parity_j")
    matrix = audit.matrices[metric]
    _ui.chart(_ui.figure(("parity.heatmap", *key, metric, group_i, group_j),
                         lambda: figs.heatmap(matrix, highlight=(group_i, group_j))), width="stretch")
    info = PAIR_METRICS[metric]
    st.caption(f"**{info.label}** = {info.formula}. {info.about} Colour: purple favours the row group, orange the "
               "column group (TE, DCA, DCR and the PPV gap are coloured by their negated score so colours agree); "
               "grey cells are undefined — hover for why. The framed cell is the pair read below.")
    _cell_reading(audit, metric, group_i, group_j)
    _ui.chart(_ui.figure(("parity.benefit", *key, group_i, group_j),
                         lambda: figs.benefit_figure(audit, (group_i, group_j))), width="stretch")
    section = st.expander("The thesis's Figure 3.2 panels: OFI, DI, TE and PP side by side", key="parity_panels",
                          on_change="rerun")                   # built when opened
    if not section.open:
        return
    with section:
        panels = _ui.figure(("parity.panels", *key), lambda: figs.small_multiples(audit))
        for row in range(0, len(panels), 2):
            cols = st.columns(2)
            for col, fig in zip(cols, panels[row:row + 2]):
                _ui.chart_at(col, fig, width="stretch")


def _cell_reading(audit: ParityAudit, metric: str, i: str, j: str) -> None:
    if i == j:
        st.info("Pick two different groups to read a pair.")
        return
    reading = audit.reading(i, j)
    left, right = st.columns([3, 2])
    with left:
        _ui.verdict_box(reading.box, f"**{md(reading.headline)}.**")
        st.markdown(md(reading.text))
    with right:
        _pair_numbers(reading, metric)
    st.markdown("**Their confusion matrices** (rows: actual, columns: predicted; *benefit* = the chosen outcome)")
    cols = st.columns(2)
    for col, name, counts in ((cols[0], i, reading.counts_i), (cols[1], j, reading.counts_j)):
        col.markdown(f"*{md(name)}* (n = {counts.n:,}), marginal benefit 𝓑 = {(counts.fp - counts.fn) / counts.n:+.3f}")
        col.dataframe(_matrix_frame(counts), width="stretch")


def _pair_numbers(reading, metric: str) -> None:
    m = st.columns(3)
    m[0].metric("OFI (i − j)", fmt(reading.values["ofi"]), help=f"95% CI [{reading.test.ci[0]:+.3f}, "
                f"{reading.test.ci[1]:+.3f}], p {fmt_p(reading.test.p_value)}")
    m[1].metric("DI (i ÷ j)", fmt(reading.values["di"]),
                help=f"Four-fifths band [{FOUR_FIFTHS[0]}, {FOUR_FIFTHS[1]}]: {reading.di_rule}")
    if metric not in ("ofi", "di"):
        value = reading.values[metric]
        m[2].metric(f"{PAIR_METRICS[metric].label}", fmt(value))
        if value is None:
            st.caption(f"{PAIR_METRICS[metric].label} is undefined here: {md(reading.reasons.get(metric))}.")
    else:
        m[2].metric("DPPL (i − j)", fmt(reading.values["dppl"]))
    st.caption(f"OFI 95% CI [{reading.test.ci[0]:+.3f}, {reading.test.ci[1]:+.3f}] (normal two-sample test, "
               f"p {fmt_p(reading.test.p_value)}); four-fifths rule on DI: "
               + {"for i": "bias for i", "for j": "bias for j", "none": "no bias",
                  "undefined": "undefined"}[reading.di_rule] + ".")


def _matrix_frame(c: ConfusionCounts) -> pd.DataFrame:
    return pd.DataFrame({"predicted benefit": [c.tp, c.fp], "predicted no benefit": [c.fn, c.tn]},
                        index=["deserved (actual +)", "not deserved (actual −)"])


def _groups_tab(audit: ParityAudit) -> None:
    rows = []
    for g in audit.groups:
        c = g.counts
        rows.append({"group": g.name, "n": c.n, "TP": c.tp, "FN": c.fn, "FP": c.fp, "TN": c.tn,
                     "benefit b = P̂/n": g.benefit_rate, "warranted E[b] = P/n": g.expected_benefit,
                     "marginal benefit 𝓑": g.marginal_benefit, "TPR": c.tpr(), "FPR": c.fpr(), "PPV": c.ppv(),
                     "accuracy": c.accuracy()})
    frame = pd.DataFrame(rows)
    st.dataframe(frame, hide_index=True, width="stretch", column_config={
        c: st.column_config.NumberColumn(format="%.3f") for c in frame.columns if frame[c].dtype == float})
    st.caption("Counts are in the benefit orientation chosen in the sidebar (TP = deserved and got the benefit, "
               "FP = got it without deserving it, FN = deserved it and was denied). Empty rates are undefined "
               "(a zero denominator), not 0. 𝓑 > 0: the group gets more benefit than its labels warrant; "
               "𝓑 < 0: less.")
    st.download_button("Download the group table (CSV)", csv_bytes(frame), "parity_groups.csv",
                       "text/csv")


def _pairs_tab(audit: ParityAudit) -> None:
    total = len(audit.groups) * (len(audit.groups) - 1) // 2
    records = audit.pair_table(limit=MAX_PAIR_ROWS if total > MAX_PAIR_ROWS else None)
    rows = [{"i": r["group_i"], "j": r["group_j"], **{PAIR_METRICS[k].label: r[k] for k in ("ofi", "di", "dppl")},
             "p (OFI)": r["ofi_p_value"], "four-fifths": r["four_fifths"], "reading": r["parity_reading"],
             **{PAIR_METRICS[k].label: r[k] for k in TABLE_32 if k not in ("ofi", "di", "dppl")},
             "PPV gap": r["ppv_diff"]} for r in records]
    if total > MAX_PAIR_ROWS:
        st.info(f"{total:,} pairs: showing the {MAX_PAIR_ROWS:,} with the largest |OFI|.")
    frame = pd.DataFrame(rows)
    numeric = [c for c in frame.columns if c not in ("i", "j", "four-fifths", "reading")]
    st.dataframe(frame, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4f") for c in numeric})
    st.caption("One row per pair (i before j in group-size order); every signed metric is 'i minus j' (DI: i over "
               "j). Empty cells are undefined (hover the heatmap for why). Reading: algorithmic = |OFI| beyond the "
               "tolerance and beyond noise; possible = beyond the tolerance but within noise; small = real but "
               "within the tolerance; systemic = OFI ≈ 0 while DI is outside the four-fifths band; none.")
    st.download_button("Download all pairs (CSV)", csv_bytes(frame), "parity_pairs.csv", "text/csv")


# ----------------------------------------------------------------------------------------------- scenario builder

def _load_scenario() -> None:
    preset = SCENARIOS[st.session_state["scenario_preset"]]
    for side, counts in (("i", preset.group_i), ("j", preset.group_j)):
        for cell in CELLS:
            st.session_state[f"scenario_{side}_{cell}"] = int(getattr(counts, cell))


def _scenario_tab() -> None:
    st.markdown("Edit two confusion matrices and watch OFI, DI, TE and DCA respond. The presets are the thesis's "
                "Table 3.1 (Ricci v. DeStefano) and Table 3.3 (TE and DCA ignore correct predictions; OFI does not).")
    if "scenario_i_tp" not in st.session_state:
        st.session_state["scenario_preset"] = "A"
        _load_scenario()
    preset = st.selectbox("Start from", list(SCENARIOS), format_func=lambda k: SCENARIOS[k].title,
                          key="scenario_preset", on_change=_load_scenario)
    cols = st.columns(2)
    counts = {}
    for col, side in zip(cols, ("i", "j")):
        with col:
            st.markdown(f"**Group {side}**")
            inner = st.columns(4)
            values = [inner[k].number_input(cell.upper(), min_value=0, max_value=1_000_000, step=1,
                                            key=f"scenario_{side}_{cell}") for k, cell in enumerate(CELLS)]
            counts[side] = ConfusionCounts(*map(int, values))
    if counts["i"].n == 0 or counts["j"].n == 0:
        st.error("Each group needs at least one person (a non-zero count).")
        return
    result = scenario(counts["i"], counts["j"])
    m = st.columns(5)
    m[0].metric("OFI = 𝓑_i − 𝓑_j", fmt(result.ofi))
    di_text = fmt(result.di) if result.di is not None else (
        "undefined (= 1 by convention)" if result.di_convention == 1 else "undefined")
    m[1].metric("DI = b_i ÷ b_j", di_text)
    m[2].metric("TE", fmt(result.te))
    m[3].metric("DCA", fmt(result.dca))
    m[4].metric("DPPL", fmt(result.dppl))
    for key in ("di", "te", "dca"):
        if result.reasons.get(key):
            st.caption(f"{PAIR_METRICS[key].label} undefined: {result.reasons[key]}.")
    reading = read_pair("group i", "group j", counts["i"], counts["j"])
    st.markdown(f"**Reading:** {reading.headline}. {reading.text}")
    st.caption(f"The thesis prints for this preset: {SCENARIOS[preset].thesis}. (Edit any count to leave the preset.)")


_ui.guarded(page)
