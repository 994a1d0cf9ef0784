"""Sample-size significance ([3] ch. 4): is a small group's score real, or what its size alone would give?

Controls → one cached call (MATCH and CPS, composed in ``fairviz.sample_size``) → the section's display list; the
page adds only what an interactive page has: the pickers, the null of a chosen score, jaggedness and holes of a
chosen group, expected-error curves, tabs and downloads."""
from __future__ import annotations

from dataclasses import replace

import streamlit as st

from app_pages import _parity_common as common
from app_pages import _ui
from app_pages._compare import compare_view
from app_pages._ui import CACHE_TTL
from fairviz.core.confusion_metrics import METRICS as CM_METRICS
from fairviz.core.counts import ConfusionCounts
from fairviz.core.display import Group, group as display_group, tables
from fairviz.core.focus import Focus
from fairviz.findings import FindingsParams, page_metric
from fairviz.sample_size import display as section
from fairviz.report.options import AuditParams
from fairviz.sample_size import (CPS_LAMBDA, ENUMERATION_LIMIT, METRIC_LABELS, MatchAudit, MatchParams,
                                 SignificanceAudit, curve_reference, expected_errors, jaggedness, null_distribution,
                                 on_the_benefit, own_value, plot_data, readings, with_cps_lambda)

SIGNIFICANCE = section.SECTION
CURVE_SIZES = (5, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 75, 100, 125, 150)
TABS = ["MATCH test", "Jaggedness and holes", "Cross-Prior Smoothing"]
TAB_WIDGETS = {0: ("match_group", "match_metric"), 1: ("jag_group", "jag_metric", "jag_max", "jag_draws", "holes_n"),
               2: ("cps_lambda", "cps_metric", "cps_group")}


@st.cache_data(show_spinner=False, max_entries=32, ttl=CACHE_TTL)
def cached_names(fingerprint: str, attribute: str, _pred) -> tuple:
    return tuple(_pred.groups(attribute).names)


@st.cache_data(show_spinner="Running MATCH for every group and metric…", max_entries=32, ttl=CACHE_TTL)
def cached_significance(fingerprint: str, options: AuditParams, _pred) -> SignificanceAudit:
    return SIGNIFICANCE.run(_pred, options)


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
                              help="The thesis's sum leaves out the undefined case, so it does not add up to 1; "
                                   "conditioning divides by P(defined). Off: the thesis's literal sum.")
    return MatchParams(reference=reference, method=method, alpha=alpha, draws=draws, seed=seed,
                       condition_on_defined=condition)


def page() -> None:
    ctx = _ui.context()
    if not _ui.binary_only(ctx, "Sample-size significance: MATCH and Cross-Prior Smoothing"):
        return
    pred = SIGNIFICANCE.given(ctx.pred)   # the engine's table (weighted counts) is read as is
    st.title("Sample-size significance: MATCH and Cross-Prior Smoothing")
    st.caption("A small group's metric swings with a single person, and many metrics are sometimes undefined. "
               "**MATCH** asks: if this group were treated exactly like the reference, how often would a group of the "
               "same size score like this? **CPS** steadies small groups' metrics by borrowing strength from the "
               "reference.")
    _analysis(settings(cached_names(pred.fingerprint, ctx.attribute, pred)))


@_ui.tau_part
def _analysis(params: MatchParams) -> None:
    """Everything τ changes (MATCH, CPS, the tabs): a τ step reruns this part alone."""
    ctx = _ui.context()
    pred = SIGNIFICANCE.given(ctx.pred)
    benefit = common.benefit_choice(pred)
    lam = float(st.session_state.get("cps_lambda", CPS_LAMBDA))      # chosen on the CPS tab, kept while it is closed
    options = AuditParams(attribute=ctx.attribute, threshold=ctx.threshold, benefit=benefit, match=params,
                          cps_lambda=lam)
    # MATCH is kept across λ (the cache holds the section at the default λ); another λ redoes only CPS
    result = with_cps_lambda(cached_significance(pred.fingerprint, replace(options, cps_lambda=CPS_LAMBDA), pred), lam)
    items = SIGNIFICANCE.display(pred, result, options)
    common.render([item for item in items if not isinstance(item, Group)])       # the reference

    # only the open tab runs (a click on another reruns the page from the caches)
    several = ctx.pred.several_models
    tabs = _ui.lazy_tabs(TABS + (["Compare models"] if several else []), key="match_tab", keep=TAB_WIDGETS)
    key = section.figure_key(pred, result)
    compare = [lambda: compare_view(replace(ctx, benefit=benefit), None)] if several else []
    for tab, body in zip(tabs, (lambda: _match_tab(result, items, key, ctx), lambda: _jaggedness_tab(result.match, key),
                                lambda: _cps_tab(result, items, key), *compare)):
        if tab.open:
            with tab:
                body()
    _ui.section_json("significance", pred, result, options)


# ----------------------------------------------------------------------------------------------- MATCH

def _default_focus(audit: MatchAudit, ctx: _ui.Context) -> tuple[str, str]:
    """The Summary's top group and the MATCH metric of its finding (the same rate, on the label); with
    no finding, the largest group other than the reference, on accuracy. Never a group under the size floor while
    a larger one exists: a tiny group's MATCH result is on its own row of the table."""
    finding = _ui.top_finding(ctx)
    metric = page_metric(finding.candidate.kind, ctx.benefit, "significance") if finding is not None else None
    sizes = {g: audit.counts[g].n for g in audit.names}
    pair = Focus(ctx.reference, FindingsParams().min_group_size, _ui.focus_group(ctx)).pair_or_largest(sizes)
    group = pair[0] if pair is not None else audit.names[0]
    return group, metric if metric in audit.params.metrics else "acc"


def _formula(metric: str) -> str:
    return "𝓑_group − 𝓑_reference" if metric == "ofi" else CM_METRICS[metric].formula


def _match_tab(result: SignificanceAudit, items: list, key: tuple, ctx: _ui.Context) -> None:
    audit = result.match
    common.render(display_group(items, "match").items)
    asked = _ui.address_selection("significance")          # a link or a refresh: its group and metric
    if asked.get("group") in audit.names:
        st.session_state["match_group"] = asked["group"]
    if asked.get("metric") in audit.params.metrics:
        st.session_state["match_metric"] = asked["metric"]
    if st.session_state.get("match_group") not in audit.names or \
            st.session_state.get("match_metric") not in audit.params.metrics:
        group0, metric0 = _default_focus(audit, ctx)
        common.keep_choice("match_group", list(audit.names), group0)
        common.keep_choice("match_metric", list(audit.params.metrics), metric0)
    c1, c2 = st.columns(2)
    group = c1.selectbox("Group", list(audit.names), key="match_group",
                         format_func=lambda g: f"{g} (n = {audit.counts[g].n:,})")
    metric = c2.selectbox("Metric", list(audit.params.metrics), key="match_metric",
                          format_func=lambda m: f"{METRIC_LABELS[m]} — {_formula(m)}")
    _ui.keep_selection_in_address("significance", group=group, metric=metric)
    reference = audit.reference_for(group, metric)          # 𝓑 and OFI on the benefit, the rest on the label
    plot = None if reference is None else cached_null(metric, audit.get(group, metric).n, reference, audit.params)
    common.render(section.focus_display(audit, group, metric, plot, key))
    table_group = display_group(items, "match_table")
    common.render([table_group])
    common.download(tables(table_group.items)["match"], "match.csv", "Download the MATCH table (CSV)")


# ----------------------------------------------------------------------------------------------- jaggedness and holes

def _jaggedness_tab(audit: MatchAudit, key: tuple) -> None:
    names = list(audit.names)
    sizeable = [g for g in names if audit.counts[g].n >= 100]     # subsamples of a tiny group barely vary
    common.keep_choice("jag_group", names, min(sizeable, key=lambda g: audit.counts[g].n) if sizeable else names[0])
    c1, c2, c3, c4 = st.columns(4)
    group = c1.selectbox("Group", names, key="jag_group", format_func=lambda g: f"{g} (n = {audit.counts[g].n:,})")
    metric = c2.selectbox("Metric", list(CM_METRICS), index=list(CM_METRICS).index("tpr"), key="jag_metric",
                          format_func=lambda m: METRIC_LABELS[m])
    counts = audit.counts_for(group, metric)
    top = int(min(counts.n - 1, 150))           # a subsample of the whole group would not vary at all
    if top < 6:
        common.render([readings.too_small_to_subsample(group, int(counts.n))])
        return
    common.keep_choice("jag_max", list(range(6, top + 1)), min(50, max(6, counts.n // 2)))
    largest = c3.slider("Largest subsample", 6, top, key="jag_max")
    draws = c4.select_slider("Draws per size", [200, 1000, 2000], value=1000, key="jag_draws")
    seed = int(st.session_state.get("match_seed", 0))
    bands = cached_jaggedness(counts, metric, tuple(range(5, largest + 1)), draws, seed)
    common.render(section.jaggedness_display(bands, group, (*key, metric, largest, draws, seed)))
    n = st.slider("Matrices of size n", 1, ENUMERATION_LIMIT, int(min(counts.n, 12)), key="holes_n")
    common.render([section.holes_table(audit, group, n)])


# ----------------------------------------------------------------------------------------------- CPS

def _cps_tab(result: SignificanceAudit, items: list, key: tuple) -> None:
    audit = result.match
    c1, c2 = st.columns([1, 2])
    c1.number_input("Prior scale λ", min_value=0.0, max_value=1000.0, value=CPS_LAMBDA, step=1.0, key="cps_lambda",
                    help="The pseudo-count mass borrowed from the reference: for a group of 5 and λ = 5 the "
                         "reference weighs as much as the group. The thesis uses 5 (default), 10 and 20.")
    metric = c2.selectbox("Metric", list(CM_METRICS), index=list(CM_METRICS).index("tpr"), key="cps_metric",
                          format_func=lambda m: METRIC_LABELS[m])
    common.render([section.cps_figure(result, metric, key)])
    common.render(display_group(items, "cps").items)
    st.markdown("**Is smoothing worth it? Exact expected error for samples of a group**")
    names = list(audit.names)
    common.keep_choice("cps_group", names, min(names, key=lambda g: audit.counts[g].n))
    group = st.selectbox("Group to sample from", names, key="cps_group",
                         format_func=lambda g: f"{g} (n = {audit.counts[g].n:,})")
    counts, reference = audit.counts_for(group, metric), on_the_benefit(curve_reference(audit, group), metric,
                                                                          audit.benefit)
    if own_value(counts, metric) is None:
        common.render([readings.no_target(group, metric)])
        return
    if reference.n == 0:
        st.info("The reference is empty.")
        return
    curves = cached_curves(counts, reference, metric, CURVE_SIZES, result.cps_lambda)
    common.render(section.curves_display(curves, group, result.cps_lambda))


_ui.guarded(page)
