"""Group parity ([3] ch. 3): does each group get the benefit its labels warrant? OFI, DI and Table 3.2.

Controls → one cached call (the section's ``run``) → the section's display list; the page adds only what an
interactive page has: the metric and pair pickers, tabs, downloads, and the scenario builder."""
from __future__ import annotations

from dataclasses import replace

import streamlit as st

from app_pages import _parity_common as common
from app_pages import _render, _ui
from app_pages._compare import compare_view
from fairviz.core.counts import ConfusionCounts
from fairviz.core.display import Group, group as display_group, tables
from fairviz.core.wording import fmt
from fairviz.data import DataError
from fairviz.findings import FindingsParams
from fairviz.parity import (PAIR_METRICS, SCENARIOS, ParityAudit, ParityParams, analyse, metric_label, read_pair,
                            scenario)
from fairviz.parity.one_vs_rest import MulticlassParityParams, analyse_multiclass as multiclass_parity
from fairviz.parity.error_parity import RegressionParityParams, analyse_regression as regression_parity
from fairviz.parity import display as section
from fairviz.report.options import AuditParams
from fairviz.sample_size import MatchParams
from fairviz.sample_size.class_match import analyse_class_match
from fairviz.sample_size.display import class_match_display

PARITY = section.SECTION
CELLS = ("tp", "fn", "fp", "tn")


def cached_parity(pred, options: AuditParams, variant: str, convention: bool, tolerance: float) -> ParityAudit:
    params = ParityParams(threshold=options.threshold, benefit=options.benefit, di_variant=variant,
                          di_zero_convention=convention, ofi_tolerance=tolerance, alpha=options.match.alpha)
    return _ui.cached("parity", options.attribute, params, lambda progress: analyse(pred, options.attribute, params),
                      "Counting and comparing groups", data=pred, keep=32, bar=False)


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
                                   "tests OFI against sampling noise (Wald z-test, a normal approximation).")
        alpha = st.select_slider("Significance level α", [0.01, 0.05, 0.10], value=0.05)
    return variant, convention, tolerance, alpha


def page() -> None:
    ctx = _ui.context()
    spec = ctx.spec
    if not spec.thresholded:                # no decision at τ: the task's own method (errors, or every class)
        _task_method_page(ctx, spec)
        return
    variant, convention, tolerance, alpha = settings()
    st.title("Group parity: Objective Fairness Index and Disparate Impact")
    st.caption("A group's **marginal benefit** 𝓑 is the share of it that got the benefit minus the share its labels "
               "say deserved it. **OFI(i, j) = 𝓑_i − 𝓑_j** is the model's own contribution to the disparity; "
               "**DI** compares raw benefit rates (the four-fifths rule). Read them together: OFI ≠ 0 is algorithmic "
               "bias; OFI ≈ 0 with DI ≠ 1 is a disparity outside the model (different base rates).")
    _analysis(variant, convention, tolerance, alpha)


@_ui.tau_part
def _analysis(variant: str, convention: bool, tolerance: float, alpha: float) -> None:
    """Everything τ changes (OFI, DI, the heatmaps, the tabs): a τ step reruns this part alone."""
    ctx = _ui.context()
    pred = PARITY.given(ctx.pred)         # the engine's table (weighted counts) is read as is
    benefit = common.benefit_choice(pred)
    options = AuditParams(attribute=ctx.attribute, threshold=ctx.threshold, benefit=benefit,
                          match=MatchParams(alpha=alpha))
    audit = cached_parity(pred, options, variant, convention, tolerance)
    # the readings open on the reference against the Summary's top group (or the group a link names)
    options = replace(options, findings=FindingsParams(reference=ctx.reference), focus=_ui.focus_group(ctx))
    items = PARITY.display(pred, audit, options)
    common.render([item for item in items if not isinstance(item, Group)])      # the benefit and the warnings

    # only the open tab runs (a click on another reruns the page from the caches)
    several = ctx.pred.several_models
    tabs = _ui.lazy_tabs(TABS + (["Compare models"] if several else []), key="parity_tab", keep=TAB_WIDGETS)
    key = section.figure_key(pred, audit)
    compare = [lambda: compare_view(ctx.with_view(benefit=benefit), "parity")] if several else []
    for tab, body in zip(tabs, (lambda: _heatmap_tab(audit, key, options), lambda: _table_tab(items, "groups"),
                                lambda: _table_tab(items, "pairs"), _scenario_tab, *compare)):
        if tab.open:
            with tab:
                body()
    _ui.section_json("parity", pred, audit, options)


def _heatmap_tab(audit: ParityAudit, key: tuple, options: AuditParams) -> None:
    names = list(audit.names)
    default_i, default_j = section.focus_pair(audit, options)      # the top group against the reference
    asked = _ui.address_selection("parity")                          # a link or a refresh: its pair and metric
    if asked.get("group") in names:
        st.session_state["parity_i"] = asked["group"]
        st.session_state["parity_j"] = asked["vs"] if asked.get("vs") in names else default_j
    if asked.get("metric") in PAIR_METRICS:
        st.session_state["parity_metric"] = asked["metric"]
    common.keep_choice("parity_i", names, default_i)
    common.keep_choice("parity_j", names, default_j)
    c1, c2, c3 = st.columns([2, 2, 2])
    metric = c1.selectbox("Metric", list(PAIR_METRICS), format_func=lambda k: metric_label(k, audit.params.benefit),
                          key="parity_metric",
                          help="OFI and DI first; then the other metrics of the thesis's Table 3.2 (taken on the "
                               "benefit) and the FPR, FNR and selection-rate gaps on the label, as every page names "
                               "them.")
    group_i = c2.selectbox("Row group i", names, key="parity_i")
    group_j = c3.selectbox("Column group j", names, key="parity_j")
    _ui.keep_selection_in_address("parity", group=group_i, vs=group_j if group_j != default_j else None,
                                  metric=metric)
    common.render(section.pair_display(audit, metric, group_i, group_j, key))
    panels = section.panels(audit, key)
    expander = st.expander(panels.title, key="parity_panels", on_change="rerun")      # built when opened
    if not expander.open:
        return
    with expander:
        for row in range(0, len(panels.items), 2):
            for column, item in zip(st.columns(2), panels.items[row:row + 2]):
                common.render([item], column)


FILES = {"groups": ("parity_groups.csv", "Download the group table (CSV)"),
         "pairs": ("parity_pairs.csv", "Download all pairs (CSV)")}


def _table_tab(items: list, key: str) -> None:
    """One detail group of the section, open, and its table as CSV."""
    part = display_group(items, key)
    common.render(part.items)
    common.download(tables(part.items)[key], *FILES[key])


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


# ------------------------------------------------------------------------------- a numeric target, per class

def _task_method_page(ctx: _ui.Context, spec) -> None:
    """What group parity means for a task without a decision at τ: the method the parity check serves it with."""
    st.title("Group parity")
    method = section.CHECK.section(spec)
    if method is None:
        st.info(f"No group parity method serves {spec.title} yet.")
        return
    _ui.task_line(ctx)
    if method is section.REGRESSION_PARITY:
        _numeric_parity(ctx)
    elif method is section.MULTICLASS_PARITY:
        _per_class_parity(ctx)
    else:
        _own_method(ctx, method)


def _own_method(ctx: _ui.Context, method) -> None:
    """A task's own parity method (registered with the check): its result, cached, and its display list, as the
    audit report shows it."""
    data = ctx.data
    options = AuditParams(attribute=ctx.attribute, findings=FindingsParams(reference=ctx.reference))
    result = _run(method.name, ctx.attribute, (ctx.reference,), method.title or method.name,
                  lambda progress: method.run(method.given(data), options), data)
    if result is not None:
        _render.render(method.display(method.given(data), result, options))


def _numeric_parity(ctx: _ui.Context) -> None:
    """Error and prediction parity, and the models side by side when there are several."""
    data = ctx.data
    st.caption("Error parity: is the model as wrong (bias ŷ − y, MAE, RMSE) for every group? Prediction parity: "
               "are the groups' predictions distributed alike (Wasserstein-1, KS, the statistical-parity AUC)? "
               "And the fairness of *Systematic Evaluation of Predictive Fairness* (Han et al.) through "
               "quantile proxy classes of the target. Each gap with a permutation p-value, BH over pairs.")
    params = RegressionParityParams(reference=ctx.reference)
    result = _run("parity_regression", ctx.attribute, params, "Comparing the groups' errors",
                  lambda progress: regression_parity(data, ctx.attribute, params), data)
    if result is not None:
        _render.render(section.regression_display(result, (data.fingerprint, ctx.attribute)))
    if ctx.joint.several_models:
        st.subheader("Compare models")
        compare_view(ctx, "parity")


def _per_class_parity(ctx: _ui.Context) -> None:
    """Per-class parity, GAP, the confusion matrices and MATCH per class."""
    data = ctx.data
    st.caption("Each class one vs rest: TPR, FPR and selection rate per group with their gaps, OFI and DI per class; "
               "GAP (Han et al.: the root mean square over classes of the groups' gaps), the confusion matrices, "
               "accuracy and macro-F1 per group, and MATCH per class (sample-size significance).")
    params = MulticlassParityParams(reference=ctx.reference)
    result = _run("parity_multiclass", ctx.attribute, params, "Comparing the groups class by class",
                  lambda progress: (multiclass_parity(data, ctx.attribute, params),
                                    analyse_class_match(data, ctx.attribute)), data)
    if result is not None:
        parity, match = result
        view = (data.fingerprint, ctx.attribute)
        _render.render(section.multiclass_display(parity, class_match_display(match, view), view))
    if ctx.joint.several_models:                   # every class at once: the models' error rates, paired
        st.subheader("Compare models")
        compare_view(ctx.with_view(class_name=None), "parity")


def _run(check: str, view, params, label: str, compute, data):
    """The cached result, or None after showing why the data cannot be analysed (one plain message)."""
    try:
        return _ui.cached(check, view, params, compute, label, data=data)
    except DataError as err:
        _ui.show_data_error(err, "This analysis cannot run on these data")
        return None


_ui.guarded(page)
