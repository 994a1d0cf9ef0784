"""The two renderers of a display list outside the app: HTML (the report) and plain text (the terminal).

The app's renderer is ``app_pages/_render.py``. All three draw the same items (``fairviz.core.display``); text is
escaped here, span by span, so markup in data never renders.
"""
from __future__ import annotations

import html
import textwrap
from typing import Iterable

import plotly.io as pio

from fairviz.core.display import Bullets, Figure, Group, Item, Metrics, Table, Text

_TAG = {"b": "b", "i": "i", "code": "code"}
_HTML_LEVEL = {"finding": "finding", "note": "note", "caveat": "caveat", "error": "error", "plain": ""}


def text_html(item: Text) -> str:
    """Spans escaped, styles as tags; a bare URL in data cannot become a link (HTML never autolinks)."""
    parts = []
    for span in item.spans:
        escaped = html.escape(span.text, quote=True)
        tag = _TAG.get(span.style)
        parts.append(f"<{tag}>{escaped}</{tag}>" if tag else escaped)
    return "".join(parts)


def to_html(items: Iterable[Item], depth: int = 3) -> str:
    """The items as an HTML fragment (headings from ``h{depth}``; plotly.js is loaded once by the page)."""
    out = []
    for item in items:
        if isinstance(item, Text):
            if item.level in ("heading", "subheading"):
                h = depth if item.level == "heading" else depth + 1
                out.append(f"<h{h}>{text_html(item)}</h{h}>")
            else:
                cls = _HTML_LEVEL.get(item.level, "")
                out.append(f"<p class='{cls}'>{text_html(item)}</p>" if cls else f"<p>{text_html(item)}</p>")
        elif isinstance(item, Bullets):
            cls = _HTML_LEVEL.get(item.level, "")
            out.append(f"<ul class='{cls}'>" + "".join(f"<li>{text_html(t)}</li>" for t in item.items) + "</ul>")
        elif isinstance(item, Metrics):
            cells = "".join(f"<div class='metric'><div class='metric-label'>{text_html(m.label)}</div>"
                            f"<div class='metric-value'>{html.escape(m.value)}</div></div>" for m in item.items)
            out.append(f"<div class='metrics'>{cells}</div>")
        elif isinstance(item, Table):
            if item.title is not None:
                out.append(f"<p><b>{text_html(item.title)}</b></p>")
            out.append(item.formatted().to_html(index=False, escape=True, border=0, classes="table"))
            if item.caption is not None:
                out.append(f"<p class='note'>{text_html(item.caption)}</p>")
        elif isinstance(item, Figure):
            out.append(pio.to_html(item.figure(), include_plotlyjs=False, full_html=False,
                                   config={"displaylogo": False}))
            if item.caption is not None:
                out.append(f"<p class='note'>{text_html(item.caption)}</p>")
        elif isinstance(item, Group):
            inner = to_html(item.items, depth + 1)
            title = html.escape(item.title)
            if item.collapsed:
                out.append(f"<details><summary>{title}</summary>{inner}</details>")
            else:
                out.append(f"<h{depth}>{title}</h{depth}>{inner}")
    return "".join(out)


_TERMINAL_PREFIX = {"finding": "", "note": "note: ", "caveat": "caveat: ", "error": "error: ", "plain": ""}


def to_terminal(items: Iterable[Item], width: int = 110, indent: str = "") -> str:
    """The items as plain text for a terminal or a CI log: figures and collapsed (detail) groups, at any depth, are
    left out (the HTML report and the page have them)."""
    lines: list[str] = []
    for item in items:
        if isinstance(item, Text):
            if item.level in ("heading", "subheading"):
                lines.append(indent + item.plain())
            else:
                lines += textwrap.wrap(_TERMINAL_PREFIX.get(item.level, "") + item.plain(), width,
                                       initial_indent=indent, subsequent_indent=indent + "  ") or [indent]
        elif isinstance(item, Bullets):
            for t in item.items:
                lines += textwrap.wrap(t.plain(), width, initial_indent=indent + "- ",
                                       subsequent_indent=indent + "  ")
        elif isinstance(item, Metrics):
            lines.append(indent + " · ".join(f"{m.label.plain()}: {m.value}" for m in item.items))
        elif isinstance(item, Table):
            if item.title is not None:
                lines.append(indent + item.title.plain())
            body = item.formatted().to_string(index=False)
            lines += [indent + "  " + row for row in body.splitlines()]
        elif isinstance(item, Group):
            if item.collapsed:
                continue                      # detail: the HTML report and the page have it
            lines.append(indent + item.title)
            lines.append(to_terminal(item.items, width, indent + "  "))
    return "\n".join(line for line in lines if line is not None)
