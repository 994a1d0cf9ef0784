"""fairviz — the app's entry point and frame: the navigation, then the choices every audit page shares (data badge,
group attribute, decision threshold τ, beneficial outcome), then the page.

The frame's widgets are drawn here, once per run, before ``pg.run()``: Streamlit ties a widget drawn in the
entrypoint to the app rather than to a page, so its value survives page switches and reruns without copying it
back. Pages read the choices with ``_ui.context()``.
"""
from __future__ import annotations

import streamlit as st
from streamlit.navigation.page import StreamlitPage

from fairviz.core.markup import md
from fairviz.data.scales import score_statement
from fairviz.data.tasks import spec_of
from app_pages import _ui

st.set_page_config(page_title="fairviz", page_icon="assets/logo.svg", layout="wide")
st.logo("assets/logo.svg")

# Presenter layout: a page must read on a 1280×720 projector with the sidebar open (tests/browser/test_layout.py).
# A compact header (less space above a smaller title, narrower side padding: ~170 px more for the first chart and
# the tables), and headline numbers and their labels that wrap instead of being cut to "-0.…".
PRESENTER_CSS = """
[data-testid="stMainBlockContainer"] { padding-top: 3rem; padding-left: 2rem; padding-right: 2rem; }
[data-testid="stMainBlockContainer"] h1 { font-size: 2rem; padding: 0 0 0.25rem 0; }
[data-testid="stMetricValue"], [data-testid="stMetricValue"] *, [data-testid="stMetricLabel"],
[data-testid="stMetricLabel"] * { white-space: normal !important; overflow: visible !important;
                                  text-overflow: clip !important; overflow-wrap: anywhere; }
[data-testid="stMetricValue"] { font-size: 1.8rem; line-height: 1.2; }
[data-testid="stTable"] th, [data-testid="stTable"] td { padding: 0.2rem 0.5rem; }
"""
st.html(f"<style>{PRESENTER_CSS}</style>")


def _page(name: str, title: str, icon: str, **kwargs) -> StreamlitPage:
    return st.Page(f"app_pages/{name}.py", title=title, icon=f":material/{icon}:", **kwargs)


HOME = _page("home", "Home", "home", default=True)
RESIDUALS = _page("residuals", "Residual distribution", "stacked_line_chart")
CALIBRATION = _page("calibration", "Calibration", "target")
PARITY = _page("parity", "Group parity", "balance")
SIGNIFICANCE = _page("significance", "Sample-size significance", "casino")
KNEE_PROBING = _page("knee_probing", "Knee probing & augmentation", "science")
REWEIGHTING = _page("reweighting", "Evaluation reweighting", "scale")
SIMULATOR = _page("simulator", "Retraining simulator", "model_training")
SYNTHETIC_DATA = _page("synthetic_data", "Synthetic data (HydraGAN)", "dataset")
EXPLANATIONS = _page("explanations", "Explanation disparity", "manage_search")
FORECAST_FAIRNESS = _page("forecast_fairness", "Forecast fairness", "ssid_chart")
LORENZ = _page("lorenz", "Lorenz & PTN", "cyclone")
CONDITIONS_REFERENCE = _page("conditions_reference", "Paper reference: conditions", "menu_book")
THRESHOLDS = _page("thresholds", "Per-group thresholds", "tune")
SLICES = _page("slices", "Slices", "view_quilt")

PAGES = {
    "": [HOME],
    "Audit": [RESIDUALS, CALIBRATION, PARITY, SIGNIFICANCE, SLICES],
    # what a team can do about a finding: probe and augment the knees, reweight the evaluation, simulate retraining
    # under other data conditions, generate data with diversity quotas
    "What to do": [THRESHOLDS, KNEE_PROBING, REWEIGHTING, SIMULATOR, SYNTHETIC_DATA],
    "Explanations & forecasts": [EXPLANATIONS, FORECAST_FAIRNESS],
    "Research & reference": [LORENZ, CONDITIONS_REFERENCE],
}

# the pages that read the loaded data through _ui.context(): they show the frame. The other pages bring their own
# data (a forecast file, a training set, the Lorenz system, the paper's tables), so the frame would only distract.
FRAMED = (HOME, RESIDUALS, CALIBRATION, PARITY, SIGNIFICANCE, EXPLANATIONS, REWEIGHTING, THRESHOLDS, SLICES)
# framed pages that show their own data unless asked (Explanations reads the loaded data only under 'Compute now'):
# the sidebar does not name the loaded data as what the page shows
OWN_DATA = (EXPLANATIONS,)
# the beneficial outcome changes what these show: OFI/DI and MATCH/CPS count the benefit, and Home's audit report
# holds both. Elsewhere it would be a switch that changes nothing on the page.
WITH_BENEFIT = (HOME, PARITY, SIGNIFICANCE)
# the pages that compare groups: the reference group (each group vs it) is theirs
WITH_REFERENCE = (HOME, RESIDUALS, CALIBRATION, PARITY, SIGNIFICANCE)
# pages that draw τ (in its sidebar place) from their own fragment, with the part τ changes: a τ step reruns that
# fragment alone (Home: its Summary; an audit page: its analysis), not the whole app (_ui.tau_part)
TAU_IN_PAGE = (HOME, RESIDUALS, CALIBRATION, PARITY, SIGNIFICANCE)

MODEL_HELP = ("The data holds several models' scores for the same rows: every page audits this one; each page's "
              "'Compare models' view sets them side by side with paired tests.")
ATTRIBUTE_HELP = ("Which column defines the groups compared on every page; 'a × b' compares the intersections of two "
                  "columns (small intersections make metrics jumpy: read them with the Sample-size significance page).")
REFERENCE_HELP = ("Each group is compared with this one (Aequitas' convention): the Summary's findings and the "
                  "pages' default comparisons. It starts on the sample's own reference or the largest group.")
BENEFIT_HELP = ("OFI and DI need to know which prediction helps a person (hired, granted, released). For COMPAS a high "
                "risk score is a harm, so the benefit is the negative prediction ('low risk'); flipping swaps TP↔TN "
                "and FN↔FP.")


CLASS_HELP = ("Multiclass data: the pages that read a two-valued label (residuals, sample-size significance, "
              "thresholds) audit this class against every other one; Calibration and Group parity show every class.")


def data_statement(pred) -> str:
    """What the loaded data are, in a line: the task and its columns."""
    mapping, spec = pred.mapping, spec_of(pred)
    if spec.numeric_target:
        return f"Task: {md(spec.name)} · target *{md(mapping.label)}* · prediction *{md(mapping.score)}*"
    if spec.per_class:
        return f"Task: {md(spec.name)} ({len(pred.classes)} classes) · label *{md(mapping.label)}*"
    return f"{md(score_statement(mapping.to_dict()))} · label *{md(mapping.label)}*"


def draw_frame(benefit: bool, reference: bool, own_data: bool = False, tau_in_page: bool = False):
    """The shared choices. Each keeps its value with ``persist_state="session"`` (Streamlit's own way) while a page
    that does not show it is open; values are set through session state (``_ui.settle_frame``), never as defaults."""
    pred = _ui.current()
    _ui.settle_frame(pred)
    _ui.restart_notice()
    with st.sidebar:
        if own_data:
            st.markdown(f"**Data:** this page's own (see the page). Loaded on Home: {md(pred.source)}")
        else:
            st.markdown(f"**Data:** {md(pred.source)}  \n{pred.n:,} rows · {data_statement(pred)}")
        if pred.several_models:
            st.selectbox("Model", pred.model_names, key=_ui.MODEL, persist_state="session", help=MODEL_HELP)
        spec = spec_of(pred)
        if spec.per_class:
            st.selectbox("Class (one vs rest)", pred.classes, key=_ui.CLASS, persist_state="session",
                         help=CLASS_HELP)
        st.selectbox("Group attribute", pred.choices(), key=_ui.ATTRIBUTE, persist_state="session",
                     help=ATTRIBUTE_HELP)
        if spec.numeric_target:                  # no threshold and no beneficial prediction: a number is predicted
            _ui.frame_threshold(in_page=False, shown=False)
            benefit = False
        else:
            _ui.frame_threshold(in_page=tau_in_page)
        if benefit:
            st.radio("Beneficial outcome", list(_ui.BENEFIT_LABELS), format_func=_ui.BENEFIT_LABELS.get,
                     key=_ui.BENEFIT, persist_state="session", help=BENEFIT_HELP)
        groups = _ui.reference_choices(pred, st.session_state[_ui.ATTRIBUTE])
        if reference and groups:
            st.selectbox("Reference group", groups, key=_ui.REFERENCE, help=REFERENCE_HELP)
        return _ui.frame_link_slot()   # "Link to this view", filled after the page chose its own selection


pg = st.navigation(PAGES, expanded=True)      # every page listed: a collapsed menu hides pages in a demo
link_slot = None
if any(pg is framed for framed in FRAMED):
    link_slot = draw_frame(benefit=any(pg is shown for shown in WITH_BENEFIT),
                           reference=any(pg is shown for shown in WITH_REFERENCE),
                           own_data=any(pg is shown for shown in OWN_DATA),
                           tau_in_page=any(pg is shown for shown in TAU_IN_PAGE))
    _ui.keep_view_in_address(_ui.context())   # the frame's choices reach the address before the page runs
pg.run()
if link_slot is not None:
    _ui.finish_frame()                        # τ and "Link to this view", unless the page's fragment drew them
_ui.warm_up()                                 # once per process, after the first page is drawn
