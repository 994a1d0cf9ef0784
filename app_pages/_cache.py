"""One cache for every page: ``cached(check, view, params, compute, label)`` runs an analysis once per (check, data,
view, params) for the whole server, with a progress bar, a Stop that keeps what finished, and a bounded store;
``figure(key, build)`` keeps a built figure in the same server store (no bar: a figure takes milliseconds).

Both are ``_jobs``' server-wide store (bounded in entries per check, and in bytes for what is built from a visitor's
file), so the app has one caching mechanism for what it computes. ``st.cache_data`` replays the element calls made
inside a cached function, so a progress bar cannot live there; here the bar is drawn outside the computation.
"""
from __future__ import annotations

from typing import Any, Callable, Hashable

import streamlit as st

CACHE_TTL = "2h"               # every st.cache_data / st.cache_resource left (data, not analyses) has this lifetime
Progress = Callable[[float, str], None]
ANALYSES_PER_CHECK = 16        # finished results kept per check (each key: data × view × params)
FIGURES_KEPT = 64


def cached(check, view: Hashable, params: Hashable, compute: Callable[[Progress], Any], label: str, *,
           data=None, keep: int = ANALYSES_PER_CHECK, nbytes: int = 0, keep_bytes: int | None = None,
           bar: bool = True) -> Any:
    """``compute(progress)`` once per (``check``, the data, ``view``, ``params``) for the whole server.

    ``check``: a ``fairviz.core.checks.Check`` or the name of what is computed (the store it is kept in);
    ``view``: what the page looks at (the frame's View: model, attribute, class, τ, benefit, reference; or the part
    of it the check reads); ``params``: every other setting that changes the result; ``data``: the predictions read
    (default: the session's), whose fingerprint makes the key's first part (``_jobs.stopped_result`` reads it).
    Identical requests from many sessions compute once (the others wait for that result), a bounded number of
    analyses run at a time (the "analysis" pool), a Stop keeps what a loop finished (``_jobs.stopped_result``), and
    the last ``keep`` results per check stay (``keep_bytes``: bounded in bytes too). ``nbytes``: the run's peak
    memory, taken from the server's byte budget while it runs (``_budget``). ``bar=False``: a transient spinner
    instead of the bar, for a computation that reports no progress. Results are immutable."""
    from app_pages import _jobs
    if data is None:
        from app_pages._frame import current
        data = current()
    key = (getattr(data, "fingerprint", data), view, params)
    return _jobs.run(_name(check), key, label, compute, pool="analysis", keep=keep, nbytes=nbytes,
                     keep_bytes=keep_bytes, bar=bar)


def _name(check) -> str:
    return check if isinstance(check, str) else check.name


def figure(key: tuple, build: Callable[[], object]):
    """A figure built once per ``key`` (what it is, the data's fingerprint and every parameter it draws) and kept
    for the whole server: a rerun that changes nothing it draws (another widget, a tab switch, the threshold on a
    page that does not read it) reuses it instead of rebuilding it (tens to hundreds of ms each). Shared, never
    mutated after it is built. Figures escape the names they take from data where those enter them (``plot_text``),
    so nothing is escaped here and the markup we write survives. ``build`` may return a list of figures."""
    from app_pages import _jobs
    return _jobs.kept("figure", key, build, keep=FIGURES_KEPT)

