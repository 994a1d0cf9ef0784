"""Sample-size significance (seed 002 ch. 4): is a small group's score real, or what its size alone would give?"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from fairviz.core.confusion_metrics import METRICS as CM_METRICS, Cells, probabilities
from fairviz.core.counts import ConfusionCounts
from fairviz.sample_size import figures as figs
from fairviz.core.markup import csv_bytes, md
from fairviz.core.wording import fmt, fmt_p
from fairviz.data.groups import group_counts
from fairviz.sample_size.analysis import CURVE_LIMIT, ENUMERATION_LIMIT, METRIC_LABELS, MatchAudit, MatchParams, configuration_count, cps_groups, expected_errors, hole_counts, jaggedness, match_groups, null_distribution, plot_data, seed_hole_count, undefined_probability, verdict
from fairviz.report.options import AuditParams
from fairviz.report.sample_size import SignificanceResult
from app_pages import _parity_common as common
from fairviz.report.sample_size import SECTION as SIGNIFICANCE
from app_pages import _ui
from app_pages._ui import CACHE_TTL

CURVE_SIZES = (5, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 75, 100, 125, 150)
CPS_LAMBDA = 5.0               # the thesis's prior scale (default of the CPS tab's λ)
TABS = ["MATCH test", "Jaggedness and holes", "Cross-Prior Smoothing"]
TAB_WIDGETS = {0: ("match_group", "match_metric"), 1: ("jag_group", "jag_metric", "jag_max", "jag_draws", "holes_n"),
               2: ("cps_lambda", "cps_metric", "cps_group")}


@st.cache_data(show_spinner=False, max_entries=32, ttl=CACHE_TTL)
def cached_counts(fingerprint: str, attribute: str, threshold: float, benefit: str, _pred):
    view = _pred.groups(attribute)
    return view.attribute, tuple(view.names), tuple(group_counts(_pred, view, threshold, benefit))


@st.cache_data(show_spinner="Running MATCH for every group and metric…", max_entries=32, ttl=CACHE_TTL)
def cached_match(attribute: str, names: tuple, counts: tuple, params: MatchParams) -> MatchAudit:
    return match_groups(attribute, names, counts, params)


@st.cache_data(show_spinner=False, max_entries=128, ttl=CACHE_TTL)
def cached_null(metric: str, n: int, reference: ConfusionCounts, params: MatchParams):
    return plot_data(null_distribution(metric, n, reference, params))


@st.cache_data(show_spinner="Subsampling…", max_entries=64, ttl=CACHE_TTL)
def cached_jaggedness(counts: ConfusionCounts, metric: str, sizes: tuple, draws: int, seed: int):
    return jaggedness(counts, metric, sizes, draws, seed)


@st.cache_data(show_spinner="Enumerating every confusion matrix up to n = 150…", max_entries=64, ttl=CACHE_TTL)
def cached_curves(counts: ConfusionCounts, reference: ConfusionCounts, metric: str, sizes: tuple, lam: float):
    return expected_errors(counts, reference, [metric], sizes, lams=(lam,), epsilons=(1e-10, 1.0))[metric]


def settings(names: tuple) -> MatchParams:
    with st.sidebar.expander("Significance settings", expanded=False):
        choices = ["complement", "population", *names]
        common.keep_choice("match_reference", choices, "complement")
        reference = st.selectbox("Reference", choices, key="match_reference", format_func=lambda r: {
            "complement": "All other rows (default)", "population": "The whole population"}.get(r, f"Group: {r}"),
            help="MATCH asks what a group of the same size drawn from this reference would score.")
        method = st.radio("Method for binomial metrics and 𝓑", ["exact", "normal", "peizer_pratt"], format_func={
            "exact": "Exact (default)", "normal": "Normal approximation (where n·p, n·q ≥ 5)",
            "peizer_pratt": "Peizer–Pratt (binomial metrics)"}.get)
        alpha = st.select_slider("Significance level α (after Benjamini–Hochberg)", [0.01, 0.05, 0.10], value=0.05)
        draws = st.select_slider("Monte Carlo draws (MCC, F1, PT above n = 60; OFI)", [2_000, 10_000, 50_000],
                                 value=10_000)
        seed = int(st.number_input("Seed", 0, 10_000, 0, key="match_seed"))
        condition = st.toggle("Joint-ratio metrics: condition on being defined", value=True,
                              help="The seed's sum leaves out the undefined case, so it does not add up to 1; "
                                   "conditioning divides by P(defined). Off: the seed's literal sum.")
    return MatchParams(reference=reference, method=method, alpha=alpha, draws=draws, seed=seed,
                       condition_on_defined=condition)


def page() -> None:
    ctx = _ui.context()
    pred = SIGNIFICANCE.given(ctx.pred)   # the engine's table (weighted counts) is read as is
    benefit = common.benefit_choice(pred)
    st.title("Sample-size significance: MATCH and Cross-Prior Smoothing")
    st.caption("A small group's metric swings with a single person, and many metrics are sometimes undefined. "
               "**MATCH** asks: if this group were treated exactly like the reference, how often would a group of the "
               "same size score like this? **CPS** steadies small groups' metrics by borrowing strength from the "
               "reference.")
    attribute = ctx.attribute
    attribute, names, counts = cached_counts(pred.fingerprint, attribute, ctx.threshold, benefit, pred)
    params = settings(names)
    audit = cached_match(attribute, names, counts, params)
    st.info(common.benefit_caption(pred, benefit, ctx.threshold) +
            f" Reference: {audit.reference_label}.")
    # only the open tab runs (a click on another reruns the page from the caches)
    tabs = _ui.lazy_tabs(TABS, key="match_tab", keep=TAB_WIDGETS)
    lam = float(st.session_state.get("cps_lambda", CPS_LAMBDA))      # chosen on the CPS tab, kept while it is closed
    key = (attribute, names, counts, params)
    if tabs[0].open:
        with tabs[0]:
            _match_tab(audit, key)
    if tabs[1].open:
        with tabs[1]:
            _jaggedness_tab(audit)
    if tabs[2].open:
        with tabs[2]:
            lam = _cps_tab(audit)
    cps = cps_groups(audit.names, [audit.counts[n] for n in audit.names], lam, audit.params.reference)
    _ui.section_json("significance", pred, SignificanceResult(audit, cps, lam),
                     AuditParams(attribute=attribute, threshold=ctx.threshold, benefit=benefit, match=params,
                                  cps_lambda=lam))


# ----------------------------------------------------------------------------------------------- MATCH

def _default_focus(audit: MatchAudit) -> tuple[str, str]:
    flagged = sorted(audit.significant(), key=lambda r: (audit.counts[r.group].n, r.p_adjusted))
    if flagged:
        return flagged[0].group, flagged[0].metric
    smallest = min(audit.names, key=lambda g: audit.counts[g].n)
    return smallest, "acc"


def _match_tab(audit: MatchAudit, key: tuple) -> None:
    _ui.chart(_ui.figure(("match.map", *key), lambda: figs.match_map(audit)), width="stretch")
    flagged = audit.significant()
    tested = sum(r.p_value is not None for r in audit.results)
    st.markdown(f"**{len(flagged)} of {tested}** group × metric scores differ from {md(audit.reference_label)} beyond "
                f"sampling noise (Benjamini–Hochberg adjusted p < {audit.params.alpha:g}, {tested} tests). Purple: "
                "the group scores higher than same-size groups from the reference would; orange: lower; pale: "
                "within noise.")
    group0, metric0 = _default_focus(audit)
    common.keep_choice("match_group", list(audit.names), group0)
    common.keep_choice("match_metric", list(audit.params.metrics), metric0)
    c1, c2 = st.columns(2)
    group = c1.selectbox("Group", list(audit.names), key="match_group",
                         format_func=lambda g: f"{g} (n = {audit.counts[g].n:,})")
    metric = c2.selectbox("Metric", list(audit.params.metrics), key="match_metric",
                          format_func=lambda m: f"{METRIC_LABELS[m]} — {_formula(m)}")
    result = audit.get(group, metric)
    reference = audit.references[group]
    left, right = st.columns([3, 2])
    with right:
        words = verdict(result, audit.params.alpha, audit.reference_label)
        significant = result.p_adjusted is not None and result.p_adjusted < audit.params.alpha
        _ui.verdict_box("warn" if significant else ("info" if result.p_value is None else "good"), md(words))
        m = st.columns(2)
        m[0].metric("Observed", fmt(result.score))
        m[1].metric("Percentile", "—" if result.cdf is None else f"{100 * result.cdf:.1f}%")
        m = st.columns(2)
        m[0].metric("p (two-sided)", fmt_p(result.p_value))
        m[1].metric("BH-adjusted p", fmt_p(result.p_adjusted))
        st.caption(f"Percentile: the share of same-size groups from the reference scoring at most the observed "
                   f"value. Method: {result.method}. P(undefined at n = {result.n:,}) = "
                   f"{'—' if result.undefined_probability is None else f'{result.undefined_probability:.3g}'}"
                   + (f". Berry–Esseen bound on the normal approximation's error: {result.error_bound:.3g}"
                      if result.error_bound else "") + ".")
    with left:
        if reference is None:
            st.info(f"'{md(group)}' is the reference group itself.")
        else:
            plot = cached_null(metric, result.n, reference, audit.params)
            _ui.chart(_ui.figure(("match.null", *key, group, metric),
                                 lambda: figs.null_figure(plot, result, audit.reference_label)), width="stretch")
            if metric == "ofi":
                st.caption("OFI against the reference redraws both the group and the reference from the "
                           "reference's cells at their own sizes (Monte Carlo), so a small reference's own noise "
                           "counts too; the null is centred on 0.")
    with st.expander("The full MATCH table"):
        frame = pd.DataFrame([{
            "group": r.group, "n": r.n, "metric": METRIC_LABELS[r.metric], "score": r.score,
            "reference": r.reference_score, "percentile": r.cdf, "p": r.p_value, "adjusted p": r.p_adjusted,
            "P(undefined)": r.undefined_probability, "method": r.method, "note": r.note} for r in audit.results])
        st.dataframe(frame, hide_index=True, width="stretch", column_config={
            c: st.column_config.NumberColumn(format="%.4f") for c in ("score", "reference", "percentile", "p",
                                                                      "adjusted p", "P(undefined)")})
        st.download_button("Download the MATCH table (CSV)", csv_bytes(frame), "match.csv",
                           "text/csv")
    st.caption("Exact methods: binomial CDF (ACC, prevalence, PPR); the trinomial sum for 𝓑 (the seed's normal "
               "formula Eq. 4.29 is dimensionally wrong and is replaced by Φ((k + ½ − nμ)/√(nσ²))); the "
               "joint-ratio sum for TPR, FPR, PPV, … (Theorem 4.9); enumeration of every matrix up to n = "
               f"{ENUMERATION_LIMIT} for MCC, F1 and PT, seeded Monte Carlo above. p-values are two-sided, "
               "2·min(P(S ≤ s), P(S ≥ s)); the seed gives only the percentile.")


def _formula(metric: str) -> str:
    return "𝓑_group − 𝓑_reference" if metric == "ofi" else CM_METRICS[metric].formula


# ----------------------------------------------------------------------------------------------- jaggedness and holes

def _jaggedness_tab(audit: MatchAudit) -> None:
    names = list(audit.names)
    sizeable = [g for g in names if audit.counts[g].n >= 100]     # subsamples of a tiny group barely vary
    common.keep_choice("jag_group", names, min(sizeable, key=lambda g: audit.counts[g].n) if sizeable else names[0])
    c1, c2, c3, c4 = st.columns(4)
    group = c1.selectbox("Group", names, key="jag_group", format_func=lambda g: f"{g} (n = {audit.counts[g].n:,})")
    metric = c2.selectbox("Metric", list(CM_METRICS), index=list(CM_METRICS).index("tpr"), key="jag_metric",
                          format_func=lambda m: METRIC_LABELS[m])
    counts = audit.counts[group]
    top = int(min(counts.n - 1, 150))           # a subsample of the whole group would not vary at all
    if top < 6:
        st.info(f"'{md(group)}' has only {counts.n} rows: too few to subsample.")
        return
    common.keep_choice("jag_max", list(range(6, top + 1)), min(50, max(6, counts.n // 2)))
    largest = c3.slider("Largest subsample", 6, top, key="jag_max")
    draws = c4.select_slider("Draws per size", [200, 1000, 2000], value=1000, key="jag_draws")
    j = cached_jaggedness(counts, metric, tuple(range(5, largest + 1)), draws, int(st.session_state.get("match_seed",
                                                                                                          0)))
    _ui.chart(figs.jaggedness_figure(j, group), width="stretch")
    st.markdown(_jaggedness_reading(j, group))
    _holes(audit, group, metric)


def _jaggedness_reading(j, group: str) -> str:
    label = METRIC_LABELS[j.metric]
    first = 0
    width = j.quantiles[90][first] - j.quantiles[10][first]
    last_width = j.quantiles[90][-1] - j.quantiles[10][-1]
    text = (f"**Reading.** Random subsamples of {j.sizes[first]} people from '{group}' give {label} anywhere in "
            f"[{fmt(j.quantiles[10][first])}, {fmt(j.quantiles[90][first])}] (middle 80%, width {fmt(width)}); at "
            f"{j.sizes[-1]} people the band is {fmt(last_width)} wide. The steps in the bands are the jaggedness of "
            "small samples: only a few confusion matrices are possible, so the metric jumps between few values.")
    if j.undefined_share.max() > 0:
        text += (f" {label} is undefined in {100 * j.undefined_share[first]:.0f}% of subsamples of "
                 f"{j.sizes[first]} — a hole, not a zero.")
    return text


def _holes(audit: MatchAudit, group: str, metric: str) -> None:
    counts = audit.counts[group]
    st.markdown("**Holes: how often is each metric undefined?**")
    n = st.slider("Matrices of size n", 1, ENUMERATION_LIMIT, int(min(counts.n, 12)), key="holes_n")
    holes = hole_counts(n)
    reference = audit.references[group]
    probs = probabilities(reference) if reference is not None else probabilities(counts)
    rows = []
    for key, spec in CM_METRICS.items():
        p_undefined = undefined_probability(key, int(counts.n), probs)
        rows.append({"metric": METRIC_LABELS[key], "formula": spec.formula, "family": spec.family,
                     f"holes among the {configuration_count(n):,} matrices of n = {n}": holes[key],
                     "Theorem 4.3 (as printed)": seed_hole_count(key, n),
                     f"P(undefined) for '{group}' (n = {counts.n:,})": p_undefined,
                     "undefined when": spec.undefined_when or "never"})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    st.caption("Binomial metrics and 𝓑 are defined for every matrix; each joint-ratio metric has n + 1 holes, MCC 4n "
               "and F1 one. A 0/0 is indeterminate (Theorem 4.4: 1, 0 and ½ are all defensible), so fairviz shows "
               "'undefined' rather than picking one. Theorem 4.3's upper bound for the prevalence threshold fails "
               "from n = 4 on (17 holes > 10.3), so the enumerated counts are shown next to it. P(undefined) uses "
               "the reference's cell probabilities (PT: no closed form, blank).")


# ----------------------------------------------------------------------------------------------- CPS

def _cps_tab(audit: MatchAudit) -> float:
    """The CPS tab; returns the prior scale λ chosen there."""
    c1, c2 = st.columns([1, 2])
    lam = c1.number_input("Prior scale λ", min_value=0.0, max_value=1000.0, value=CPS_LAMBDA, step=1.0, key="cps_lambda",
                          help="The pseudo-count mass borrowed from the reference: for a group of 5 and λ = 5 the "
                               "reference weighs as much as the group. The thesis uses 5 (default), 10 and 20.")
    metric = c2.selectbox("Metric", list(CM_METRICS), index=list(CM_METRICS).index("tpr"), key="cps_metric",
                          format_func=lambda m: METRIC_LABELS[m])
    reference = audit.params.reference
    rows = cps_groups(audit.names, [audit.counts[n] for n in audit.names], lam, reference)
    total = ConfusionCounts(*(sum(getattr(audit.counts[g], f) for g in audit.names) for f in ("tp", "fn", "fp", "tn")))
    overall = CM_METRICS[metric](Cells.of(total))[0]
    _ui.chart(figs.cps_figure(rows, metric, float(overall) if overall == overall else None), width="stretch")
    frame = pd.DataFrame([{
        "group": r.group, "n": r.n, "TP": r.raw.tp, "FN": r.raw.fn, "FP": r.raw.fp, "TN": r.raw.tn,
        "TP (CPS)": r.smoothed.tp, "FN (CPS)": r.smoothed.fn, "FP (CPS)": r.smoothed.fp, "TN (CPS)": r.smoothed.tn,
        f"{METRIC_LABELS[metric]} raw": r.raw_metrics[metric],
        f"{METRIC_LABELS[metric]} smoothed": r.smoothed_metrics[metric]} for r in rows])
    st.dataframe(frame, hide_index=True, width="stretch", column_config={
        c: st.column_config.NumberColumn(format="%.3f") for c in frame.columns if c.endswith(("(CPS)", "raw",
                                                                                               "smoothed"))})
    st.caption(f"CPS (Algorithm 1): α = CM_group + λ·CM_reference/|CM_reference|, then rescale α to the group's n. "
               f"Reference: {audit.reference_label}. Big groups barely move; small groups move towards the reference "
               "and lose their holes. Smoothed counts are real-valued.")
    st.markdown("**Is smoothing worth it? Exact expected error for samples of a group**")
    names = list(audit.names)
    common.keep_choice("cps_group", names, min(names, key=lambda g: audit.counts[g].n))
    group = st.selectbox("Group to sample from", names, key="cps_group",
                         format_func=lambda g: f"{g} (n = {audit.counts[g].n:,})")
    counts, ref = audit.counts[group], audit.references[group]
    if ref is None:
        complement = ConfusionCounts(*(getattr(total, f) - getattr(counts, f) for f in ("tp", "fn", "fp", "tn")))
        ref = complement
    target = CM_METRICS[metric](Cells.of(counts))[0]
    if target != target:
        st.info(f"{METRIC_LABELS[metric]} is undefined for the whole of '{md(group)}', so there is no target to miss.")
        return float(lam)
    if ref.n == 0:
        st.info("The reference is empty.")
        return float(lam)
    curves = cached_curves(counts, ref, metric, CURVE_SIZES, float(lam))
    _ui.chart(figs.error_curves_figure(curves, group), width="stretch")
    at = list(curves.sizes).index(10)
    raw, smooth = curves.mse["raw"][at], curves.mse[f"CPS λ = {lam:g}"][at]
    st.markdown(f"**Reading.** For samples of 10 people drawn from '{md(group)}', the raw {METRIC_LABELS[metric]} misses "
                f"the group's value {fmt(float(target))} by a mean squared error of {fmt(raw, 4)} (defined in "
                f"{100 * curves.defined_mass['raw'][at]:.0f}% of samples); CPS with λ = {lam:g} gives "
                f"{fmt(smooth, 4)}. Exact: every one of the up to {configuration_count(CURVE_LIMIT):,} confusion "
                "matrices of each size is weighted by its multinomial probability — no simulation. ε = 1 is the usual "
                "add-one smoothing; ε = 1e-10 (the thesis's 'bashful' smoothing) keeps the raw values but fills "
                "holes with ½.")
    return float(lam)


_ui.guarded(page)
