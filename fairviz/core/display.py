"""The display list: what a section shows, in reading order, as neutral items that every renderer draws.

A report section turns its result into a list of items — ``Text`` (a paragraph with a level), ``Bullets``,
``Metrics`` (headline numbers), ``Table`` (a DataFrame with column formats), ``Figure`` (a Plotly figure, built
lazily) and ``Group`` (a titled block the app may put in a tab or an expander). The Streamlit page, the HTML report
and the terminal render the same list (``fairviz.report.render`` and ``app_pages/_render.py``), so a sentence or a
table is written once.

Escaping happens here, once: text is a sequence of ``Span``s whose *style* (bold, italic, code) comes only from the
template we write (``text("... **{group}** ...", group=name)``) and whose *characters* are data that every renderer
escapes for its medium. A group named ``**x**`` or ``[a](http://…)`` shows as typed. Figures escape the strings they
take from data where those enter the figure (``fairviz.core.markup.plot_text``), so markup we put in a figure
(a bold cell, a ``<sub>``) survives.
"""
from __future__ import annotations

import math
import re
import string
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Literal, Mapping, Union

import pandas as pd

from fairviz.core.wording import fmt, fmt_p

Level = Literal["heading", "subheading", "finding", "note", "caveat", "error", "plain"]
Style = Literal["", "b", "i", "code"]


@dataclass(frozen=True)
class Span:
    text: str
    style: Style = ""


@dataclass(frozen=True)
class Text:
    """One paragraph. ``level`` says how it reads: a heading, a finding (the point of the section), a note, a caveat
    (a limit on what the numbers mean), an error, or plain text."""
    spans: tuple[Span, ...]
    level: Level = "plain"

    def plain(self) -> str:
        """The characters, without styles (JSON readings, the terminal, tests)."""
        return "".join(s.text for s in self.spans)

    def __str__(self) -> str:
        return self.plain()


@dataclass(frozen=True)
class Bullets:
    items: tuple[Text, ...]
    level: Level = "plain"


@dataclass(frozen=True)
class Metric:
    label: Text
    value: str                    # already formatted: a metric never truncates to "-0.…" because we chose the digits
    help: str | None = None


@dataclass(frozen=True)
class Metrics:
    items: tuple[Metric, ...]


# Column formats: a small vocabulary every renderer knows (a printf spec would not say "p-value" or "interval").
ColumnFormat = Literal["text", "int", "num", "num2", "num4", "pct", "p", "ci", "bool"]


@dataclass(frozen=True)
class Table:
    """A table: ``frame`` holds the values as computed (JSON rows come from these records), ``formats`` how each
    column reads, ``labels`` the heading shown for a column (the key otherwise). ``key`` names the table for tests
    and downloads."""
    frame: pd.DataFrame
    key: str
    formats: Mapping[str, ColumnFormat] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    title: Text | None = None
    caption: Text | None = None

    def heading(self, column: str) -> str:
        return self.labels.get(column, str(column))

    def formatted(self) -> pd.DataFrame:
        """Every cell as the text people read (HTML report, terminal), headings applied."""
        out = pd.DataFrame({self.heading(c): [format_cell(v, self.formats.get(c)) for v in self.frame[c]]
                            for c in self.frame.columns})
        return out

    def records(self) -> list[dict]:
        return self.frame.to_dict(orient="records")


@dataclass(frozen=True)
class Figure:
    """A Plotly figure, built when a renderer draws it (a closed tab builds nothing). ``key`` identifies what it
    draws (the data's fingerprint and every parameter) so the app can keep it; None: not kept."""
    build: Callable[[], Any]
    key: tuple | None = None
    caption: Text | None = None
    static: bool = False          # the app draws it without Plotly's mode bar (small multiples)

    def figure(self):
        return self.build()


@dataclass(frozen=True)
class Group:
    """A titled block. The HTML report and the terminal draw it as a subsection; a page may draw it in a tab or an
    expander (``collapsed``: closed until opened) or pick it out by ``key``."""
    title: str
    items: tuple["Item", ...]
    key: str = ""
    collapsed: bool = False


Item = Union[Text, Bullets, Metrics, Table, Figure, Group]


# ------------------------------------------------------------------------------------------------ building text

_MARK = re.compile(r"(\*\*|\*|`)")
_STYLE_OF = {"**": "b", "*": "i", "`": "code"}
_FORMATTER = string.Formatter()


def text(template: str, level: Level = "plain", **fields) -> Text:
    """A paragraph from our template: ``**bold**``, ``*italic*`` and ```code``` marks and ``{name}``/``{name:spec}``
    placeholders. Marks are read from the template only; a field's value is data whatever it contains."""
    spans: list[Span] = []
    style: Style = ""
    for piece in _MARK.split(template):
        if piece in _STYLE_OF:
            mark = _STYLE_OF[piece]
            style = "" if style == mark else mark
            continue
        for literal, name, spec, conversion in _FORMATTER.parse(piece):
            if literal:
                spans.append(Span(literal, style))
            if name is not None:
                value = _FORMATTER.get_field(name, (), fields)[0]
                value = _FORMATTER.convert_field(value, conversion)
                spans.append(Span(_FORMATTER.format_field(value, spec) if spec else _plain(value), style))
    return Text(tuple(_merge(spans)), level)


def join(*parts: Text | str, level: Level | None = None) -> Text:
    """Texts (and literal strings of ours) run together into one paragraph."""
    spans: list[Span] = []
    for part in parts:
        spans += [Span(part)] if isinstance(part, str) else list(part.spans)
    first = next((p for p in parts if isinstance(p, Text)), None)
    return Text(tuple(_merge(spans)), level or (first.level if first else "plain"))


def heading(title: str, **fields) -> Text:
    return text(title, "heading", **fields)


def _plain(value) -> str:
    if isinstance(value, float):
        return fmt(value)
    return str(value)


def _merge(spans: Iterable[Span]) -> list[Span]:
    out: list[Span] = []
    for span in spans:
        if not span.text:
            continue
        if out and out[-1].style == span.style:
            out[-1] = Span(out[-1].text + span.text, span.style)
        else:
            out.append(span)
    return out


# ------------------------------------------------------------------------------------------------ cells

def format_cell(value, kind: ColumnFormat | None) -> str:
    """One cell as text. Undefined reads "undefined", never 0 or NaN."""
    if kind == "ci":
        if value is None or not isinstance(value, (tuple, list)) or len(value) != 2:
            return "—"
        low, high = value
        if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in (low, high)):
            return "—"
        return f"[{low:.3f}, {high:.3f}]"
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "undefined" if kind not in (None, "text") else ""
    if kind == "p":
        return fmt_p(float(value))
    if kind == "int":
        return f"{int(value):,}"
    if kind == "pct":
        return f"{100 * float(value):.1f}%"
    if kind == "bool":
        return "yes" if value else "no"
    if kind in ("num", "num2", "num4"):
        digits = {"num": 3, "num2": 2, "num4": 4}[kind]
        return fmt(float(value), digits)
    if isinstance(value, float):
        return fmt(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def walk(items: Iterable[Item]) -> Iterable[Item]:
    """Every item, depth first (groups opened)."""
    for item in items:
        yield item
        if isinstance(item, Group):
            yield from walk(item.items)


def tables(items: Iterable[Item]) -> dict[str, Table]:
    """The display list's tables by key (tests compare them with the JSON rows)."""
    return {item.key: item for item in walk(items) if isinstance(item, Table)}


def group(items: Iterable[Item], key: str) -> Group:
    """The group named ``key`` (a page draws one part of a section in a tab)."""
    for item in walk(items):
        if isinstance(item, Group) and item.key == key:
            return item
    raise KeyError(key)
