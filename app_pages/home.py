"""Home: pick a sample or upload predictions, map the columns once, and see what the data holds."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import streamlit as st

from fairviz.calibration.figures import score_distribution_figure
from fairviz.core.display import Bullets, Group, Text, text
from fairviz.core.markup import md
from fairviz.data.overview import display, overview, score_shares
from fairviz.data.samples import DEFAULT_SAMPLE, samples
from fairviz.data import DataError
from fairviz.data.model import INTERSECTION_SEP
from fairviz.findings import KIND_TITLES, FindingsParams, finding_text, no_slice_text
from fairviz.report.attributes import other_attributes_display, slice_search, top_slices
from fairviz.slices.metrics import default_metric, metric_title
from fairviz.report.audit import AuditParams, run_audit
from fairviz.findings.display import QUICK_SECTIONS, TASK_QUICK_SECTIONS, findings_settings
from app_pages import _mapping, _render, _sources, _ui, _upload


def page() -> None:
    ctx = _ui.context()
    st.title("fairviz — visual fairness exploration")
    st.markdown("Upload a CSV of model predictions (a label, a score, one or more group columns) or start from a "
                "bundled sample, then walk through the audit pages on the left.")
    kinds = ["Bundled sample", "Upload a file"] + (["Listed source"] if _sources.offered() else [])
    source = st.radio("Data", kinds, horizontal=True, key="home_source",
                      help="Listed sources are tables and queries the server's operator named (FAIRVIZ_SOURCES); "
                           "they are reduced where they live, and a visitor only ever picks one by name.")
    if source == "Bundled sample":
        _sample_picker()
    elif source == "Listed source":
        _sources.source_picker()
    else:
        _upload_section()
    if "flash" in st.session_state:
        st.success(st.session_state.pop("flash"))
    _threshold_and_findings()
    st.markdown("**Audit report** — the same numbers as the pages and `fairviz audit`.")
    _ui.report_downloads(ctx)
    _summary(ctx.data or ctx.pred)


@_ui.tau_part
def _threshold_and_findings() -> None:
    """The Summary, the one part of Home τ changes, with the frame's τ slider (drawn in its sidebar place): a τ step
    reruns this fragment alone. A full rerun sends every element of the app again and the browser redraws each one
    (≈ 110 on Home after an upload: the upload form, the overview, the chart, the links); this sends ≈ 32."""
    ctx = _ui.context()
    if _ui.forget_report_of_another_view(ctx):
        st.rerun()            # the downloads below the fragment offered the report of the previous τ
    _findings(ctx)


def _sample_picker() -> None:
    options = samples()
    keys = list(options)
    current_key = st.session_state.get("sample_key") or DEFAULT_SAMPLE
    key = st.selectbox("Sample", keys, index=keys.index(current_key), format_func=lambda k: options[k].title,
                       key="sample_choice", on_change=_load_chosen_sample)
    sample = options[key]
    st.caption(f"{sample.description}  \n*Source:* {sample.provenance}")
    if st.session_state.get("sample_key") != key:
        st.button("Load this sample", on_click=_load_chosen_sample, type="primary")


def _load_chosen_sample() -> None:
    """Runs before the script (a widget callback), so the sidebar widgets can still be reset."""
    key = st.session_state["sample_choice"]
    st.session_state["sample_key"] = key
    _ui.use_predictions(_ui.bundled(key), samples()[key].threshold)


def _upload_section() -> None:
    st.caption("CSV (comma, semicolon or tab separated) or Parquet. One row per prediction: a binary label and a "
               "score (a probability, a percentage or a logit of one label value) — or a numeric target and a "
               "prediction (regression), or a label with several classes and one probability column per class "
               "(multiclass) — and one or more group columns; optional text, id and feature columns.")
    upload = _upload.read_upload("Predictions file", key="upload", preview_only=True,
                                 empty="No file uploaded yet: the pages keep showing the current data.")
    if upload is None:
        if _upload.failed("upload"):
            st.caption("The previous data stays loaded.")
        return
    _mapping_form(upload)


def _mapping_form(upload: _upload.Uploaded) -> None:
    """The roles and the meaning of the upload, asked and checked (app_pages/_mapping.py)."""
    _mapping.mapping_form(upload)


def _findings(ctx) -> None:
    """The Summary: what is unfair, for whom, how sure — the audit's top findings, each with a link to the page that
    shows it (the report's downloads follow, outside the fragment: they change only when a report is prepared)."""
    at = f" at τ = {ctx.threshold:.2f}" if ctx.task == "binary" else ""      # other tasks' audits have no τ
    st.subheader(f"Summary: {md(ctx.pred.source)} · {md(ctx.attribute)}{at}")
    with st.empty():        # the progress bar's place while the audit runs: an empty element when it was kept
        result = _ui.audit(ctx)
    summary = result.findings
    parts = summary_parts(result.summary_display())
    # Each part in its place, or an empty placeholder there, and each finding in its slot up to the most the Summary
    # shows (the progress bar too, above): the Summary keeps the same elements in the same order at every τ, so a τ
    # step where the findings change (how many, which notes are said) updates each element in place instead of
    # shifting every later one into another kind of element, which the browser then builds and lays out anew.
    top = summary.top if summary is not None else ()
    _part(parts.headline, lambda: _render.render(parts.headline, st.container()))
    _part(top, lambda: _finding_slots(ctx, summary, st.container(border=True)))   # the findings' neutral box
    _part(parts.notes, lambda: st.caption("\n\n".join(parts.notes)))
    _part(parts.every, lambda: _every_comparison(parts.every))
    _part(parts.rest, lambda: _render.render(parts.rest, st.container()))
    _other_attributes(ctx)


# Slices on Home: the search (depth 2) costs ≈ 40 ms of fixed work plus ≈ 0.3 µs an entry: 40–46 ms on COMPAS
# (7,214 rows), 0.27–0.38 s at 1M rows as 924k engine entries (benchmarks/bench_attributes.py). It runs at every τ
# step by itself only on data of up to this many entries (≈ 70 ms, within the τ step's 300 ms); on larger data the
# visitor asks for it (a checkbox), and the τ step then pays it.
AUTO_SLICE_ENTRIES = 100_000
SLICES_ON_HOME = 3


def _other_attributes(ctx) -> None:
    """Every other mapped attribute's top finding (its own Summary's first, from a parity-only audit cached per
    data, attribute, τ and benefit: ≈ 25 ms each at 1M rows) and the top slices: one compact part."""
    others = [a for a in (ctx.data or ctx.pred).attribute_names if a != ctx.attribute]
    if not others:
        st.empty()
        return
    with st.empty():        # the progress bars' place, as the Summary's
        found = [_other_summary(ctx, attribute) for attribute in others]
    slices, note = _home_slices(ctx)        # on large data, after its checkbox
    _render.render(other_attributes_display(found, slices, note), st.container())


def _other_summary(ctx, attribute: str):
    """(attribute, its Summary or None, the reason it has none)."""
    data = _ui.audited(ctx)
    findings, words = findings_settings(_ui.current_sample(), attribute, FindingsParams())
    sections = TASK_QUICK_SECTIONS.get(data.task, QUICK_SECTIONS)[:1]     # the closed-form tests: rate gaps and OFI

    def compute(progress):
        try:
            audit = run_audit(data, AuditParams(attribute=attribute, threshold=ctx.threshold, benefit=ctx.benefit,
                                                findings=findings, words=words, progress=progress, sections=sections))
        except DataError as err:
            return None, "; ".join(err.problems)
        if audit.findings is not None:
            return audit.findings, None
        return None, "; ".join(e["error"] for e in audit.data.get("errors", [])) or None

    key = (data.fingerprint, attribute, ctx.threshold, ctx.benefit, findings, words)
    summary, error = _ui.cached_with_progress("other_attributes", key, compute, f"Summarising {attribute}",
                                              max_entries=32)
    return attribute, summary, error


def _home_slices(ctx):
    """The top slices (binary at τ; a regression's mean residual, a multiclass error rate): searched at every τ step
    on small data, on request on large data."""
    data = _ui.audited(ctx)
    if len([a for a in data.attribute_names if INTERSECTION_SEP not in a]) < 2:
        return (), None
    entries = len(data.y)
    if entries > AUTO_SLICE_ENTRIES and not st.checkbox(
            "Top slices too", key="home_slices",
            help=f"Search the slices of two attributes' values combined at every τ (≈ 0.3 s at 1M rows; these data "
                 f"are {entries:,} entries). The Slices page has every slice."):
        return (), None
    floor = FindingsParams().min_group_size         # the app's policy: the Summary's size floor
    threshold = ctx.threshold if data.task == "binary" else 0.5     # only a binary slice reads τ: no search per step
    found = _slice_findings(data.fingerprint, data.model, threshold, floor, data)
    if isinstance(found, str):
        return (), text("Slices: {message}", "caveat", message=found)
    return found, (None if found else no_slice_text(metric_title(default_metric(data.task), data.task)))


@st.cache_data(show_spinner=False, max_entries=16, ttl=_ui.CACHE_TTL)
def _slice_findings(fingerprint: str, model: str, threshold: float, floor: int, _pred):
    """The slice search's top significant slices (depth 2, the task's metric, Benjamini–Yekutieli), or the reason
    it has none."""
    try:
        return top_slices(slice_search(_pred, 2, floor, threshold), SLICES_ON_HOME)
    except DataError as err:
        return "; ".join(err.problems)


@dataclass
class SummaryParts:
    """The Summary's display list by part: the headline, the notes (what was checked and found unremarkable, what
    was not tested, the groups too small to tell, the policy: one caption), every other comparison, and anything
    else the list may hold."""
    headline: list = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    every: Group | None = None
    rest: list = field(default_factory=list)


def summary_parts(items: list) -> SummaryParts:
    """The Summary's display list (``fairviz.findings.display.display``) sorted into its parts."""
    parts = SummaryParts()
    for index, item in enumerate(items):
        if isinstance(item, Bullets) and item.level == "finding":
            continue                                        # drawn from the findings themselves, each with its link
        if index == 0 and isinstance(item, Text):
            parts.headline.append(item)
        elif isinstance(item, Text) and item.level == "note":
            parts.notes.append(_render.markdown(item))
        elif isinstance(item, Bullets) and item.level == "note":
            parts.notes.append("\n".join(f"- {_render.markdown(i)}" for i in item.items))
        elif isinstance(item, Group) and item.collapsed and all(isinstance(i, Text) for i in item.items):
            parts.every = item
        else:
            parts.rest.append(item)
    return parts


def _part(present, draw: Callable[[], None]) -> None:
    """One part of the Summary (one element or one container) when ``present``, else an empty placeholder there."""
    if present:
        draw()
    else:
        st.empty()


def _finding_slots(ctx, summary, box) -> None:
    """The top findings, each a sentence and its link, then an empty slot for each finding the Summary could show."""
    with box:
        for index in range(summary.params.max_findings):
            if index < len(summary.top):
                finding = summary.top[index]
                _render.render([Bullets((finding_text(finding, summary, "plain"),), "plain")])
                _finding_link(ctx, finding)
            else:
                st.empty()                                  # the sentence's place
                st.empty()                                  # the link's


def _every_comparison(group: Group) -> None:
    """Every other comparison, one per line in one caption (one element instead of one per comparison), built only
    when opened: closed, its lines are neither sent nor drawn at a τ step."""
    expander = st.expander(group.title, key="summary_every_comparison", on_change="rerun")
    if expander.open:
        expander.caption("\n".join(f"- {_render.markdown(i)}" for i in group.items))


FINDING_PAGES = {"parity": ("app_pages/parity.py", "Group parity", ":material/balance:"),
                 "residuals": ("app_pages/residuals.py", "Residual distribution", ":material/stacked_line_chart:"),
                 "calibration": ("app_pages/calibration.py", "Calibration", ":material/target:")}


def _finding_link(ctx, finding) -> None:
    """A link that opens the finding's page on its view: the frame's choices, and the finding's attribute, reference,
    compared group and metric (a finding about another attribute opens on that attribute, not the frame's)."""
    view = dict(finding.candidate.view)
    page, title, icon = FINDING_PAGES[view["page"]]
    params = _ui.view_params(ctx) | {k: view[k] for k in ("attribute", "reference", "group", "metric") if view.get(k)}
    st.page_link(page, label=f"Open on {title}: {md(view['group'])} vs {md(view['reference'])}, "
                             f"{KIND_TITLES[view['kind']]}", icon=icon, query_params=params)


def _summary(pred) -> None:
    _render.render(display(_overview(pred.fingerprint, pred)))
    _score_distribution(pred)
    st.markdown("**Next:**")
    st.page_link("app_pages/residuals.py", label="Residual distribution fairness", icon=":material/stacked_line_chart:")
    st.page_link("app_pages/calibration.py", label="Calibration by group", icon=":material/target:")
    st.page_link("app_pages/parity.py", label="Group parity: OFI and Disparate Impact", icon=":material/balance:")
    st.page_link("app_pages/significance.py", label="Sample-size significance: MATCH and CPS", icon=":material/casino:")
    st.page_link("app_pages/explanations.py", label="Explanation disparity (text models)", icon=":material/manage_search:")
    st.page_link("app_pages/forecast_fairness.py", label="Forecast fairness (quantile forecasts by group)",
                 icon=":material/ssid_chart:")
    st.page_link("app_pages/synthetic_data.py", label="Synthetic data with diversity quotas (Conditional HydraGAN)",
                 icon=":material/dataset:")


SCORE_BINS = np.linspace(0.0, 1.0, 21)
SHOWN_GROUPS = 8


def _score_distribution(pred) -> None:
    """Where the model puts each group's scores (the first attribute's largest groups), in 20 bins. Drawn here, the
    chart also loads the browser's Plotly library while the visitor is on this page: without it, the first audit
    page opened pays that (≈ 1.5 s in Chromium) on top of its own drawing. Binary scores only (probabilities)."""
    if not pred.binary:
        return
    _score_chart(pred.fingerprint, pred.attribute_names[0], pred)
    _render.anchor_caveats(st, "figure")


@st.cache_data(show_spinner=False, max_entries=8, ttl=_ui.CACHE_TTL)
def _score_chart(fingerprint: str, attribute: str, _pred) -> None:
    """The chart drawn once per data: Streamlit keeps the drawn element and replays it on every later run, so a
    rerun that does not change the data (a τ step) neither rebuilds the figure nor serialises it again (Plotly's
    JSON encoding of the figure was the costliest element of Home's rerun)."""
    names, shares = score_shares(_pred, attribute, SCORE_BINS, SHOWN_GROUPS)
    _render.plotly_chart(st, score_distribution_figure(attribute, names, SCORE_BINS, shares))


@st.cache_data(show_spinner=False, max_entries=8, ttl=_ui.CACHE_TTL)
def _overview(fingerprint: str, _pred):
    return overview(_pred)


_ui.guarded(page)
