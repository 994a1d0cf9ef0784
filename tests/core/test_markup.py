"""Names from a visitor's file are shown as typed: Markdown escaping, Plotly escaping, formula-safe CSV."""
from __future__ import annotations

import io

import pandas as pd
from markdown_it import MarkdownIt

from fairviz.core.markup import csv_bytes, csv_safe, md, plot_text

HOSTILE = ["`tick`", "![x](http://evil.example/p.png)", "**bold**", "<b>html</b>", "[link](http://evil.example)",
           "a_b_c", "# heading", ":red[colour]", "$x^2$", "line\nbreak"]


def test_markdown_escaping_renders_the_name_as_typed():
    renderer = MarkdownIt("commonmark")
    for name in HOSTILE:
        rendered = renderer.render(f"Group {md(name)} here")
        assert "<img" not in rendered and "<a " not in rendered and "<code>" not in rendered
        assert "<strong>" not in rendered and "<h1>" not in rendered and "<b>" not in rendered
        flat = name.replace("\n", " ")
        plain = rendered.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
        assert flat in plain.replace("\u200b", ""), (name, rendered)     # a zero-width space breaks autolinks


def test_bare_urls_and_addresses_do_not_autolink():
    # GitHub-flavoured autolinks (Streamlit's Markdown) need "://", "www." or "@" followed by the address
    for name in ["http://evil.example/x", "WWW.evil.example", "someone@evil.example"]:
        escaped = md(name)
        assert "://" not in escaped and "www." not in escaped.lower() and "@e" not in escaped, escaped
        assert escaped.replace("\u200b", "").replace("\\", "") == name


def test_plot_text_escapes_html():
    assert plot_text("<a href='x'>y</a> & z") == "&lt;a href='x'&gt;y&lt;/a&gt; &amp; z"


def test_csv_downloads_neutralise_formulas():
    frame = pd.DataFrame({"group": ["=HYPERLINK(\"http://evil\")", "+1", "-2+3", "@SUM(A1)", "plain", "\t=x"],
                          "score": [-0.5, 0.1, 0.2, 0.3, 0.4, 0.5], "=col": list("abcdef")})
    safe = csv_safe(frame)
    assert list(safe["group"]) == ["'=HYPERLINK(\"http://evil\")", "'+1", "'-2+3", "'@SUM(A1)", "plain", "'\t=x"]
    assert list(safe["score"]) == [-0.5, 0.1, 0.2, 0.3, 0.4, 0.5]       # numbers stay numbers
    assert list(safe.columns) == ["group", "score", "'=col"]
    assert frame["group"].iloc[0].startswith("=")                         # the caller's frame is untouched
    back = pd.read_csv(io.BytesIO(csv_bytes(frame)))
    assert not back["group"].astype(str).str.startswith(("=", "+", "-", "@")).any()


def test_a_name_at_the_start_of_a_line_cannot_open_a_block():
    renderer = MarkdownIt("commonmark")
    for name in ("- item", "12. item", "3) item", "# heading", "> quote", "+ item", "=", "plain (with) 4/5: a-b"):
        rendered = renderer.render(md(name))
        assert rendered.startswith("<p>") and "<li>" not in rendered and "<h1>" not in rendered, rendered
        assert name.replace(">", "&gt;") in rendered, rendered
    assert md("COMPAS (ProPublica): 4/5 = 0.8") == "COMPAS (ProPublica): 4/5 = 0.8"      # plain text stays plain
    assert md("two_year_recid") == "two_year_recid"
