"""The frame every framed page shares: the loaded data in session state, the frame's choices (model, class, group
attribute, τ, beneficial outcome, reference group) and the ``Context`` a page reads, the view in the address bar, and
the guard a page body runs in.

The frame is drawn once per run by ``app.py`` before the page runs, so its widgets keep their values across pages
and reruns. Pages stay thin: read ``context()``, call ``_cache.cached``, render the display list.
"""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import streamlit as st

from fairviz.core.markup import md
from fairviz.data import DataError, Predictions
from fairviz.data.samples import DEFAULT_SAMPLE, load_sample, negative_benefit_samples, samples
from fairviz.data.tasks import spec_of
from fairviz.data.view import View
from app_pages._cache import CACHE_TTL

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
FROM_LINK = "_from_link"       # the view a new session read from its address, applied once to the frame
RESTARTED = "restarted_on_sample"   # set when a refresh lost the visitor's upload
UPLOAD_PARAM = "data"          # ?data=upload in the address bar survives a refresh; session state does not
DEFAULT_THRESHOLD = 0.5
BENEFIT_LABELS = {"positive": "Positive prediction (score ≥ τ)", "negative": "Negative prediction (score < τ)"}
NEGATIVE_BY_DEFAULT = negative_benefit_samples()   # samples whose positive prediction is a harm (assets/samples.json)
log = logging.getLogger("fairviz.app")


@dataclass(frozen=True)
class Context:
    """What a framed page reads: the frame's ``view``, ``data``, the chosen model's predictions as loaded (of any
    task: every class of a model of classes), and ``pred``, the table the view selects (that model, or the chosen
    class one vs rest)."""
    view: View
    pred: Predictions
    data: Predictions

    @property
    def spec(self):
        """The loaded data's task (``fairviz.data.tasks``): what a page asks instead of comparing task names."""
        return spec_of(self.data)

    @property
    def attribute(self) -> str:
        return self.view.attribute

    @property
    def threshold(self) -> float:
        return self.view.threshold

    @property
    def benefit(self) -> str:
        """Which prediction helps a person: "positive" (score ≥ τ) or "negative"."""
        return self.view.benefit

    @property
    def reference(self) -> str | None:
        """The group others are compared with (None: the largest)."""
        return self.view.reference

    @property
    def class_name(self) -> str | None:
        """The class ``pred`` reads one vs rest (None: the task has no classes)."""
        return self.view.class_name

    @property
    def model(self) -> str:
        """The model the page audits (``pred`` is its predictions; the frame's model picker chooses it)."""
        return self.pred.active_model

    @property
    def joint(self) -> Predictions:
        """Every model's predictions on the same rows (what a Compare view and "Add as a model" read)."""
        return self.pred.joint()

    def with_view(self, **changes) -> "Context":
        """The same data seen with the view's ``changes`` (a page's own beneficial outcome, …); the derived table is
        taken again only when the model or the class changes."""
        view = replace(self.view, **changes)
        same_table = (view.model, view.class_name) == (self.view.model, self.view.class_name)
        data = self.data if view.model == self.view.model else self.data.at(replace(view, class_name=None))
        return Context(view, self.pred if same_table else data.at(view), data)


def context() -> Context:
    """The data and the frame's choices (attribute, τ, beneficial outcome), drawn by the app before this page ran.
    A page script run on its own (a test) has no frame: it reads the same choices' defaults."""
    pred = current()
    settle_frame(pred)                # a no-op after the frame drew its widgets
    state = st.session_state
    view = View(model=state[MODEL] if pred.several_models else None, attribute=state[ATTRIBUTE],
                class_name=state[CLASS] if spec_of(pred).per_class else None, threshold=float(state[THRESHOLD]),
                benefit=state[BENEFIT], reference=state.get(REFERENCE))
    return Context(view, pred.at(view), pred.at(replace(view, class_name=None)))   # the picked model, every class


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


def current_sample():
    """The bundled sample in use (None for an upload): its settings shape the Summary (reference group, words)."""
    key = st.session_state.get("sample_key")
    return samples().get(key) if key else None


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
    if spec_of(pred).per_class and state.get(CLASS) not in pred.classes:
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


def binary_only(ctx: Context, title: str) -> bool:
    """False, with one line saying where to look instead, when the page's method needs a two-valued label and the
    data's target is a number (data with classes reach these pages one vs rest: the sidebar's class)."""
    if not ctx.spec.numeric_target:
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
    if spec_of(pred).per_class and view.get("class") in pred.classes:
        state[CLASS] = view["class"]


def view_params(ctx: "Context") -> dict[str, str]:
    """The view as address parameters: the bundled sample (an upload is never in a link: ``data=upload`` only says
    that the view was of one) and the frame's choices."""
    key = st.session_state.get("sample_key")
    params = {"sample": key} if key else {UPLOAD_PARAM: "upload"}
    return params | ctx.view.to_params()


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
    return f"{base}?{urlencode(params | address_values())}"


SELECTION = ("group", "vs", "metric")    # a page's own selection in the address: the compared group(s), the metric


def address_values(names=SELECTION) -> dict[str, str]:
    try:
        return {k: st.query_params.get(k) for k in names if st.query_params.get(k) is not None}
    except Exception:  # noqa: BLE001 - no browser (bare script run)
        return {}


def address_selection(page: str) -> dict[str, str]:
    """The selection a link or a refresh put in the address for ``page`` (group, vs, metric), once: a rerun after
    the visitor changed a picker keeps the picker's value, and the address then follows the picker
    (``keep_selection_in_address``)."""
    wanted = address_values()
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
