"""Calibration and predictive bias (seed 001): do the scores mean the same thing for every group?"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from fairviz.calibration import figures as figs
from fairviz.calibration.analysis import analyse
from fairviz.calibration.feature_residuals import residual_model, residuals_by_feature
from fairviz.calibration.readings import in_the_large_words, slope_words
from fairviz.calibration.recalibration import METHODS, RecalParams, recalibrate, recalibrated_frame
from fairviz.calibration.results import OVERALL, CalibrationAudit, CalibrationParams
from fairviz.data import DataError
from fairviz.core.markup import csv_bytes, md
from fairviz.core.wording import fmt, fmt_interval, fmt_p, significance_words
from fairviz.report.calibration import SECTION as CALIBRATION
from fairviz.report.options import AuditParams
from app_pages import _ui, _upload
from app_pages._ui import CACHE_TTL

NUM3 = st.column_config.NumberColumn(format="%.3f")
NUM4 = st.column_config.NumberColumn(format="%.4f")


@st.cache_data(show_spinner="Analysing calibration…", max_entries=16, ttl=CACHE_TTL)
def cached_analysis(fingerprint: str, attribute: str, params: CalibrationParams, _pred) -> CalibrationAudit:
    # No progress bar inside: st.cache_data replays element calls on a cache hit, and a bar drawn outside the
    # function cannot be replayed (CacheReplayClosureError on the next rerun). The spinner covers the wait.
    return analyse(_pred, attribute, params)


@st.cache_data(show_spinner="Recalibrating…", max_entries=16, ttl=CACHE_TTL)
def cached_recalibration(fingerprint: str, attribute: str, params: RecalParams, _pred):
    return recalibrate(_pred, attribute, params)


@st.cache_data(show_spinner=False, max_entries=32, ttl=CACHE_TTL)
def cached_feature(fingerprint: str, attribute: str, feature: str, n_bins: int, _pred):
    return residuals_by_feature(_pred, attribute, feature, n_bins)


@st.cache_data(show_spinner="Fitting residuals on the features…", max_entries=16, ttl=CACHE_TTL)
def cached_model(fingerprint: str, features: tuple[str, ...], seed: int, _pred):
    return residual_model(_pred, list(features), seed=seed)


TABS = ["Reliability diagram", "Calibration tests", "Calibration error", "Recalibration", "Residuals vs features",
        "Subgroup performance"]
TAB_WIDGETS = {0: ("cal_strategy", "cal_layout", "cal_rel_groups", "cal_curve", "cal_zoom", "cal_table_group"),
               3: ("cal_split", "cal_fraction", "cal_split_column", "cal_split_value", "cal_methods", "cal_per_group",
                   "cal_recal_show", "cal_recal_groups", "cal_recal_metric"),
               4: ("cal_feature", "cal_feature_bins", "cal_feature_groups", "cal_model_features", "cal_model_run"),
               5: ("cal_perf_metric",)}


def settings() -> CalibrationParams:
    with st.sidebar.expander("Calibration settings", expanded=False):
        n_bins = st.slider("Reliability bins", 5, 20, 10, key="cal_bins",
                           help="The lecture uses 10 equal-width bins. More bins: finer but noisier.")
        knots = st.select_slider("Spline knots (smooth curve, non-linear test)", [3, 4, 5, 6, 7], value=4,
                                 key="cal_knots", help="Knots of the restricted cubic spline of logit(p̂).")
        resamples = st.select_slider("Bootstrap resamples", [0, 200, 500, 1000, 2000], value=1000, key="cal_resamples",
                                     help="For the intervals of ECE, smooth ECE, their gaps and AUROC/log-loss/Brier. "
                                          "0 skips them (fastest).")
        min_events = st.number_input("Rows of each outcome a group needs for a test", 5, 100, 10, key="cal_min_events")
        seed = st.number_input("Seed", 0, 10_000, 0, key="cal_seed")
    return CalibrationParams(n_bins=n_bins, spline_knots=knots, resamples=resamples, min_events=int(min_events),
                             seed=int(seed))


def page() -> None:
    ctx = _ui.context()
    params = settings()
    pred = CALIBRATION.given(ctx.pred)      # the engine's table as is where the section reads counts, else rows
    st.title("Calibration")
    st.caption("A score is calibrated when, among rows scored p̂, a share p̂ turn out positive. Calibration *by group* "
               "asks whether a score of 0.3 means the same risk for every group. Bias conditional on the score "
               "(reliability, calibration tests) and conditional on features (residuals) are both shown.")
    if not _ui.intervals_wanted(pred, "cal_intervals", "about 2 s per million rows on two cores"):
        params = replace(params, resamples=0)
    audit = cached_analysis(pred.fingerprint, ctx.attribute, params, pred)
    for note in audit.notes:
        st.warning(note)
    _headline(audit)
    # only the open tab runs (a click on another reruns the page from the caches): recalibration, which fits on
    # rows of the table's expansion, costs nothing until it is looked at
    tabs = _ui.lazy_tabs(TABS, key="cal_tab", keep=TAB_WIDGETS)
    key = (pred.fingerprint, ctx.attribute, params)
    bodies = (lambda: _reliability_tab(audit, key), lambda: _tests_tab(audit, key), lambda: _errors_tab(audit, key),
              lambda: _recalibration_tab(ctx.pred.rows(), ctx),    # a random split of rows: the table expanded
              lambda: _residuals_tab(ctx.pred, ctx), lambda: _performance_tab(audit, key))
    for tab, body in zip(tabs, bodies):
        if tab.open:
            with tab:
                body()
    _ui.section_json("calibration", pred, audit, AuditParams(attribute=ctx.attribute, calibration=params))


def _headline(audit: CalibrationAudit) -> None:
    tested = [g for g in audit.groups if g.linear.ok]
    cols = st.columns(4)
    worst = max(audit.groups, key=lambda g: g.smooth_ece)
    best = min(audit.groups, key=lambda g: g.smooth_ece)
    cols[0].metric("Smooth ECE, all rows", fmt(audit.overall.smooth_ece), help=f"95% CI {fmt_interval(audit.overall.smooth_ece_ci)}")
    cols[1].metric(f"Worst group: {worst.name}", fmt(worst.smooth_ece), help=f"95% CI {fmt_interval(worst.smooth_ece_ci)}")
    cols[2].metric(f"Best group: {best.name}", fmt(best.smooth_ece), help=f"95% CI {fmt_interval(best.smooth_ece_ci)}")
    diff = audit.difference
    p_group = diff.p_value
    cols[3].metric("Calibration differs by group? p", fmt_p(p_group) if diff.linear else "—",
                   help="The smaller p of two likelihood-ratio tests (group-specific intercept and slope; group-specific "
                        "calibration-in-the-large), Bonferroni-corrected for the two.")
    flagged = [g.name for g in tested if g.joint_p_adjusted < audit.params.alpha]
    if diff.linear is None:
        _ui.verdict_box("info", f"**Groups cannot be compared:** {md(diff.status)}.")
        return
    tests = (f"intercept and slope: χ²({diff.linear.df}) = {diff.linear.statistic:.1f}, p {fmt_p(diff.linear.p)}; "
             f"average level: χ²({diff.in_the_large.df}) = {diff.in_the_large.statistic:.1f}, "
             f"p {fmt_p(diff.in_the_large.p)}")
    if p_group < audit.params.alpha:
        _ui.verdict_box("bad", f"**Calibration differs between groups** ({tests}): the same score does not mean the "
                               f"same risk for everyone. Miscalibrated on their own after Benjamini–Hochberg: "
                               f"{', '.join(flagged) or 'none'}.")
    else:
        _ui.verdict_box("good", f"**No evidence that calibration differs between groups** ({tests}). "
                                f"Miscalibrated on their own after Benjamini–Hochberg: {', '.join(flagged) or 'none'}.")


def _group_choice(audit: CalibrationAudit, key: str) -> list[str]:
    """Default: up to four groups large enough to test (tiny groups' wide intervals swamp a shared plot)."""
    names = [g.name for g in audit.groups]
    testable = [g.name for g in audit.groups if g.linear.ok] or names
    default = testable[:4] + [OVERALL]
    return st.multiselect("Groups shown", [*names, OVERALL], default=default, key=key) or default


def _reliability_tab(audit: CalibrationAudit, ident: tuple) -> None:
    c1, c2 = st.columns([3, 1])
    with c2:
        strategy = st.radio("Bins", ["equal width", "equal count"], horizontal=True, key="cal_strategy",
                            help="Equal count (quantile) bins put the same number of rows in every bin of a group.")
        layout = st.radio("Groups", ["overlaid", "side by side"], horizontal=True, key="cal_layout")
        shown = _group_choice(audit, "cal_rel_groups")
        show_curve = st.checkbox("Smoothed curve with 95% band", value=True, key="cal_curve",
                                 help="Logistic regression on a restricted cubic spline of logit(p̂).")
        zoom = st.checkbox("Fit the axes to the scores", value=_low_scores(audit), key="cal_zoom")
    mode = "facet" if layout == "side by side" else "overlay"
    cache_key = ("cal.reliability", *ident, tuple(shown), strategy, mode, show_curve, zoom)
    key = "uniform" if strategy == "equal width" else "quantile"
    with c1:
        _ui.chart(_ui.figure(cache_key, lambda: figs.reliability_figure(audit, shown, key, mode, show_curve, True, zoom)),
                  width="stretch")
    c2.markdown(_reliability_reading(audit, shown))
    st.markdown("**Binning table** (the lecture's §4.2.2): observed rate with the equal-tailed 95% interval of "
                "Beta(n₁+1, n−n₁+1); `post_mean` = (n₁+1)/(n+2); `wald_moe` = 1.96·√(p(1−p)/n).")
    names = [g.name for g in audit.all_groups]
    chosen = st.selectbox("Table for", names, index=len(names) - 1, key="cal_table_group")
    table = _bin_frame(audit, key, [chosen])
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={c: NUM3 for c in ["mean_pred", "observed", "post_mean", "ci_lower", "ci_upper", "wald_moe"]})
    everything = _bin_frame(audit, key, names)
    st.download_button("Download all groups' bins as CSV", csv_bytes(everything),
                       f"reliability_{key}.csv", "text/csv", key="cal_bins_download")


def _low_scores(audit: CalibrationAudit) -> bool:
    table = audit.overall.reliability["uniform"]
    top = table.upper[table.nonempty].max() if table.nonempty.any() else 1.0
    return bool(top <= 0.6)


def _bin_frame(audit: CalibrationAudit, strategy: str, names: list[str]) -> pd.DataFrame:
    frames = []
    for name in names:
        t = audit.group(name).reliability[strategy]
        frames.append(pd.DataFrame({"group": name, "bin": np.arange(1, t.n.size + 1), "lower": t.lower, "upper": t.upper,
                                    "n": t.n, "n_pos": t.n_pos, "mean_pred": t.mean_pred, "observed": t.observed,
                                    "post_mean": t.post_mean, "ci_lower": t.ci_low, "ci_upper": t.ci_high,
                                    "wald_moe": t.wald_moe}))
    return pd.concat(frames, ignore_index=True)


def _reliability_reading(audit: CalibrationAudit, shown: list[str]) -> str:
    lines = ["**Reading.** Points on the dotted diagonal are calibrated; above it the model under-predicts "
             "(more positives than scored), below it over-predicts. Bars: a 95% interval for the observed rate."]
    for name in shown:
        g = audit.group(name)
        if g.linear.ok:
            lines.append(f"- *{name}*: {slope_words(g.linear)}; {in_the_large_words(g.linear)}.")
        else:
            lines.append(f"- *{name}*: {g.linear.status}.")
    return "\n".join(lines)


def _tests_tab(audit: CalibrationAudit, key: tuple) -> None:
    _ui.chart(_ui.figure(("cal.coefficients", *key), lambda: figs.coefficient_figure(audit)), width="stretch")
    rows = []
    for g in audit.all_groups:
        lin, spl = g.linear, g.spline
        rows.append({
            "group": g.name, "n": g.n, "positives": g.n_pos,
            "β₀ intercept": lin.intercept.estimate if lin.ok else None,
            "SE β₀": lin.intercept.se if lin.ok else None, "p β₀": fmt_p(lin.intercept.p) if lin.ok else "—",
            "β₁ slope": lin.slope.estimate if lin.ok else None, "SE β₁": lin.slope.se if lin.ok else None,
            "p β₁": fmt_p(lin.slope.p) if lin.ok else "—",
            "calibration slope 1+β₁": lin.calibration_slope if lin.ok else None,
            "LR χ²(2)": lin.joint.statistic if lin.ok else None, "p (β₀=β₁=0)": fmt_p(lin.joint.p) if lin.ok else "—",
            "p BH": fmt_p(g.joint_p_adjusted) if g.name != OVERALL and lin.ok else "—",
            "p non-linear": fmt_p(spl.vs_linear.p) if spl.ok and spl.vs_linear else "—",
            "p non-linear BH": fmt_p(g.nonlinear_p_adjusted) if g.name != OVERALL and spl.ok and spl.vs_linear else "—",
            "status": lin.status or "tested",
        })
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={c: NUM3 for c in ["β₀ intercept", "SE β₀", "β₁ slope", "SE β₁", "calibration slope 1+β₁",
                                                  "LR χ²(2)"]})
    st.caption(f"Model (§4.5): logit P(Y=1) = β₀ + β₁·logit(p̂) + offset(logit p̂), so β₀ = β₁ = 0 for a calibrated "
               f"group; β₁ > 0 means under-confident scores, β₁ < 0 over-confident ones. p (β₀=β₁=0) is the joint "
               f"likelihood-ratio test; 'p non-linear' adds a {audit.params.spline_knots}-knot restricted cubic spline "
               "of logit(p̂) and tests it against the straight line (it approximates, not reproduces, mgcv's smooth "
               "test). BH: Benjamini–Hochberg across the groups. Groups with fewer than "
               f"{audit.params.min_events} rows of either outcome are not tested.")
    for g in audit.groups:
        if g.linear.ok:
            kind = "bad" if g.joint_p_adjusted < audit.params.alpha else "good"
            _ui.verdict_box(kind, f"**{md(g.name)}:** {slope_words(g.linear)}; {in_the_large_words(g.linear)}. "
                                  f"Miscalibration is {significance_words(g.joint_p_adjusted, audit.params.alpha)} "
                                  "(BH-adjusted).")
    diff = audit.difference
    st.markdown("**Does calibration differ by group?** (group as a term)")
    if diff.linear is None:
        st.info(diff.status)
        return
    st.markdown(f"Group-specific intercept and slope against shared ones: χ²({diff.linear.df}) = "
                f"{diff.linear.statistic:.2f}, p {fmt_p(diff.linear.p)}. Group-specific calibration-in-the-large: "
                f"χ²({diff.in_the_large.df}) = {diff.in_the_large.statistic:.2f}, p {fmt_p(diff.in_the_large.p)}."
                + (f" Not tested (too small): {', '.join(diff.excluded)}." if diff.excluded else ""))
    rows = [{"group (i) vs reference (j)": f"{name} vs {diff.reference}",
             "Δ intercept (i−j)": d["intercept"].estimate, "p Δ intercept": fmt_p(d["intercept"].p),
             "Δ slope (i−j)": d["slope"].estimate, "p Δ slope": fmt_p(d["slope"].p)}
            for name, d in diff.differences.items()]
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                     column_config={"Δ intercept (i−j)": NUM3, "Δ slope (i−j)": NUM3})


def _errors_tab(audit: CalibrationAudit, key: tuple) -> None:
    _ui.chart(_ui.figure(("cal.errors", *key), lambda: figs.errors_figure(audit)), width="stretch")
    rows = [{"group": g.name, "n": g.n, "ECE (15 bins)": g.ece, "ECE 95% CI": fmt_interval(g.ece_ci),
             "regime": g.ece_regime, "smooth ECE": g.smooth_ece, "smooth ECE 95% CI": fmt_interval(g.smooth_ece_ci),
             "bandwidth σ*": g.smooth_sigma} for g in audit.all_groups]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={"ECE (15 bins)": NUM4, "smooth ECE": NUM4, "bandwidth σ*": NUM4})
    if audit.pairs:
        st.markdown("**Group gaps** (i minus j)")
        pairs = [{"pair (i vs j)": f"{p.group_i} vs {p.group_j}", "ECE gap": p.ece_diff,
                  "ECE gap 95% CI": fmt_interval(p.ece_diff_ci), "smooth ECE gap": p.smooth_ece_diff,
                  "smooth ECE gap 95% CI": fmt_interval(p.smooth_ece_diff_ci),
                  "reading": _gap_words(p.smooth_ece_diff_ci)} for p in audit.pairs]
        st.dataframe(pd.DataFrame(pairs), hide_index=True, width="stretch",
                     column_config={"ECE gap": NUM4, "smooth ECE gap": NUM4})
    st.caption("ECE: 15 equal-width bins, Σ |B|/n·|observed − predicted| (as on the residual page). Smooth ECE "
               "(Błasiok & Nakkiran 2024; relplot's smECE): the kernel-smoothed calibration error with the bandwidth σ* "
               "at which it equals itself, free of bin choices. Intervals: percentile bootstrap of "
               f"{audit.params.resamples} row resamples (within each group; all rows for the overall line), the "
               "convention of Residual Distribution Fairness (App. B) used on every page. Calibration errors are "
               "biased upwards by noise and a resample adds that bias again, so an interval can sit above its "
               "estimate: its lower end is the cautious reading.")


def _gap_words(ci) -> str:
    if ci is None or not np.isfinite(ci.low):
        return "no interval"
    if ci.low > 0 or ci.high < 0:
        return "a real gap (interval excludes 0)"
    return "could be noise (interval includes 0)"


def _recalibration_tab(pred, ctx) -> None:
    st.markdown("Fit a monotone map from the scores to probabilities on a **calibration split**, then judge it on the "
                "**other rows** (§5). Fitting and judging on the same rows would flatter every method.")
    c1, c2, c3 = st.columns(3)
    # a reduced upload: its own columns while the server keeps its bytes (read row by row only for such a split)
    reduced = ctx.pred.weighted                 # here ``pred`` is the table expanded to rows, without the file's columns
    file_columns = _upload.reduced_columns(ctx.pred.fingerprint) if reduced else tuple(pred.frame.columns)
    columns = [c for c in file_columns if c not in (pred.mapping.score, pred.mapping.label)]
    split = c1.radio("Calibration split", ["random fraction", "a column of the file"] if columns else ["random fraction"],
                     key="cal_split")
    if not columns:
        c1.caption("A split by a column needs the file's rows: this upload was reduced to counts per group, label "
                   "and score (upload it again, or map a feature or id column on the Home page to keep the rows).")
    column = value = None
    fraction = 0.5
    if split == "random fraction":
        fraction = c1.slider("Share of rows that calibrate", 0.1, 0.9, 0.5, 0.05, key="cal_fraction")
    else:
        if reduced:
            try:
                pred = _upload.reduced_rows(ctx.pred.fingerprint)
            except DataError as err:
                _ui.show_data_error(err, "The file cannot be read row by row")
                return
            if pred is None:
                st.info("The uploaded file is no longer kept on the server: upload it again to split by its columns.")
                return
        column = c1.selectbox("Split column", columns, key="cal_split_column")
        values = sorted(pred.frame[column].astype(str).str.strip().unique().tolist())[:200]
        value = c1.selectbox("Rows with this value calibrate", values, key="cal_split_value")
    methods = c2.multiselect("Methods", list(METHODS), default=list(METHODS), format_func=METHODS.get,
                             key="cal_methods") or ["platt"]
    per_group = c3.checkbox("Recalibrate each group separately", value=False, key="cal_per_group",
                            help="One map per group: needs the group at prediction time, i.e. a group-aware model.")
    if per_group:
        c3.warning("Per-group recalibration uses group membership when scoring. That is a group-aware model: "
                   "check that it is allowed for this decision before using it.")
    try:
        result = cached_recalibration(pred.fingerprint, ctx.attribute,
                                      RecalParams(methods=tuple(methods), fraction=fraction, split_column=column,
                                                  split_value=value, per_group=per_group), pred)
    except DataError as err:
        _ui.show_data_error(err, "Recalibration is not possible with this split")
        return
    st.caption(f"Split: {result.split_label} ({int(result.calibration_rows.sum()):,} calibration rows, "
               f"{int((~result.calibration_rows).sum()):,} evaluation rows).")
    for note in result.notes:
        st.warning(note)
    names = [n for n in result.original.metrics if n != OVERALL]
    d1, d2 = st.columns([3, 1])
    method = d2.selectbox("Show after", [m.method for m in result.methods], format_func=lambda m: result.method(m).label,
                          key="cal_recal_show")
    shown = d2.multiselect("Groups", [*names, OVERALL], default=names[:4], key="cal_recal_groups") or names[:4]
    metric = d2.radio("Metric", ["ece", "smooth_ece", "log_loss", "brier"], key="cal_recal_metric",
                      format_func={"ece": "ECE", "smooth_ece": "smooth ECE", "log_loss": "log-loss", "brier": "Brier"}.get)
    with d1:
        _ui.chart(figs.recalibration_figure(result, method, shown), width="stretch")
        _ui.chart(figs.recalibration_metric_figure(result, metric), width="stretch")
    rows = []
    for res in result.all:
        for name, m in res.metrics.items():
            rows.append({"method": res.label, "group": name, "n (evaluation)": m.n, "ECE": m.ece,
                         "smooth ECE": m.smooth_ece, "log-loss": m.log_loss, "Brier": m.brier})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={c: NUM4 for c in ["ECE", "smooth ECE", "log-loss", "Brier"]})
    chosen = result.method(method)
    for name, text in chosen.descriptions.items():
        st.caption(f"{chosen.label} — {md(name)}: {md(text)}")
    for name, problem in chosen.problems.items():
        st.warning(f"{md(name)}: {md(problem)}")
    st.markdown(_recalibration_reading(result, method))
    # built on click, not on every rerun of the page: it holds every row
    st.download_button("Download recalibrated predictions (CSV)",
                       lambda: csv_bytes(recalibrated_frame(pred, result)),
                       "recalibrated_predictions.csv", "text/csv", key="cal_recal_download")


def _recalibration_reading(result, method: str) -> str:
    before, after = result.original.metrics, result.method(method).metrics
    changes = [f"*{name}* {fmt(before[name].ece)} → {fmt(after[name].ece)}" for name in before]
    return (f"**Reading.** ECE on the evaluation rows, before → after {result.method(method).label}: "
            + "; ".join(changes) + ". A shared map cannot remove a gap *between* groups when the same score means "
            "different risks for them; only a per-group map (group-aware) can.")


def _residuals_tab(pred, ctx) -> None:
    st.markdown("Pearson residuals r = (y − p̂)/√(p̂(1 − p̂)) against a feature (§3.2): where their mean is away from 0, "
                "the model is biased for rows like these, whatever their score.")
    if pred.weighted:
        try:
            rows = _upload.reduced_rows(pred.fingerprint)
        except DataError as err:
            _ui.show_data_error(err, "The file cannot be read row by row")
            return
        if rows is None:
            st.info("Residuals against features need the file's rows: this upload was reduced to counts per group, "
                    "label and score. Upload it again, or map the feature columns on the Home page to analyse them "
                    "(the file is then read row by row).")
            return
        st.caption("This tab reads the uploaded file row by row (every column); the other tabs read the engine's "
                   "counts.")
        pred = rows
    candidates = [c for c in pred.frame.columns if c not in (pred.mapping.label, pred.mapping.score, pred.mapping.row_id)]
    if not candidates:
        st.info("The file has no other columns to analyse residuals against.")
        return
    default = next((c for c in pred.mapping.features if c in candidates), candidates[0])
    c1, c2 = st.columns([3, 1])
    feature = c2.selectbox("Feature", candidates, index=candidates.index(default), key="cal_feature")
    n_bins = c2.slider("Bins (numeric features)", 4, 20, 10, key="cal_feature_bins")
    result = cached_feature(pred.fingerprint, ctx.attribute, feature, n_bins, pred)
    names = [n for n in result.groups if n != OVERALL]
    shown = c2.multiselect("Groups", [*names, OVERALL], default=names[:4], key="cal_feature_groups") or names[:4]
    with c1:
        _ui.chart(figs.feature_residual_figure(result, shown), width="stretch")
    c2.markdown(_feature_reading(result, shown))
    if result.large:
        st.caption(f"{result.large:,} rows have |r| > 3: positives scored very low or negatives scored very high.")

    st.markdown("**Model-based test** (§3.3): fit the residuals on features; significant terms or a cross-validated "
                "gain over predicting the mean residual are evidence of structure the model missed.")
    default_features = [c for c in [*pred.mapping.features, *pred.mapping.groups] if c in candidates]
    features = st.multiselect("Features in the residual model", candidates, default=default_features[:8],
                              key="cal_model_features")
    run = st.toggle("Fit the residual model", value=False, key="cal_model_run",
                    help="Takes a few seconds: robust Wald tests and 5-fold cross-validation (spline OLS and boosting).")
    if not run or not features:
        return
    try:
        model = cached_model(pred.fingerprint, tuple(features), 0, pred)
    except DataError as err:
        _ui.show_data_error(err, "The residual model cannot be fitted")
        return
    rows = [{"term": t.term, "df": t.df, "robust Wald χ²": t.statistic, "p": fmt_p(t.p),
             "reading": significance_words(t.p)} for t in [*model.terms, model.overall]]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", column_config={"robust Wald χ²": NUM3})
    m = st.columns(3)
    m[0].metric("In-sample R²", fmt(model.r2, 4))
    m[1].metric("CV R², spline OLS", fmt(model.cv_r2_linear, 4), help=f"± {model.cv_r2_linear_sd:.4f} across folds")
    m[2].metric("CV R², boosted trees", fmt(model.cv_r2_boosting, 4), help=f"± {model.cv_r2_boosting_sd:.4f} across folds")
    gain = max(model.cv_r2_linear, model.cv_r2_boosting)
    _ui.verdict_box("bad" if gain > 0.01 else "good",
                    f"**{'Features explain part of the residuals' if gain > 0.01 else 'No useful gain over the baseline'}:** "
                    f"the best cross-validated R² is {gain:.4f} (0 = no better than the mean residual). "
                    + (f"Significant terms: {', '.join(t.term for t in model.terms if t.p < 0.05)}."
                       if any(t.p < 0.05 for t in model.terms) else "No term is significant at 5%."))
    for note in model.notes:
        st.caption(note)


def _feature_reading(result, shown: list[str]) -> str:
    worst = None
    for name in shown:
        b = result.groups[name]
        for i in range(b.n.size):
            if b.n[i] and np.isfinite(b.low[i]) and (b.low[i] > 0 or b.high[i] < 0):
                if worst is None or abs(b.mean[i]) > abs(worst[2]):
                    worst = (name, b.label[i], b.mean[i], b.n[i])
    if worst is None:
        return ("**Reading.** Every shown bin's 95% interval includes 0: no evidence of bias along "
                f"*{result.feature}* at this resolution.")
    name, label, mean, n = worst
    direction = "under-predicts" if mean > 0 else "over-predicts"
    return (f"**Reading.** The clearest bias: for *{name}* with {result.feature} {label} (n = {n:,}) the mean residual "
            f"is {mean:+.2f}, so the model {direction} there; its 95% interval excludes 0.")


def _performance_tab(audit: CalibrationAudit, key: tuple) -> None:
    metric = st.radio("Metric", ["auroc", "log_loss", "brier"], horizontal=True, key="cal_perf_metric",
                      format_func={"auroc": "AUROC", "log_loss": "log-loss", "brier": "Brier"}.get)
    _ui.chart(_ui.figure(("cal.performance", *key, metric), lambda: figs.performance_figure(audit, metric)),
              width="stretch")
    rows = [{"group": g.name, "n": g.n, "positives": g.n_pos, "AUROC": g.performance.auroc,
             "AUROC 95% CI": fmt_interval(g.performance.auroc_ci), "log-loss": g.performance.log_loss,
             "log-loss 95% CI": fmt_interval(g.performance.log_loss_ci), "Brier": g.performance.brier,
             "Brier 95% CI": fmt_interval(g.performance.brier_ci), "note": g.performance.status}
            for g in audit.all_groups]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={"AUROC": NUM3, "log-loss": NUM3, "Brier": NUM4})
    smallest = min(audit.groups, key=lambda g: g.n)
    st.markdown(f"**Reading.** Estimated performance is not true performance (§1.3): the smallest group, *{md(smallest.name)}* "
                f"(n = {smallest.n:,}), has AUROC {fmt(smallest.performance.auroc)} with a 95% interval "
                f"{fmt_interval(smallest.performance.auroc_ci)}, against {fmt_interval(audit.overall.performance.auroc_ci)} "
                "for all rows. A gap between groups whose intervals overlap this much may be noise.")
    st.caption(f"Intervals: percentile bootstrap, {audit.params.resamples} row resamples within each group (a resample "
               "missing an outcome is dropped for AUROC). Log-loss uses scores clipped to [1e-6, 1 − 1e-6].")


_ui.guarded(page)
