"""Residual Distribution Fairness (seed 000): where, and for whom, the model's errors sit."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from fairviz.residuals import figures as figs
from fairviz.data.engine import Engine
from fairviz.core.markup import csv_bytes, md
from fairviz.core.wording import fmt, fmt_interval, fmt_p, significance_words
from fairviz.residuals.knees import KneeParams
from fairviz.report.options import AuditParams
from fairviz.report.residuals import SECTION as RESIDUALS
from fairviz.report.residuals import dstar_rows
from fairviz.residuals.analysis import RDFParams, ResidualAudit, analyse, threshold_check
from fairviz.residuals.threshold_invariance import GAP_METRICS, METRIC_NAMES, RDF_METRICS, invariance_figure, threshold_invariance
from app_pages import _ui, _upload
from app_pages._ui import CACHE_TTL


@st.cache_data(show_spinner=False, max_entries=64, ttl=CACHE_TTL)
def cached_threshold(fingerprint: str, attribute: str, threshold: float, _pred):
    return threshold_check(_pred, attribute, threshold)


@st.cache_resource(show_spinner=False, max_entries=4, ttl=CACHE_TTL)
def cached_hover(fingerprint: str, _pred) -> tuple[np.ndarray, np.ndarray | None]:
    """Hover labels and texts, one per row: a million Python strings cost ~0.5 s, so once per data set (shared,
    never mutated: cache_resource does not copy them)."""
    return _pred.row_labels(), _pred.texts()


TABS = ["Pair metrics", "Groups", "Threshold view (Thm 6.1)", "Knee error concentration", "Diagnostic set D*"]


def settings() -> tuple[RDFParams, bool, int]:
    with st.sidebar.expander("Residual settings", expanded=False):
        eps = st.slider("Knee region half-width ε (percentile points)", 0.02, 0.10, 0.05, 0.01,
                        help="Rows within ε of a knee form the diagnostic set D*. The paper uses 0.05; "
                             "0.02 is unstable, 0.10 dilutes the signal.")
        mode = st.radio("Region measured in", ["percentile", "residual"], horizontal=True,
                        help="Percentile: |rank − knee percentile| ≤ ε (§7.1, default). "
                             "Residual: |D − knee residual| < ε (Algorithm 1).")
        iterations = st.select_slider("LOWESS robustness iterations", [0, 1, 2, 3], value=3)
        sensitivity = st.slider("Kneedle sensitivity S", 0.5, 3.0, 1.0, 0.25)
        resamples = st.select_slider("Bootstrap / permutation resamples", [200, 500, 1000, 2000], value=1000)
        knee_resamples = st.select_slider("Resamples for F_h/F_v intervals (knees re-detected)",
                                          [0, 100, 200, 500], value=200)
        shuffle = st.toggle("Random groups (null control)", value=False,
                            help="Permute the group labels (sizes kept) and recompute everything: "
                                 "no real disparity should remain.")
        seed = st.number_input("Seed", 0, 10_000, 0)
    params = RDFParams(region_eps=eps, region_mode=mode, resamples=resamples, knee_resamples=knee_resamples,
                       seed=int(seed), knees=KneeParams(iterations=iterations, sensitivity=sensitivity))
    return params, shuffle, int(seed)


def page() -> None:
    ctx = _ui.context()
    params, shuffle, seed = settings()
    # the engine's table (an upload without row-level columns) is read as the audit's residual section reads it:
    # expanded to one entry per row where the analysis needs rows, as is where it reads the counts
    data = RESIDUALS.given(ctx.pred)
    pred = data.with_shuffled_groups(seed) if shuffle else data
    st.title("Residual distribution fairness")
    st.caption("Each curve sorts one group's residuals D = score − label from most under-predicted (left) to most "
               "over-predicted (right). Matching curves mean the model errs alike for every group; knees (◆) mark "
               "where a group's errors change regime.")
    if not _ui.intervals_wanted(pred, "rdf_intervals", "about 4 s per million rows on two cores"):
        params = replace(params, resamples=0, knee_resamples=0)
    if shuffle:
        st.info(f"Null control: group labels are randomly permuted (seed {seed}). Differences below are noise.")

    audit: ResidualAudit = _ui.cached_with_progress(
        "residuals", (pred.fingerprint, ctx.attribute, params),
        lambda progress: analyse(pred, ctx.attribute, params, progress=progress), "Analysing residuals")
    if audit.warnings:
        st.warning("\n".join(f"- {w}" for w in audit.warnings))

    names = [g.name for g in audit.groups]
    c1, c2 = st.columns([3, 1])
    shown = c2.multiselect("Groups shown", names, default=names[: min(len(names), 6)])
    view = c2.radio("View", ["All rows", "Y = 0 only", "Y = 1 only", "Both outcome panels"])
    # weighted data: curve points index rows of the table's expansion, which has no id or text column: the hover
    # then names the row number only (no million label strings are made)
    hover, texts = cached_hover(pred.fingerprint, pred) if pred.weight is None else (None, None)
    key = (pred.fingerprint, ctx.attribute, params, tuple(shown or names))
    with c1:
        if view == "Both outcome panels":
            _ui.chart(_ui.figure(("rdf.panels", *key), lambda: figs.outcome_panels(audit, shown or names, hover)),
                      width="stretch")
        else:
            outcome = {"All rows": "all", "Y = 0 only": "y0", "Y = 1 only": "y1"}[view]
            _ui.chart(_ui.figure(("rdf.sorted", *key, outcome),
                                 lambda: figs.sorted_residual_plot(audit, shown or names, outcome, hover, texts)),
                      width="stretch")
    c2.markdown(_reading(audit))

    # only the open tab runs (a click on another reruns the page from the caches): the threshold view, the
    # concentration figure and D* (rows of the table's expansion) cost nothing until they are looked at
    tabs = _ui.lazy_tabs(TABS, key="rdf_tab")
    for tab, body in zip(tabs, (lambda: _pairs_tab(audit), lambda: _groups_tab(audit),
                                lambda: _threshold_tab(pred, ctx), lambda: _concentration_tab(audit, key),
                                lambda: _diagnostic_tab(audit, pred, shuffle))):
        if tab.open:
            with tab:
                body()
    _ui.section_json("residuals", pred, audit, AuditParams(attribute=ctx.attribute, threshold=ctx.threshold, rdf=params))
    _invariance_section(pred, ctx, params, audit)


def _reading(audit: ResidualAudit) -> str:
    groups = sorted(audit.groups, key=lambda g: g.median_residual)
    low, high = groups[0], groups[-1]
    worst = max(audit.pairs, key=lambda p: p.f_dist)
    return (f"**Reading.** Typical error (median residual) runs from {fmt(low.median_residual)} for *{low.name}* "
            f"to {fmt(high.median_residual)} for *{high.name}*. The most different pair is *{worst.group_i}* vs "
            f"*{worst.group_j}*: F_dist = {fmt(worst.f_dist)} (area between their curves), "
            f"{significance_words(worst.p_dist)}.")


def _pairs_tab(audit: ResidualAudit) -> None:
    rows = []
    for p in audit.pairs:
        rows.append({
            "pair (i vs j)": f"{p.group_i} vs {p.group_j}",
            "F_pattern": p.f_pattern, "F_pattern CI": fmt_interval(p.ci.get("f_pattern")),
            "p (medians)": fmt_p(p.p_median),
            "F_dist": p.f_dist, "F_dist CI": fmt_interval(p.ci.get("f_dist")), "p (F_dist)": fmt_p(p.p_dist),
            "F_h": p.f_h, "F_h CI": fmt_interval(p.ci.get("f_h")), "F_v": p.f_v, "F_v CI": fmt_interval(p.ci.get("f_v")),
            "F_pattern Y=0": p.f_pattern_y0, "F_pattern Y=1": p.f_pattern_y1,
            "F_dist Y=0": p.f_dist_y0, "F_dist Y=1": p.f_dist_y1, "F_h_abs": p.f_h_abs, "F_v_abs": p.f_v_abs,
        })
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in
                                ["F_pattern", "F_dist", "F_h", "F_v", "F_pattern Y=0", "F_pattern Y=1",
                                 "F_dist Y=0", "F_dist Y=1", "F_h_abs", "F_v_abs"]})
    st.caption(f"F_pattern = 1 − |median_i − median_j|/2 (1 = equal typical error). F_dist = Wasserstein-1 distance "
               f"between the residual distributions (0 = identical). F_h/F_v compare knee positions/heights, normalised "
               f"by the pooled curve's knees (unstable when those are near 0: see F_h_abs/F_v_abs). Intervals: "
               f"{audit.params.resamples} bootstrap resamples within each group ({audit.params.knee_resamples} for F_h/F_v, "
               f"knees re-detected); p-values: {audit.params.resamples} permutations of group labels. "
               "F_dist Y=0 and Y=1 both 0 ⇔ equalized odds at every threshold (Theorem A.3); equal medians alone do not "
               "imply it.")
    for p in audit.pairs:
        for w in p.warnings:
            st.caption(f"⚠ {md(p.group_i)} vs {md(p.group_j)}: {md(w)}")


def _groups_tab(audit: ResidualAudit) -> None:
    rows = [{"group": g.name, "n": g.n, "base rate": g.base_rate, "mean score": g.mean_score,
             "mean residual": g.mean_residual, "median residual": g.median_residual,
             "median residual Y=0": g.median_residual_y0, "median residual Y=1": g.median_residual_y1,
             "ECE": g.ece, "calibration": g.ece_regime,
             "left knee": "—" if not g.left_knee else f"{100 * g.left_knee.percentile:.1f}% / {g.left_knee.residual:.3f}",
             "right knee": "—" if not g.right_knee else f"{100 * g.right_knee.percentile:.1f}% / {g.right_knee.residual:.3f}"}
            for g in audit.groups]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in
                                ["base rate", "mean score", "mean residual", "median residual",
                                 "median residual Y=0", "median residual Y=1", "ECE"]})
    st.markdown("**Mean decomposition (Theorem A.1):** the gap in mean residual equals the gap in mean score minus "
                "the gap in base rate, exactly.")
    st.dataframe(pd.DataFrame([{"pair": f"{p.group_i} vs {p.group_j}", **p.mean_decomposition} for p in audit.pairs]),
                 hide_index=True, width="stretch")
    st.caption(f"Knees (§7.1): each group's sorted residuals are smoothed by LOWESS (span {audit.params.knees.frac:g}, "
               f"{audit.params.knees.iterations} robustness iterations) and read by Kneedle (S = "
               f"{audit.params.knees.sensitivity:g}) over every row of the group; above "
               f"{audit.params.knees.max_points:,} rows, over that many evenly spaced percentiles (at 40,000 rows this moved "
               "the knees by 0.00003 in our tests).")
    st.caption("Base rates matter: a perfectly calibrated model on groups with different base rates has equal mean "
               "residuals, yet its residual distributions (and medians) can still differ. Read F_dist and F_pattern "
               "next to the base rates.")


def _threshold_tab(pred, ctx: _ui.Context) -> None:
    check = cached_threshold(pred.fingerprint, ctx.attribute, ctx.threshold, pred)
    _ui.chart(_ui.figure(("rdf.threshold", pred.fingerprint, ctx.attribute, ctx.threshold),
                         lambda: figs.threshold_figure(check)), width="stretch")
    rows = []
    for gap in check.gaps:
        rows.append({"pair": f"{gap['group_i']} vs {gap['group_j']}",
                     "DP gap counted": gap["dp_diff_direct"], "DP gap from residuals": gap["dp_diff_residual"],
                     "TPR gap counted": gap["eo_tpr_diff_direct"], "TPR gap from residuals": gap["eo_tpr_diff_residual"],
                     "FPR gap counted": gap["eo_fpr_diff_direct"], "FPR gap from residuals": gap["eo_fpr_diff_residual"]})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4f") for c in rows[0] if c != "pair"})
    st.caption("Theorem 6.1: FPR(τ) = P(D ≥ τ | Y=0), TPR(τ) = P(D ≥ τ−1 | Y=1), and the positive rate is their "
               "base-rate-weighted mix. The residual CDFs therefore contain every threshold's DP and EO gaps; move τ "
               "in the sidebar to see both columns agree.")


def _concentration_tab(audit: ResidualAudit, key: tuple) -> None:
    c = audit.concentration
    m = st.columns(4)
    m[0].metric("Error ratio knee / elsewhere", f"{fmt(c.ratio, 2)}×", help=f"95% CI {fmt_interval(c.ratio_ci, 2)}")
    m[1].metric("Mann–Whitney p (two-sided)", fmt_p(c.mann_whitney.p_two_sided))
    m[2].metric("ECE (15 bins)", fmt(c.ece), help=f"95% CI {fmt_interval(c.ece_ci)}")
    m[3].metric("Calibration regime", c.regime)
    kind = "good" if c.verdict == "supported" else "warn"
    _ui.verdict_box(kind, f"**Knees {'are' if c.verdict == 'supported' else 'are not'} diagnostic here "
                          f"({c.verdict}{', borderline' if c.borderline else ''}).** {c.explanation}")
    _ui.chart(_ui.figure(("rdf.concentration", *key[:3]), lambda: figs.concentration_figure(audit)), width="stretch")
    st.caption(f"Ratio CI {fmt_interval(c.ratio_ci, 2)} ({audit.params.resamples} row resamples, regions fixed). "
               "Rule of the paper (§8.2): ECE < 0.15 → ratio > 1.5 expected; ECE ≥ 0.15 → 0.8–1.2 expected. The verdict "
               "reads the unrounded ratio; 'borderline' marks a ratio that rounds to a boundary at one decimal (the "
               "precision of the paper's Table 2), where the printed table could read either way. Caveat: knee "
               "regions near the ends include the tails, which hold the largest errors, so part of any ratio is "
               "mechanical; compare with the random-groups null control in the sidebar.")


def _diagnostic_tab(audit: ResidualAudit, analysed, shuffled: bool) -> None:
    pred = analysed.rows()                         # D* is per row (weighted data: rows of the table's expansion)
    mask = audit.in_knee_region
    st.markdown(f"**{mask.sum():,} rows** ({mask.mean():.1%}) lie within ε = {audit.params.region_eps} "
                f"({audit.params.region_mode} mode) of their group's knees. These are the examples to read and probe "
                "first: where the model's behaviour changes for each group.")
    st.dataframe(_diagnostic_table(audit, pred, limit=2000), hide_index=True, width="stretch")
    # built on click, not on every rerun: D* of a million rows is a large CSV
    st.download_button("Download D* as CSV", lambda: csv_bytes(_diagnostic_table(audit, pred)),
                       "diagnostic_set.csv", "text/csv")
    if pred.frame.shape[1] == 0:
        _file_rows_download(audit, analysed, shuffled)


def _file_rows_download(audit: ResidualAudit, analysed, shuffled: bool) -> None:
    """D* with every column of the uploaded file for data reduced by the engine: one filtered query on the file."""
    found = None if shuffled else _upload.reduced_source(analysed.fingerprint)
    if found is None:
        st.caption("This upload was reduced to counts per group, label and score, so D* lists those columns only"
                   + (" while the groups are shuffled (null control)." if shuffled else
                      "; to see each row's other columns (text, id, features), upload the file again or map them on "
                      "the Home page (the file is then read row by row)."))
        return
    raw, stats = found

    def file_rows() -> bytes:
        engine = Engine("duckdb")
        try:
            return csv_bytes(dstar_rows(engine, raw, stats, analysed, audit))
        finally:
            engine.close()

    st.download_button("Download D* with every column of the file", file_rows, "diagnostic_set_rows.csv", "text/csv",
                       help="The uploaded file's own rows in D* (ids, texts, features and all), fetched by one "
                            "query on the file: the audit reads counts, this reads only these rows.")


def _diagnostic_table(audit: ResidualAudit, pred, limit: int | None = None) -> pd.DataFrame:
    rows = np.flatnonzero(audit.in_knee_region)[:limit]
    view = pred.groups(audit.attribute)
    added = {"residual D": (pred.score - pred.y)[rows], "nearest knee": audit.nearest_knee[rows],
             f"{audit.attribute} (analysed)": [view.names[c] for c in view.codes[rows]]}
    if pred.frame.shape[1]:
        columns = pred.frame.iloc[rows].reset_index(drop=True)
    else:                   # rows of the engine's table: its mapped columns are all there is (label as Y = 0/1)
        columns = pd.DataFrame({pred.mapping.label: pred.y[rows], pred.mapping.score: pred.score[rows],
                                **{g: np.asarray(pred.groups(g).names, dtype=object)[pred.groups(g).codes[rows]]
                                   for g in pred.mapping.groups}})
    return pd.concat([pd.DataFrame(added), columns], axis=1)


# ----------------------------------------------------------------------------------------------- threshold invariance

@st.cache_data(show_spinner="Sweeping thresholds…", max_entries=32, ttl=_ui.CACHE_TTL)
def cached_invariance(fingerprint: str, attribute: str, params: RDFParams, _pred, _audit):
    return threshold_invariance(_pred, attribute, knees=params.knees, audit=_audit)


def _invariance_section(pred, ctx: _ui.Context, params: RDFParams, audit: ResidualAudit) -> None:
    """App. D.1 / Table 5: CV of each metric over τ = 0.1…0.9 (RDF metrics 0% by construction)."""
    section = st.expander("Threshold invariance across τ = 0.1…0.9 (App. D.1, Table 5)", expanded=False,
                          key="rdf_invariance", on_change="rerun")      # computed when opened
    if not section.open:
        return
    with section:
        result = cached_invariance(pred.fingerprint, ctx.attribute, params, pred, audit)
        labels = [f"{p.group_i} vs {p.group_j}" for p in result.pairs]
        chosen = st.selectbox("Pair", labels, key="invariance_pair") if len(labels) > 1 else labels[0]
        pair = result.pairs[labels.index(chosen)]
        _ui.chart(_ui.figure(("rdf.invariance", pred.fingerprint, ctx.attribute, params, chosen),
                             lambda: invariance_figure(result, pair)), width="stretch")
        rows = [{"pair": f"{p.group_i} vs {p.group_j}",
                 **{METRIC_NAMES[m]: ("undefined" if p.cv[m] is None else f"{p.cv[m]:.2f}%")
                    for m in RDF_METRICS + GAP_METRICS}} for p in result.pairs]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
        st.caption(result.reading() + " CV% = 100 · std (population) / |mean| over the nine thresholds; gaps are "
                   "absolute (|i − j|) and ratios min/max. A CV is 'undefined' where a rate is undefined at some τ "
                   "or the mean is 0.")
        _ui.section_json("threshold_invariance", pred, result, AuditParams(attribute=ctx.attribute,
                                                                             threshold=ctx.threshold, rdf=params))


_ui.guarded(page)
