"""What every page imports as ``_ui``: the page helpers (charts, lazy tabs, intervals on request, verdicts, the own-data
line, the warm-up after the first page), and the names of the modules that do the app's other jobs, so a page
reads one namespace:

- ``_frame``: the loaded data, the frame's choices, ``Context`` and ``context()``, the view in the address, the guard;
- ``_tau``: τ's one slider and the fragment (``tau_part``) a page draws it from;
- ``_cache``: ``cached(check, view, params, compute, label)``, the one cache of the pages' analyses, and ``figure``;
- ``_report``: the Summary's audit, the top finding, the report's downloads and a page's section as JSON.
"""
from __future__ import annotations

import gc
import importlib
import logging

import streamlit as st

from fairviz.core.markup import md
from fairviz.data import Predictions
from fairviz.data.tasks import spec_of
from app_pages._cache import CACHE_TTL, cached, figure  # noqa: F401  (the pages' one namespace)
from app_pages._frame import (ATTRIBUTE, BENEFIT, BENEFIT_LABELS, CLASS, MODEL, NEGATIVE_BY_DEFAULT,  # noqa: F401
                              PRED, REFERENCE, Context, add_model, address_selection, binary_only, bundled, context,
                              current, current_sample, guarded, keep_selection_in_address, keep_view_in_address,
                              reference_choices, restart_notice, settle_frame, show_data_error, use_predictions,
                              view_params)
from app_pages._report import (PAGE_JSON, SUMMARY_PARAMS, audit, audited, focus_group,  # noqa: F401
                               forget_report_of_another_view, page_options, report_downloads, safe_stem,
                               section_json, top_finding)
from app_pages._tau import finish_frame, frame_link_slot, frame_threshold, tau_part  # noqa: F401

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


def task_line(ctx: Context) -> None:
    """The loaded data's task in a line under a page's title, in the spec's words: a numeric target's columns, or a
    per-class label's classes (and which pages read the sidebar's class one vs rest)."""
    data = ctx.data
    spec = spec_of(data)
    if spec.numeric_target:
        line = f"target *{md(data.mapping.label)}*, prediction *{md(data.mapping.score)}*."
    elif spec.per_class:
        line = (f"label *{md(data.mapping.label)}*, {len(data.classes)} classes; the sidebar's class is what the "
                "one-vs-rest pages (Residuals, Sample-size significance, thresholds) read.")
    else:
        line = f"label *{md(data.mapping.label)}*."
    st.caption(f"Task: **{md(spec.name)}** — {line}")


def verdict_box(kind: str, text: str) -> None:
    """Coloured reading next to a result: 'good', 'warn', 'bad' or 'info'."""
    {"good": st.success, "warn": st.warning, "bad": st.error}.get(kind, st.info)(text)
