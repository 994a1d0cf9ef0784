"""τ drawn by a page: the decision threshold's one slider, and the ``st.fragment`` (``tau_part``) that draws it in
the frame's sidebar place from the page, with "Link to this view", so a τ step reruns that part of the page alone.
"""
from __future__ import annotations

import functools
from typing import Callable

import streamlit as st

from app_pages._frame import PRED, THRESHOLD, context, guarded, keep_view_in_address

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
