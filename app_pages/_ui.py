"""Streamlit glue shared by every page: the one data model in session state, the frame's choices, progress, errors.

The frame (data badge, group attribute, τ, beneficial outcome) is drawn once per run by ``app.py`` before the page
runs, so its widgets keep their values across pages and reruns. Pages stay thin: read ``context()``, call a cached
fairviz function, render its display list.
"""
from __future__ import annotations

import functools
import gc
import importlib
import json
import logging
import uuid
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import streamlit as st

from fairviz.data import DataError, Predictions
from fairviz.data.view import View
from fairviz.core.markup import md
from fairviz.data.samples import DEFAULT_SAMPLE, load_sample, negative_benefit_samples, samples
from fairviz.core.serialize import clean
from fairviz.report.attributes import findings_params_for, run_attributes
from fairviz.report.audit import SECTIONS, AuditParams, run_audit
from fairviz.findings import FindingsParams
from fairviz.findings.display import QUICK_SECTIONS, findings_settings, summary_sections
from fairviz.report.pdf import PdfUnavailable, html_to_pdf

PRED = "predictions"          # session-state keys
ATTRIBUTE = "attribute"        # the frame's widgets (drawn once, in app.py)
THRESHOLD = "threshold"
BENEFIT = "benefit"
DATA_BENEFIT = "data_benefit"  # the benefit the mapping form's good outcome implies for the data in use
REFERENCE = "reference"        # the group every other group is compared with (the Summary, comparisons)
MODEL = "model"                # the model every page audits, when the data holds several
CLASS = "class"                # multiclass data: the class every binary page reads one vs rest
NEW_MODEL = "_new_model"       # a model just added (a mitigation), chosen when the frame is next drawn
NEW_DATA = "_new_data"
FROM_LINK = "_from_link"       # the view a new session read from its address, applied once to the frame         # set by use_predictions: the frame resets its widgets for the new data
PAGE_JSON = "page_json"        # section name → the JSON of what that page shows
RESTARTED = "restarted_on_sample"   # set when a refresh lost the visitor's upload
CACHE_TTL = "2h"               # every st.cache_data / st.cache_resource has max_entries and this lifetime
UPLOAD_PARAM = "data"          # ?data=upload in the address bar survives a refresh; session state does not
DEFAULT_THRESHOLD = 0.5
BENEFIT_LABELS = {"positive": "Positive prediction (score ≥ τ)", "negative": "Negative prediction (score < τ)"}
NEGATIVE_BY_DEFAULT = negative_benefit_samples()   # samples whose positive prediction is a harm (assets/samples.json)
log = logging.getLogger("fairviz.app")

# what the audit pages import (scipy.stats, statsmodels-like fits, Plotly's trace validators: ~1.5 s of imports on a
# fresh server), so the first audit page a visitor opens after the Home page does not pay for them.
_WARM_MODULES = ("fairviz.residuals.analysis", "fairviz.residuals.figures", "fairviz.residuals.threshold_invariance",
                 "fairviz.calibration.analysis", "fairviz.calibration.figures", "fairviz.calibration.recalibration",
                 "fairviz.parity.analysis", "fairviz.parity.figures", "fairviz.sample_size.analysis",
                 "fairviz.sample_size.figures")


@st.cache_resource(show_spinner=False, max_entries=1)     # once per process, on purpose without a lifetime
def warm_up() -> None:
    """Import what the audit pages need once per process. The app calls it after the page has been drawn, so the
    visitor already sees the first page while it runs."""
    try:
        for name in _WARM_MODULES:
            importlib.import_module(name)
        import plotly.graph_objects as go               # each trace type's validators load on first use
        for trace in (go.Scatter(), go.Scattergl(), go.Bar(), go.Heatmap()):
            go.Figure(trace)
    except Exception:  # noqa: BLE001 - a warm-up must never break the app; the page's own import reports errors
        log.debug("warm-up import failed", exc_info=True)
    # Streamlit collects garbage after every script run (gc.collect(2), holding the GIL, so the run's last messages
    # wait): a full pass over every object alive, ~200k after these imports, 0.15–0.25 s per rerun. Freezing what
    # exists now (modules, classes, the server's own objects, kept for the process's life) takes them out of every
    # later pass; objects made later (sessions, data, results) are still collected as before.
    gc.collect()
    gc.freeze()


@dataclass(frozen=True)
class Context:
    pred: Predictions              # what a binary page audits: the chosen model, or the chosen class one vs rest
    attribute: str
    threshold: float
    benefit: str = "positive"      # which prediction helps a person: "positive" (score ≥ τ) or "negative"
    reference: str | None = None   # the group others are compared with (None: the largest)
    data: Predictions | None = None   # the loaded predictions, of any task (None: ``pred``)

    @property
    def task(self) -> str:
        """The loaded data's task: "binary", "regression" or "multiclass" (``pred`` is binary for multiclass)."""
        return (self.data or self.pred).task

    @property
    def class_name(self) -> str | None:
        """Multiclass data: the class ``pred`` reads one vs rest."""
        return self.pred.mapping.positive_label if self.task == "multiclass" else None

    @property
    def model(self) -> str:
        """The model the page audits (``pred`` is its predictions; the frame's model picker chooses it)."""
        return self.pred.active_model

    @property
    def joint(self) -> Predictions:
        """Every model's predictions on the same rows (what a Compare view and "Add as a model" read)."""
        return self.pred.joint()


@st.cache_resource(show_spinner="Loading the sample…", max_entries=8, ttl=CACHE_TTL)
def bundled(key: str) -> Predictions:
    """Bundled samples are parsed once per process and shared by all sessions (they are never mutated)."""
    return load_sample(key)


def use_predictions(pred: Predictions, threshold: float | None = None, benefit: str | None = None) -> None:
    """Make ``pred`` the data of every page (called by the home page after validation). The frame's widgets start
    again on the new data (its first attribute, ``threshold`` when given, its beneficial outcome) when the frame is
    next drawn: in this run when called from a widget callback, else in the next run (follow with ``st.rerun()``)."""
    st.session_state[PRED] = pred
    st.session_state[DATA_BENEFIT] = benefit       # an upload's answer to "the good outcome is …" (None: default)
    st.session_state.pop(RESTARTED, None)
    st.session_state[NEW_DATA] = threshold


def current() -> Predictions:
    """The session's predictions; a page opened directly starts on the default sample at once."""
    if PRED not in st.session_state:
        view = _view_in_link()
        restarted = _query_param() == "upload"      # a refresh, or a link, of a view of an uploaded file
        key = view.pop("sample", None) if view.get("sample") in samples() else DEFAULT_SAMPLE
        st.session_state["sample_key"] = key
        use_predictions(bundled(key), samples()[key].threshold)
        st.session_state[FROM_LINK] = view
        if restarted:
            st.session_state[RESTARTED] = True
    return st.session_state[PRED]


def default_benefit() -> str:
    """COMPAS-like samples start with the negative prediction as the benefit (a high risk score is a harm), as the
    thesis does; every other data set with the positive one."""
    if st.session_state.get(DATA_BENEFIT) in BENEFIT_LABELS:
        return st.session_state[DATA_BENEFIT]
    return "negative" if st.session_state.get("sample_key") in NEGATIVE_BY_DEFAULT else "positive"


def settle_frame(pred: Predictions) -> None:
    """Give the frame's widgets their values for ``pred`` before they are drawn: after new data, its defaults;
    otherwise only a value that no longer fits (an attribute the data lacks) is replaced. Widget values are set
    through session state only, never as widget defaults, so the two never disagree."""
    state = st.session_state
    if NEW_DATA in state:
        threshold = state.pop(NEW_DATA)
        state[ATTRIBUTE] = pred.choices()[0]
        state[BENEFIT] = default_benefit()
        if threshold is not None:
            state[THRESHOLD] = threshold
    if state.get(ATTRIBUTE) not in pred.choices():
        state[ATTRIBUTE] = pred.choices()[0]
    if state.get(NEW_MODEL) in pred.model_names:
        state[MODEL] = state.pop(NEW_MODEL)
    if state.get(MODEL) not in pred.model_names:
        state[MODEL] = pred.model_names[0]
    if pred.task == "multiclass" and state.get(CLASS) not in pred.classes:
        state[CLASS] = largest_class(pred)
    if THRESHOLD not in state:
        state[THRESHOLD] = DEFAULT_THRESHOLD
    if state.get(BENEFIT) not in BENEFIT_LABELS:
        state[BENEFIT] = default_benefit()
    _apply_link(state, pred)
    groups = reference_choices(pred, state[ATTRIBUTE])
    if state.get(REFERENCE) not in groups:
        state[REFERENCE] = default_reference(pred, state[ATTRIBUTE]) if groups else None


def largest_class(pred: Predictions) -> str:
    """The class with the most rows (a binary page opens on it one vs rest)."""
    counts = np.bincount(pred.y, weights=pred.weight, minlength=len(pred.classes))
    return pred.classes[int(np.argmax(counts))]


def reference_choices(pred: Predictions, attribute: str) -> list[str]:
    """The groups of ``attribute``, largest first (none when the attribute cannot be used: the page says why)."""
    try:
        view = pred.groups(attribute)
    except DataError:
        return []
    sizes = view.sizes                # a bincount over every entry: once, not once per comparison of the sort
    return [view.names[g] for g in sorted(range(len(view.names)), key=lambda g: -sizes[g])]


def default_reference(pred: Predictions, attribute: str) -> str:
    """The sample's own reference group (COMPAS: Caucasian), else the largest group (Aequitas' convention)."""
    sample = current_sample()
    own = sample.reference_groups.get(attribute) if sample is not None else None
    groups = reference_choices(pred, attribute)
    return own if own in groups else groups[0]


# ------------------------------------------------------------------------------------------------ views as links

def _view_in_link() -> dict:
    try:
        return {k: st.query_params.get(k) for k in ("sample", "attribute", "tau", "benefit", "reference", "model",
                                                    "class")
                if st.query_params.get(k) is not None}
    except Exception:  # noqa: BLE001 - no browser (bare script run)
        return {}


def _apply_link(state, pred: Predictions) -> None:
    """A new session opened from a link takes the link's choices where they fit this data; the rest keep their
    defaults (a link never carries data, only which bundled sample and which choices)."""
    view = state.pop(FROM_LINK, None)
    if not view:
        return
    if view.get("attribute") in pred.choices():
        state[ATTRIBUTE] = view["attribute"]
    try:
        tau = round(float(view.get("tau", "")), 2)
        if 0 <= tau <= 1:
            state[THRESHOLD] = tau
    except ValueError:
        pass
    if view.get("benefit") in BENEFIT_LABELS:
        state[BENEFIT] = view["benefit"]
    if view.get("reference") in reference_choices(pred, state[ATTRIBUTE]):
        state[REFERENCE] = view["reference"]
    if view.get("model") in pred.model_names:
        state[MODEL] = view["model"]
    if pred.task == "multiclass" and view.get("class") in pred.classes:
        state[CLASS] = view["class"]


def view_params(ctx: "Context") -> dict[str, str]:
    """The view as address parameters: the bundled sample (an upload is never in a link: ``data=upload`` only says
    that the view was of one) and the frame's choices."""
    key = st.session_state.get("sample_key")
    params = {"sample": key} if key else {UPLOAD_PARAM: "upload"}
    params |= {"attribute": ctx.attribute, "tau": f"{ctx.threshold:.2f}", "benefit": ctx.benefit}
    if ctx.reference is not None:
        params["reference"] = ctx.reference
    if ctx.pred.several_models:
        params["model"] = ctx.model
    if ctx.class_name is not None:
        params["class"] = str(ctx.class_name)
    return params


def keep_view_in_address(ctx: "Context") -> str:
    """Write the view into the address bar (a refresh restores it) and return the link to it, with the page's own
    selection (``keep_selection_in_address``)."""
    params = view_params(ctx)
    try:
        for name in ("sample", UPLOAD_PARAM, "attribute", "tau", "benefit", "reference", "model"):
            if name not in params and name in st.query_params:
                del st.query_params[name]
        for name, value in params.items():
            if st.query_params.get(name) != value:
                st.query_params[name] = value
        base = (st.context.url or "").split("?")[0]
    except Exception:  # noqa: BLE001 - no browser (bare script run)
        base = ""
    from urllib.parse import urlencode
    return f"{base}?{urlencode(params | _address())}"


SELECTION = ("group", "vs", "metric")    # a page's own selection in the address: the compared group(s), the metric


def _address(names=SELECTION) -> dict[str, str]:
    try:
        return {k: st.query_params.get(k) for k in names if st.query_params.get(k) is not None}
    except Exception:  # noqa: BLE001 - no browser (bare script run)
        return {}


def address_selection(page: str) -> dict[str, str]:
    """The selection a link or a refresh put in the address for ``page`` (group, vs, metric), once: a rerun after
    the visitor changed a picker keeps the picker's value, and the address then follows the picker
    (``keep_selection_in_address``)."""
    wanted = _address()
    seen = f"_address_seen_{page}"
    if not wanted or st.session_state.get(seen) == wanted:
        return {}
    st.session_state[seen] = wanted
    return wanted


def keep_selection_in_address(page: str, **selection: str | None) -> None:
    """Write the page's selection into the address (a refresh restores it; "Link to this view" carries it)."""
    chosen = {k: str(v) for k, v in selection.items() if k in SELECTION and v is not None}
    try:
        for name in SELECTION:
            if name not in chosen and name in st.query_params:
                del st.query_params[name]
        for name, value in chosen.items():
            if st.query_params.get(name) != value:
                st.query_params[name] = value
    except Exception:  # noqa: BLE001 - no browser (bare script run)
        pass
    st.session_state[f"_address_seen_{page}"] = chosen


def top_finding(ctx: "Context"):
    """The Summary's first finding for the frame's choices, or None. Its candidates come from the parity section
    alone in the quick audit (MATCH only lists the groups under the floor), so the pages read it from a parity-only
    audit: milliseconds at a τ change where the quick audit's MATCH would add 0.15 s at 1M rows."""
    findings, words = findings_settings(current_sample(), ctx.attribute, FindingsParams(reference=ctx.reference))

    def compute(progress):
        return run_audit(ctx.pred, AuditParams(attribute=ctx.attribute, threshold=ctx.threshold, benefit=ctx.benefit,
                                               findings=findings, words=words, progress=progress, **FOCUS_PARAMS))

    key = (ctx.pred.fingerprint, *_audit_key(ctx)[1:])      # the page's own predictions (one class of multiclass)
    summary = cached_with_progress("audit_focus", key, compute, "Finding the top group",
                                   max_entries=16).findings
    return summary.top[0] if summary is not None and summary.top else None


def focus_group(ctx: "Context") -> str | None:
    """The group a page compares with the reference first: the one the address names (a link to a finding), else
    the Summary's top finding's; None lets the page take the largest other group. Never under the size floor: the
    readings check (``fairviz.core.focus``)."""
    asked = _address(("group",)).get("group")
    if asked is not None and asked in reference_choices(ctx.pred, ctx.attribute):
        return asked
    finding = top_finding(ctx)
    return finding.candidate.group if finding is not None else None


def page_options(ctx: "Context", **settings) -> AuditParams:
    """The audit parameters a page's section display reads: the frame's choices, the Summary's reference and size
    floor, and the group its readings open on."""
    return AuditParams(attribute=ctx.attribute, threshold=ctx.threshold,
                       findings=FindingsParams(reference=ctx.reference), focus=focus_group(ctx), **settings)


def _query_param() -> str | None:
    try:
        return st.query_params.get(UPLOAD_PARAM)
    except Exception:  # noqa: BLE001 - no browser (bare script run)
        return None


def restart_notice() -> None:
    """A refresh, or a link shared from a view of an uploaded file, starts a session without that file: say so
    plainly (an upload is never reachable through a link, so another visitor cannot see it)."""
    if st.session_state.get(RESTARTED):
        pred = st.session_state[PRED]
        st.warning(f"**This view was of an uploaded file**, and uploads are never kept in a link or across a refresh "
                   f"(no other visitor can reach them): the pages show the bundled sample *{md(pred.source)}*. "
                   "Upload the file again on the Home page to see it.", icon=":material/restart_alt:")


# ------------------------------------------------------------------------------------------- τ drawn by a page

TAU_SLOT = "_tau_slot"         # the frame's place for τ when a page draws it from its own fragment
LINK_SLOT = "_link_slot"       # the frame's place for "Link to this view"
THRESHOLD_HELP = "A row is predicted positive when its score ≥ τ."


def threshold_slider(where=None) -> None:
    """The decision threshold τ: one slider shared by every page (its value kept in session state). Streamlit gives a
    widget the identity of the script that draws it (the app's, or a page's); drawn from a page's fragment it takes
    the app's, as when the frame draws it, so it stays the one slider whichever page drew it."""
    from contextlib import nullcontext
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    ctx = get_script_run_ctx()
    with ctx.run_with_active_hash(ctx.pages_manager.main_script_hash) if ctx is not None else nullcontext():
        (where or st).slider("Decision threshold τ", 0.0, 1.0, step=0.01, key=THRESHOLD, persist_state="session",
                             help=THRESHOLD_HELP)


def frame_threshold(in_page: bool, shown: bool = True) -> None:
    """τ in the frame (app.py's sidebar). ``in_page``: the page draws it from its own ``st.fragment`` into a container
    kept at this place of the sidebar (``page_threshold``), so a τ step reruns that fragment alone instead of the
    whole app (the frame, the page's other parts: a full rerun sends every element again, each one redrawn by the
    browser). Streamlit lets a fragment write into a container made outside it, the sidebar included."""
    if in_page:       # with the data the frame was drawn for: a fragment's rerun checks it is still the session's
        st.session_state[TAU_SLOT] = {"slot": st.container(), "drawn": False, "data": st.session_state.get(PRED)}
    else:
        st.session_state.pop(TAU_SLOT, None)
        if shown:                     # regression data have no threshold: nothing to draw
            threshold_slider()


def page_threshold() -> None:
    """Inside the page's fragment, first: τ into the frame's place for it (nothing when the page runs without the
    frame, as in a test of the page alone)."""
    place = st.session_state.get(TAU_SLOT)
    if place is not None:
        threshold_slider(place["slot"])
        place["drawn"] = True


def page_link() -> None:
    """Inside the page's fragment, last: "Link to this view", which carries τ, into the frame's place for it. A
    fragment writes into a container made outside it only if it wrote there in the last full run too, so it draws
    the link in every run and the frame then leaves it (``finish_frame``)."""
    place = st.session_state.get(LINK_SLOT)
    if place is not None and TAU_SLOT in st.session_state:
        _draw_link(place["slot"])
        place["drawn"] = True


def tau_part(body: Callable[..., None]) -> Callable[..., None]:
    """Decorator: ``body``, the part of a page that τ changes, as an ``st.fragment`` that draws τ first (in its
    sidebar place) and "Link to this view" last, so a τ step reruns that part alone instead of the whole app (the
    frame, the page's title and settings: each element sent again and redrawn by the browser). The page lists itself
    in ``app.py``'s ``TAU_IN_PAGE``. ``body`` reads the frame's choices itself (``context()``: τ changes between its
    runs); its arguments are what the page computed before it, kept from the last full run (a widget outside the
    fragment reruns the whole app). A fragment's rerun runs outside the page's guard, so the body has its own."""
    @functools.wraps(body)          # the fragment's identity is the body's (module and name), one per page
    def part(*args, **kwargs) -> None:
        place = st.session_state.get(TAU_SLOT)
        if place is not None and place["data"] is not st.session_state.get(PRED):
            st.rerun()        # a button in the part changed the data (added a model): the frame follows it
        page_threshold()
        guarded(lambda: body(*args, **kwargs))
        page_link()
    return st.fragment(part)


def frame_link_slot():
    """The frame's place for "Link to this view" (drawn after the page chose its own selection)."""
    slot = st.empty()
    st.session_state[LINK_SLOT] = {"slot": slot, "drawn": False}
    return slot


def finish_frame() -> None:
    """After the page: τ and "Link to this view" in their sidebar places, unless the page's fragment drew them (or,
    for τ, stopped before it could)."""
    for key, draw in ((TAU_SLOT, threshold_slider), (LINK_SLOT, _draw_link)):
        place = st.session_state.get(key)
        if place is not None and not place["drawn"]:
            draw(place["slot"])


def _draw_link(slot) -> None:
    link = keep_view_in_address(context())
    with slot.container():
        with st.expander("Link to this view"):
            st.code(link, language=None, wrap_lines=True)
            st.caption("Opens this page with these choices. An uploaded file is never part of a link.")


def context() -> Context:
    """The data and the frame's choices (attribute, τ, beneficial outcome), drawn by the app before this page ran.
    A page script run on its own (a test) has no frame: it reads the same choices' defaults."""
    pred = current()
    settle_frame(pred)                # a no-op after the frame drew its widgets
    state = st.session_state
    view = pred.at(View(model=state[MODEL], class_name=state[CLASS] if pred.classes else None))
    return Context(view, state[ATTRIBUTE], float(state[THRESHOLD]), state[BENEFIT], state.get(REFERENCE), data=pred)


def binary_only(ctx: Context, title: str) -> bool:
    """False, with one line saying where to look instead, when the page's method needs a two-valued label and the
    data are a regression's (multiclass data reach binary pages one vs rest: the sidebar's class)."""
    if ctx.task != "regression":
        return True
    st.title(title)
    st.info(f"This page's method reads a two-valued label and a probability; the loaded data are a regression's "
            f"(target '{ctx.pred.mapping.label}', prediction '{ctx.pred.mapping.score}'). Residual distributions, "
            "calibration in the mean and group parity for regression are on the Residuals, Calibration and Group "
            "parity pages.")
    return False


def add_model(title: str, scores, note: str) -> None:
    """Add a model (a mitigation's output, ``scores`` aligned with ``current().joint()``'s entries) to the session's
    data and make it the model every page audits. Raises ``DataError`` (a name taken, scores outside [0, 1])."""
    joint = current().joint()
    st.session_state[PRED] = joint.with_added_model(title, scores, note)
    # chosen when the frame is next drawn (settle_frame): a page's button runs after the Model picker was drawn,
    # and a drawn widget's value cannot be set in the same run
    st.session_state[NEW_MODEL] = title


def cached_with_progress(namespace: str, key: tuple, compute: Callable[[Callable[[float, str], None]], object],
                         label: str, max_entries: int = 16, nbytes: int = 0):
    """Run ``compute(progress)`` once per (namespace, key) for the whole server, with a live progress bar.

    ``st.cache_data`` replays element calls made inside a cached function, so a progress bar cannot live there.
    This is ``_jobs.run`` in the "analysis" pool: identical requests from many sessions at once compute once
    (the others wait for that result), a bounded number of analyses run at a time, and finished results are kept
    (``max_entries`` per namespace). Keys hold the data's fingerprint and every parameter; results are immutable.
    ``nbytes``: the run's peak memory, taken from the server's byte budget while it runs (``_budget``).
    """
    from app_pages import _jobs
    return _jobs.run(namespace, key, label, compute, pool="analysis", keep=max_entries, nbytes=nbytes)


def progress_callback(label: str) -> tuple[Callable[[float, str], None], Callable[[], None]]:
    """A progress bar for a long computation: (update(fraction, message), done())."""
    bar = st.progress(0.0, text=label)

    def update(fraction: float, message: str = "") -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=f"{label}: {message}" if message else label)

    return update, bar.empty


def show_data_error(err: DataError, title: str = "The data cannot be used as mapped") -> None:
    """Problems name the visitor's files, columns and groups: escaped, so they show as typed."""
    st.error(f"**{md(title)}:**\n" + "\n".join(f"- {md(p)}" for p in err.problems))


def guarded(render: Callable[[], None]) -> None:
    """Run a page body; an unexpected failure becomes a short message with an incident id. The traceback (with
    its server paths) goes to the server log only, never to the visitor."""
    try:
        render()
    except DataError as err:
        show_data_error(err)
    except Exception as err:  # a page must never show a traceback or a server path to a meeting
        if _is_rerun_or_stop(err):
            raise
        incident = uuid.uuid4().hex[:8]
        log.exception("page failed (incident %s)", incident)
        st.error(f"Something went wrong while computing this page (incident {incident}; the details are in the "
                 "server log). Your data and choices are kept; try other settings or another attribute.")


def _is_rerun_or_stop(err: BaseException) -> bool:
    """Streamlit's own control-flow exceptions (rerun, stop) must pass through."""
    return type(err).__module__.startswith("streamlit.") and type(err).__name__ in (
        "RerunException", "StopException")


@st.cache_resource(show_spinner=False, max_entries=64, ttl=CACHE_TTL)
def _figure(key: tuple, _build: Callable[[], object]):
    return _build()


def figure(key: tuple, build: Callable[[], object]):
    """A figure built once per ``key`` (what it is, the data's fingerprint and every parameter it draws) and kept
    for the whole server: a rerun that changes nothing it draws (another widget, a tab switch, the threshold on a
    page that does not read it) reuses it instead of rebuilding it (tens to hundreds of ms each). Shared, never
    mutated after it is built. Figures escape the names they take from data where those enter them (``plot_text``),
    so nothing is escaped here and the markup we write survives. ``build`` may return a list of figures."""
    return _figure(key, build)


def chart(fig, **kwargs):
    """``st.plotly_chart`` of a figure whose names were escaped where they entered it, in the figure's own template
    (16 px dark text, not Streamlit's chart theme); the page's caveats fold in after its first chart."""
    return chart_at(st, fig, **kwargs)


def chart_at(where, fig, **kwargs):
    """``chart`` inside a column or container."""
    from app_pages import _render
    shown = _render.plotly_chart(where, fig, **kwargs)
    _render.anchor_caveats(where, "figure")
    return shown


OWN_DATA = "This page uses its own data: {what}, not the data loaded on Home"


def own_data(what: str, unless: str = "") -> None:
    """The line under a page's title that says the page does not read the loaded data (the sidebar does not name
    that data there either: app.py's frame). ``unless``: the one choice on the page that does read it."""
    st.markdown(f":material/dataset: **{OWN_DATA.format(what=what)}**" + (f" ({unless})." if unless else "."))


def lazy_tabs(labels: list[str], key: str, keep: dict[int, tuple[str, ...]] | None = None):
    """``st.tabs`` whose hidden tabs do not run: only the open tab's body computes and is sent (a tab switch reruns
    the page, from the caches). Use ``if tab.open:`` around each body. ``keep`` maps a tab's index to the keys of
    the widgets inside it: a widget that is not drawn in a run loses its value, so a closed tab's widget values are
    written back to session state (Streamlit's documented way to keep them) until the tab opens again."""
    tabs = st.tabs(labels, key=key, on_change="rerun")
    for index, keys in (keep or {}).items():
        if not tabs[index].open:
            for name in keys:
                if name in st.session_state:
                    st.session_state[name] = st.session_state[name]
    return tabs


LARGE_ROWS = 200_000   # above: resampled intervals and tests cost seconds (2–4 s per section at 1M rows), on request


def intervals_wanted(pred: Predictions, key: str, cost: str) -> bool:
    """Resampled intervals and tests for this page: always for data up to LARGE_ROWS rows; above, on request, so a
    large upload opens at once on its point estimates (which do not depend on the resamples)."""
    if pred.n <= LARGE_ROWS:
        return True
    if st.toggle("Bootstrap intervals and permutation tests", value=False, key=key,
                 help=f"Resampling the {pred.n:,} rows' counts: {cost}. Point estimates are shown either way."):
        return True
    st.caption(f"Intervals and tests are off for {pred.n:,} rows so the page opens at once; switch them on above "
               f"({cost}). The point estimates below are complete.")
    return False


def verdict_box(kind: str, text: str) -> None:
    """Coloured reading next to a result: 'good', 'warn', 'bad' or 'info'."""
    {"good": st.success, "warn": st.warning, "bad": st.error}.get(kind, st.info)(text)


def current_sample():
    """The bundled sample in use (None for an upload): its settings shape the Summary (reference group, words)."""
    key = st.session_state.get("sample_key")
    return samples().get(key) if key else None


# The Summary's audit: only the sections whose closed-form tests it reads (parity: the rate gaps and OFI; significance:
# MATCH for groups under the size floor, run only when there is one: ``summary_sections``), no resampling. F_dist and
# the ECE gap are tested by resampling, which the quick audit skips, so their sections (knee searches, exact
# calibration fits: 3.3 s of 3.5 s CPU at 1M rows) do not run and the Summary names them "not tested here".
SUMMARY_PARAMS = dict(sections=QUICK_SECTIONS)
FOCUS_PARAMS = dict(sections=("parity",))          # the Summary's top finding without MATCH's small-group verdicts


def audit(ctx: Context, full: bool = False, nbytes: int = 0):
    """The audit for the frame's choices, as ``fairviz audit`` runs it (``full``: with every resampled interval
    and test; else the Summary's quick audit), computed once per server in the analysis pool with a progress bar
    (``nbytes``: its peak memory, taken from the server's byte budget while it runs)."""
    findings, words = findings_settings(current_sample(), ctx.attribute, FindingsParams(reference=ctx.reference))
    data = audited(ctx)
    quick = {} if full or not data.binary else dict(sections=summary_sections(data, ctx.attribute, findings))

    def compute(progress):
        options = AuditParams(attribute=ctx.attribute, threshold=ctx.threshold, benefit=ctx.benefit,
                              findings=findings, words=words, progress=progress, **quick)
        result = run_audit(data, options)
        if full and len(data.attribute_names) > 1:     # the report covers every attribute, as `fairviz audit`
            run_attributes(result, data, lambda name: replace(
                options, findings=findings_params_for(data, name, findings, current_sample())))
        return result

    return cached_with_progress("audit_full" if full else "audit_summary", _audit_key(ctx), compute,
                                "Running the full audit" if full else "Summarising", max_entries=8, nbytes=nbytes)


def audited(ctx: Context) -> Predictions:
    """What the audit (Summary, report) reads: the binary page's predictions, or a regression's or multiclass
    audit's own data (every class, not the frame's one class)."""
    return ctx.pred if ctx.task == "binary" else ctx.data


def _audit_key(ctx: Context) -> tuple:
    return (audited(ctx).fingerprint, ctx.attribute, ctx.threshold, ctx.benefit,
            *findings_settings(current_sample(), ctx.attribute, FindingsParams(reference=ctx.reference)))


def forget_report_of_another_view(ctx: Context) -> bool:
    """Whether a full report prepared for another view (τ, attribute, …) was forgotten: the downloads, drawn outside
    Home's τ fragment, then need the app's rerun to offer "Prepare the full report" again."""
    if st.session_state.get("report_key") in (None, _audit_key(ctx)):
        return False
    st.session_state.pop("report_key")
    return True


def report_downloads(ctx: Context) -> None:
    """The full audit as the CLI writes it — JSON, the self-contained HTML report and, on request, its PDF — run
    when asked, in the analysis pool (a slot, the server's byte budget, a progress bar, shared by every visitor
    asking the same). Stop, any other click or closing the tab interrupts it at its next progress report, and its
    slot and bytes are given back."""
    from app_pages import _budget, _jobs
    key = _audit_key(ctx)
    nbytes = _budget.report_estimate(ctx.pred.n)          # weighted data is expanded to rows (D*, knees)
    if st.session_state.get("report_key") != key:
        b1, b2, _ = st.columns([2, 1, 3])
        prepare = b1.button("Prepare the full report", help="Every analysis with its resampled intervals and tests, "
                                                            "as `fairviz audit` runs it; its Summary covers every "
                                                            "comparison.")
        if b2.button("Stop", key="report_stop", help="Interrupts the report within a second or two."):
            st.info("Stopped: nothing was kept. Press **Prepare the full report** again when you want it.")
        if prepare:
            audit(ctx, full=True, nbytes=nbytes)
            st.session_state["report_key"] = key
            st.rerun()
        return
    result = audit(ctx, full=True, nbytes=nbytes)
    stem = safe_stem(ctx.pred.source)
    c1, c2, c3 = st.columns(3)
    c1.download_button("Download JSON", json.dumps(result.data, indent=2).encode(), f"{stem}_audit.json",
                       "application/json")
    html = _jobs.run("report_html", key, "Writing the report", lambda progress: result.to_html().encode(),
                     pool="analysis", keep=4, nbytes=nbytes)
    c2.download_button("Download HTML report", html, f"{stem}_audit.html", "text/html")
    if st.session_state.get("pdf_key") == key:
        c3.download_button("Download PDF", st.session_state["pdf"], f"{stem}_audit.pdf", "application/pdf")
    elif c3.button("Prepare the PDF", help="Headless Chromium prints the HTML report (Summary first)."):
        try:
            st.session_state["pdf"] = _jobs.run("pdf", key, "Printing the report",
                                                lambda progress: html_to_pdf(html.decode()), pool="heavy", keep=4)
        except PdfUnavailable as err:
            st.warning(md(str(err)))
            return
        st.session_state["pdf_key"] = key
        st.rerun()


def section_json(section: str, pred: Predictions, result, options: AuditParams) -> dict:
    """This page's numbers as JSON, rendered from the result it shows by the same function that writes that section
    of `fairviz audit` (one result, many renderers): kept in session state and offered as a download."""
    renderer = next(s for s in SECTIONS if s.name == section)
    data = clean(renderer.to_dict(pred, result, options))
    st.session_state.setdefault(PAGE_JSON, {})[section] = data
    stem = safe_stem(pred.source)
    st.download_button("This page's numbers (JSON)", json.dumps(data, indent=2).encode(), f"{stem}_{section}.json",
                       "application/json", key=f"page_json_{section}",
                       help="The same keys and values as this section of `fairviz audit --json` with these settings.")
    return data


def safe_stem(source: str) -> str:
    """A download file name from the data's name: letters, digits, '-' and '_' only."""
    import re
    return re.sub(r"[^A-Za-z0-9_-]+", "_", source.rsplit(".", 1)[0])[:60] or "fairviz"
