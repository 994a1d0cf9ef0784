"""The app's renderer of a display list (``fairviz.core.display``): the same items the HTML report and the terminal
draw, as Streamlit elements. Text is escaped span by span for Markdown (``md``); tables go to ``st.dataframe``, whose
cells are plain text (one too wide for its columns to ``st.table``, escaped, with the grid on request); figures are
built when drawn, kept per ``key`` and drawn in their own template (``plotly_chart``).

Caveats are folded: every caveat a page renders in one run goes into one "N caveats" expander placed right after
the page's first chart (before any chart: after the first finding or table, else where the first caveat came), so
a page opens on its result instead of a column of yellow boxes. Pages render in several calls; the fold lives in
session state for the run (``_fold``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from fairviz.core.display import Bullets, Figure, Group, Item, Metrics, Table, Text
from fairviz.core.markup import md

_MARK = {"b": "**", "i": "*", "code": "`"}
_CALLOUT = {"finding": "info", "error": "error"}      # findings in a neutral (blue) box; red only for errors
_FOLD = "_caveat_fold"


@dataclass
class _Fold:
    """This run's caveats and the placeholder (``st.empty``) their expander is drawn in. ``anchor`` says what the
    placeholder follows: None (where the first caveat came), "finding" (the first finding or table) or "figure" (the
    first chart: it stays there)."""
    run: object
    caveats: list = field(default_factory=list)
    slot: object = None
    anchor: str | None = None


def _fold() -> _Fold:
    """The fold of this script run: Streamlit gives every run a fresh cursor map, so a rerun starts a new fold."""
    ctx = get_script_run_ctx()
    run = ctx.cursors if ctx is not None else None
    fold = st.session_state.get(_FOLD)
    if not isinstance(fold, _Fold) or fold.run is not run:
        fold = _Fold(run)
        st.session_state[_FOLD] = fold
    return fold


def _draw_caveats(fold: _Fold) -> None:
    count = len(fold.caveats)
    box = fold.slot.container().expander(f"{count} caveat{'s' if count != 1 else ''}", icon=":material/info:")
    for caveat in fold.caveats:
        box.warning(caveat)


def add_caveat(body: str, where=None) -> None:
    """Fold one caveat (escaped Markdown: ``markdown(text)``) into the page's caveats expander."""
    where = where or st
    fold = _fold()
    fold.caveats.append(body)
    if fold.slot is None:
        fold.slot = where.empty()
    _draw_caveats(fold)


def anchor_caveats(where, kind: str = "figure") -> None:
    """Called after a chart ("figure") or a finding/table ("finding") is drawn in ``where``: the caveats' expander
    moves right after the page's first chart (or, until a chart comes, after the first finding or table)."""
    fold = _fold()
    if fold.anchor == "figure" or (kind == "finding" and (fold.anchor == "finding" or fold.slot is None)):
        return
    if fold.slot is not None:
        fold.slot.empty()
    fold.slot = where.empty()
    fold.anchor = kind
    if fold.caveats:
        _draw_caveats(fold)


def markdown(item: Text) -> str:
    """Our styles as Markdown marks around escaped characters. Code spans escape nothing in Markdown, so their
    characters are shown bold instead of as code when they come from data (they are never ours alone)."""
    parts = []
    for span in item.spans:
        mark = _MARK.get(span.style, "")
        if span.style == "code":
            parts.append(f"**{md(span.text)}**")
        else:
            parts.append(f"{mark}{md(span.text)}{mark}" if mark else md(span.text))
    return "".join(parts)


def _number_column(kind: str):
    printf = {"int": "%d", "num": "%.3f", "num2": "%.2f", "num4": "%.4f"}.get(kind)
    return st.column_config.NumberColumn(format=printf) if printf else None


def table_frame(item: Table):
    """What st.dataframe shows: numbers stay numbers (sortable) with their format; p-values, intervals and text
    read as the HTML report reads them."""
    frame = item.frame.copy()
    config = {}
    for column in frame.columns:
        kind = item.formats.get(column)
        heading = item.heading(column)
        if kind in ("int", "num", "num2", "num4"):
            config[heading] = _number_column(kind)       # numbers stay numbers (sortable); undefined is empty
        elif kind is not None or frame[column].dtype == object:
            frame[column] = item.formatted()[heading].values     # p-values, intervals, text: as the report reads
    frame.columns = [item.heading(c) for c in frame.columns]
    return frame, config


# The main column's width at 1280 px with the sidebar open (app.py's layout), and what a grid column takes: about
# 7.5 px a character of its widest cell or heading plus 13 px of padding (measured in Chromium on the residual
# pairs table: 148 characters in 14 columns drew 1,293 px).
MAIN_WIDTH_PX = 880
CHAR_PX, COLUMN_PX = 7.5, 13
STATIC_ROWS = 1_000        # a wider table with more rows stays a grid (a static table sends every cell as HTML)
SCROLL_ROWS, SCROLL_PX = 15, 420   # a longer static table scrolls within this height, its headings kept in view


def too_wide(item: Table) -> bool:
    """Whether the grid (which never wraps a cell) would hide columns behind a horizontal scroll on a projector."""
    shown = item.formatted()
    if len(shown) > STATIC_ROWS:
        return False
    chars = sum(max([len(str(c))] + [len(v) for v in shown[c]]) for c in shown.columns)
    return CHAR_PX * chars + COLUMN_PX * len(shown.columns) > MAIN_WIDTH_PX


def static_frame(item: Table):
    """The table as ``st.table`` draws it: cells and headings as the report reads them, wrapped to fit. ``st.table``
    reads Markdown in cells, so every cell is escaped (``md``): a name from data shows as typed."""
    shown = item.formatted()
    out = shown.map(md)
    out.columns = [md(c) for c in shown.columns]
    return out


def render(items: Iterable[Item], where=None, figure_cache=None, folded: bool = False) -> None:
    """Draw ``items`` in ``where`` (the page, a column, a tab, an expander). ``figure_cache(key, build)`` keeps
    built figures (``_ui.figure``); without it each figure is built on every run. Caveats go to the page's one
    caveats expander, except inside a collapsed group (``folded``), which is already closed."""
    where = where or st
    for item in items:
        if isinstance(item, Text):
            body = markdown(item)
            if item.level == "caveat" and not folded:
                add_caveat(body, where)
            elif item.level == "caveat":
                where.warning(body)
            elif item.level == "heading":
                where.subheader(body)
            elif item.level == "subheading":
                where.markdown(f"**{body}**")
            elif item.level == "note":
                where.caption(body)
            elif item.level in _CALLOUT:
                getattr(where, _CALLOUT[item.level])(body)
                if item.level == "finding" and not folded:
                    anchor_caveats(where, "finding")
            else:
                where.markdown(body)
        elif isinstance(item, Bullets):
            body = "\n".join(f"- {markdown(t)}" for t in item.items)
            if item.level == "note":
                where.caption(body)
            elif item.level == "finding":              # findings stand out in a neutral box (red is for errors)
                where.container(border=True).markdown(body)
            else:
                where.markdown(body)
        elif isinstance(item, Metrics):
            columns = where.columns(len(item.items))
            for column, metric in zip(columns, item.items):
                column.metric(markdown(metric.label), metric.value, help=metric.help)
        elif isinstance(item, Table):
            if item.title is not None:
                where.markdown(f"**{markdown(item.title)}**")
            frame, config = table_frame(item)
            if too_wide(item):                   # every column on screen; the sortable grid on request
                where.table(static_frame(item), hide_index=True,
                            height="content" if len(item.frame) <= SCROLL_ROWS else SCROLL_PX)
                where.expander("Sortable table", icon=":material/table_view:").dataframe(
                    frame, hide_index=True, width="stretch", column_config=config)
            else:
                where.dataframe(frame, hide_index=True, width="stretch", column_config=config)
            if item.caption is not None:
                where.caption(markdown(item.caption))
            if not folded:
                anchor_caveats(where, "finding")
        elif isinstance(item, Figure):
            fig = figure_cache(item.key, item.build) if (figure_cache and item.key is not None) else item.figure()
            plotly_chart(where, fig, config={"displayModeBar": False} if item.static else None)
            if item.caption is not None:
                where.caption(markdown(item.caption))
            if not folded:
                anchor_caveats(where, "figure")
        elif isinstance(item, Group):
            if item.collapsed:
                with where.expander(item.title):
                    render(item.items, st, figure_cache, folded=True)
            else:
                where.markdown(f"#### {md(item.title)}")
                render(item.items, where, figure_cache, folded)


def plotly_chart(where, fig, **kwargs):
    """Every chart of the app: the figure's own template (``fairviz.core.theme``: 16 px dark text), not Streamlit's
    chart theme, which would replace its fonts with 12.75 px grey ones; the chart fills its container."""
    return where.plotly_chart(fig, width=kwargs.pop("width", "stretch"), theme=None, **kwargs)
