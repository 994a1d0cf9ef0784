"""Evaluation reweighting: the loaded predictions scored as if the test cells (class × group) were distributed
differently — instant, no retraining (Han, Shen, Cohn, Baldwin and Frermann, *Systematic Evaluation of
Predictive Fairness*, AACL 2022, §3.2 and §4.2)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import streamlit as st

from fairviz.conditions import figures as figs
from fairviz.conditions.distributions import DEFAULT_ALPHAS
from fairviz.conditions.evaluation import Reweighting, reweight
from fairviz.conditions.metrics import Scores, confusion, evaluate, interval_text, rate_cells
from fairviz.core.counts import decisions
from fairviz.data import DataError
from fairviz.core.serialize import clean
from fairviz.core.wording import fmt
from app_pages import _ui

SECTION = "conditions_reweighting"
GRID_S = tuple(np.round(np.arange(0.1, 0.91, 0.1), 2).tolist())


@st.cache_data(show_spinner=False, max_entries=32, ttl=_ui.CACHE_TTL)
def cached_reweight(fingerprint: str, attribute: str, threshold: float, kind: str, values: tuple,
                    _y, _hat, _z, _groups) -> Reweighting:
    return reweight(_y, _hat, _z, kind, values, classes=("0", "1"), groups=_groups)


@st.cache_data(show_spinner="Bootstrapping within (class, group) cells…", max_entries=16, ttl=_ui.CACHE_TTL)
def cached_intervals(fingerprint: str, attribute: str, threshold: float, _y, _hat, _z, n_groups: int) -> Scores:
    return evaluate(_y, _hat, _z, 2, n_groups, resamples=1000, seed=0)


def page() -> None:
    ctx = _ui.context()
    pred = ctx.pred.rows()          # the engine's table expanded to rows (np.repeat): the cells' bootstrap needs rows
    st.title("Evaluation reweighting")
    st.caption("How would this model's accuracy and fairness read on a test set with other class and group "
               "proportions? Each (class, group) cell keeps its own predictions and gets a new weight — the "
               "data conditions of Han, Shen, Cohn, Baldwin and Frermann, *Systematic Evaluation of Predictive "
               "Fairness* (AACL 2022, §3.2): conditional balance (CB) balances the groups within each class, "
               "joint balance (JB) balances every cell, α = 0 is the data as they are, 1 balanced, 2 inverted.")
    st.info("**This is not retraining.** It shifts the *test* distribution of fixed predictions. The paper "
            "changes the *training* distribution and retrains; for that, open the **Retraining simulator**.")
    view = pred.groups(ctx.attribute)
    hat = decisions(pred.score, ctx.threshold).astype(int)
    y = pred.y.astype(int)
    c1, c2 = st.columns([1, 2])
    kind = c1.radio("Target distribution", ["cb", "jb", "grid"], key="rw_kind", format_func={
        "cb": "CB: groups balanced within each class", "jb": "JB: every cell balanced",
        "grid": "Direct: class ratio p_y and stereotyping s"}.get)
    if kind == "grid":
        if len(view.names) != 2:
            st.warning(f"The (p_y, s) setting needs exactly two groups; '{ctx.attribute}' has {len(view.names)}. "
                       "Pick a two-group attribute in the sidebar, or use CB / JB.")
            return
        p_y = c2.slider("p_y = P′(y = 1)", 0.1, 0.9, 0.5, 0.1, key="rw_py")
        values = tuple((p_y, s) for s in GRID_S)
    else:
        values = DEFAULT_ALPHAS
    try:
        res = cached_reweight(pred.fingerprint, ctx.attribute, ctx.threshold, kind, values, y, hat, view.codes,
                              tuple(view.names))
    except DataError as err:
        _ui.show_data_error(err, "These predictions cannot be reweighted")
        return
    ci = {}
    if pred.n <= _ui.LARGE_ROWS or st.toggle(
            "Bootstrap intervals", value=False, key="rw_intervals",
            help=f"1,000 resamples of the {pred.n:,} rows within each (class, group) cell: about 30 s per million rows."):
        ci = cached_intervals(pred.fingerprint, ctx.attribute, ctx.threshold, y, hat, view.codes, len(view.names)).ci
    else:
        st.caption(f"Intervals are off for {pred.n:,} rows (they resample every row); switch them on above.")
    summary(res, kind, ci)
    _ui.chart(figs.reweight_figure(res), width="stretch")
    cells_table(res, y, hat, view)
    rows = [{"condition": r.condition.label, "accuracy": r.scores.accuracy, "macro-F1": r.scores.macro_f1,
             "GAP(TPR)": r.scores.gap_tpr, "Fairness": r.scores.fairness, "DTO": r.scores.dto,
             "GAP(PPR)": r.scores.gap_ppr, "largest pairwise TPR gap": r.gap_tpr_pairwise,
             "cells clipped": int(r.condition.clipped.sum())} for r in res.rows]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={k: st.column_config.NumberColumn(format="%.3f") for k in rows[0]
                                if k not in ("condition", "cells clipped")})
    st.caption("GAP(FPR) is not shown: with two classes it equals GAP(TPR) (one class's FPR is one minus the other's "
               "TPR); it is in the JSON.")
    data = clean({**res.to_dict(), "original_ci": {k: v.to_list() for k, v in ci.items()}})
    st.session_state.setdefault(_ui.PAGE_JSON, {})[SECTION] = data
    st.download_button("This page's numbers (JSON)", json.dumps(data, indent=2).encode(), "reweighting.json",
                       "application/json", key="rw_json")


def summary(res: Reweighting, kind: str, ci: dict) -> None:
    o = res.original
    cols = st.columns(4)
    for col, (label, key) in zip(cols, (("Accuracy (as is)", "accuracy"), ("Fairness = 1 − GAP(TPR)", "fairness"),
                                        ("DTO to (1, 1)", "dto"), ("GAP(PPR)", "gap_ppr"))):
        col.metric(label, fmt(getattr(o, key)), help=f"95% CI {interval_text(ci.get(key))} (percentile bootstrap, "
                                                     "1,000 resamples within each (class, group) cell)")
    if len(res.groups) > 2:
        st.caption(f"With {len(res.groups)} groups the paper's GAP adds up every group's distance to the class's "
                   "overall TPR, so it can exceed 1 (and Fairness = 1 − GAP drop below 0); small groups make it "
                   "jumpy.")
    st.caption("95% intervals (bootstrap within cells): accuracy " + interval_text(ci.get("accuracy")) +
               ", Fairness " + interval_text(ci.get("fairness")) + ", DTO " + interval_text(ci.get("dto")) + ".")
    accs = [r.scores.accuracy for r in res.rows]
    ppr = [r.scores.gap_ppr for r in res.rows]
    text = (f"**Reading.** Over these conditions accuracy ranges from {fmt(min(accs))} to {fmt(max(accs))} and the "
            f"demographic-parity gap GAP(PPR) from {fmt(np.nanmin(ppr))} to {fmt(np.nanmax(ppr))}, ")
    if len(res.groups) == 2:
        text += f"while **GAP(TPR) stays at {fmt(o.gap_tpr)}** (it moves by {res.tpr_gap_range:.1e})."
    else:
        pair = [r.gap_tpr_pairwise for r in res.rows if r.condition.clipped.sum() == 0]
        text += (f"while the largest pairwise TPR gap stays at {fmt(pair[0] if pair else None)} wherever no group is "
                 f"clipped away. With {len(res.groups)} groups the paper's GAP(TPR) compares every group with the "
                 "class's overall TPR, a weighted mean, so it moves with the weights; where CB or JB clips a "
                 "group's cells to zero (α > 1), that group leaves the comparison.")
    st.markdown(text)
    with st.expander("Why GAP(TPR) — the paper's Fairness — cannot move here", expanded=True):
        st.markdown(
            "TPR_{c,g} = P(ŷ = c | y = c, z = g) is measured *inside* each (class, group) cell. Reweighting the "
            "cells changes how much each cell counts, not what happens inside it, so every TPR_{c,g} — and with two "
            "groups the gap |TPR_{c,1} − TPR_{c,2}| of every class — is unchanged. Accuracy is "
            "Σ P′(c, g)·TPR_{c,g}, so it moves; so do rates that mix cells, such as the predicted-positive rate of "
            "a group (demographic parity). With more than two groups the paper's GAP (each group's distance to the "
            "class's overall TPR) can move slightly, because the overall TPR is a weighted mean. To see how "
            "*training* under another distribution changes equal opportunity, retrain (the paper's §5–6).")


def cells_table(res: Reweighting, y, hat, view) -> None:
    T = confusion(y, hat, view.codes, 2, len(view.names))
    tpr = rate_cells(T, "tpr")[0]
    n = T.sum(2)
    options = [r.condition.label for r in res.rows]
    chosen = st.select_slider("Show the cell weights at", options, value=options[len(options) // 2], key="rw_show")
    row = res.rows[options.index(chosen)]
    table = []
    for c in range(2):
        for g, name in enumerate(view.names):
            table.append({"class y": c, "group": name, "rows": int(n[c, g]), "share now": n[c, g] / n.sum(),
                          f"share at {chosen}": row.condition.joint[c, g], "TPR in the cell": tpr[c, g]})
    st.dataframe(pd.DataFrame(table), hide_index=True, width="stretch",
                 column_config={k: st.column_config.NumberColumn(format="%.3f") for k in table[0]
                                if k not in ("class y", "group", "rows")})
    st.caption(f"At {chosen}: accuracy {fmt(row.scores.accuracy)} = Σ share × TPR (importance-weighted check: "
               f"{fmt(row.weighted_accuracy)}), Fairness {fmt(row.scores.fairness)}, DTO {fmt(row.scores.dto)}.")


_ui.guarded(page)
