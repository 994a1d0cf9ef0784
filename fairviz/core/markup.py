"""Names from a visitor's file are data, never markup: one escaper per place where they are rendered.

- ``md(name)``: before Markdown (Streamlit's st.markdown, st.caption, st.info, …): a backtick, ``**``, a link or
  ``![](http://…)`` in a file, column or group name shows as typed instead of rendering (or fetching an image).
- ``plot_text(name)``: Plotly renders a subset of HTML in legends, hover labels and tick labels (``<a href>``,
  ``<b>``, …); figures escape names with it where they enter them (Plotly shows ``&lt;`` as ``<``), so the markup a
  figure writes itself (a bold cell) survives.
- ``csv_safe(frame)``: a cell starting with ``=``, ``+``, ``-``, ``@`` (or a tab/carriage return) is a formula to a
  spreadsheet; every CSV download prefixes such text cells with ``'`` (OWASP's advice). Numbers stay numbers.
"""
from __future__ import annotations

import html
import re

import pandas as pd

_MD_SPECIAL = re.compile(r"([\\`*\[\]<>~$|#])")        # links/images need '[', code '`', HTML '<'
_LOOSE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")   # intraword '_' is literal in CommonMark
_BLOCK_START = re.compile(r"^(\s*)([-+=]|\d+[.)])")                    # a list or heading marker at the start
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_AUTOLINK = re.compile(r"(?i)(://|www\.|@)")     # GitHub-flavoured Markdown links bare URLs and e-mail addresses


def md(value) -> str:
    """``value`` as literal text inside Markdown: the characters that make code, emphasis, links, images, HTML,
    LaTeX, tables or Streamlit colour directives are backslash-escaped (plain punctuation stays readable), a list
    or heading marker at the start is escaped, line breaks are folded to spaces (a name cannot start a block)."""
    text = re.sub(r"[\r\n]+", " ", str(value))
    text = _LOOSE_UNDERSCORE.sub(r"\\_", _MD_SPECIAL.sub(r"\\\1", text))
    text = _AUTOLINK.sub(lambda m: m.group(1)[0] + "\u200b" + m.group(1)[1:], text)   # a bare URL stays text
    return _BLOCK_START.sub(lambda m: m.group(1) + (m.group(2)[:-1] + "\\" + m.group(2)[-1]
                                                    if m.group(2)[0].isdigit() else "\\" + m.group(2)), text)


def plot_text(value) -> str:
    """``value`` as literal text in a Plotly label (legend, hover, tick, annotation)."""
    return html.escape(str(value), quote=False)


def csv_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells (and column names) cannot run as spreadsheet formulas."""
    def neutral(value):
        return f"'{value}" if isinstance(value, str) and value.startswith(_FORMULA_START) else value

    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]) or \
                isinstance(out[column].dtype, pd.CategoricalDtype):
            out[column] = out[column].astype(object).map(neutral)
    out.columns = [neutral(str(c)) if isinstance(c, str) else c for c in out.columns]
    return out


def csv_bytes(frame: pd.DataFrame, index: bool = False, **to_csv) -> bytes:
    """The one way fairviz writes a CSV for download: formula-safe, UTF-8 (``to_csv``: pandas options)."""
    return csv_safe(frame).to_csv(index=index, **to_csv).encode("utf-8")
