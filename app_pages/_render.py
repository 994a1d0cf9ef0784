"""The app's renderer of a display list (``fairviz.core.display``): the same items the HTML report and the terminal
draw, as Streamlit elements. Text is escaped span by span for Markdown (``md``); tables go to ``st.dataframe``, whose
cells are plain text; figures are built when drawn and kept per ``key``."""
from __future__ import annotations

from typing import Iterable

import streamlit as st

from fairviz.core.display import Bullets, Figure, Group, Item, Metrics, Table, Text
from fairviz.core.markup import md

_MARK = {"b": "**", "i": "*", "code": "`"}
_CALLOUT = {"finding": "info", "caveat": "warning", "error": "error"}


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


def render(items: Iterable[Item], where=None, figure_cache=None) -> None:
    """Draw ``items`` in ``where`` (the page, a column, a tab, an expander). ``figure_cache(key, build)`` keeps
    built figures (``_ui.figure``); without it each figure is built on every run."""
    where = where or st
    for item in items:
        if isinstance(item, Text):
            body = markdown(item)
            if item.level == "heading":
                where.subheader(body)
            elif item.level == "subheading":
                where.markdown(f"**{body}**")
            elif item.level == "note":
                where.caption(body)
            elif item.level in _CALLOUT:
                getattr(where, _CALLOUT[item.level])(body)
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
            where.dataframe(frame, hide_index=True, width="stretch", column_config=config)
            if item.caption is not None:
                where.caption(markdown(item.caption))
        elif isinstance(item, Figure):
            fig = figure_cache(item.key, item.build) if (figure_cache and item.key is not None) else item.figure()
            where.plotly_chart(fig, width="stretch", config={"displayModeBar": False} if item.static else None)
            if item.caption is not None:
                where.caption(markdown(item.caption))
        elif isinstance(item, Group):
            if item.collapsed:
                with where.expander(item.title):
                    render(item.items, st, figure_cache)
            else:
                where.markdown(f"#### {md(item.title)}")
                render(item.items, where, figure_cache)
