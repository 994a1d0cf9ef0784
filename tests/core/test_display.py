"""The display list: markup comes from our templates only; every renderer escapes data for its medium."""
import pandas as pd

from fairviz.core.display import Group, Metric, Metrics, Table, format_cell, group, tables, text
from fairviz.report.render import to_html, to_terminal

HOSTILE = "**x** [click](http://evil.example/) ![i](http://evil.example/t.png) <b>b</b> `c`"


def test_template_marks_become_styles_and_fields_stay_data():
    t = text("**{group}** is *flagged* at {rate:.2f}", group=HOSTILE, rate=0.456)
    assert [s.style for s in t.spans] == ["b", "", "i", ""]
    assert t.spans[0].text == HOSTILE
    assert t.plain() == f"{HOSTILE} is flagged at 0.46"


def test_html_escapes_data_and_keeps_our_markup():
    items = [text("Gap for **{g}**", "finding", g=HOSTILE),
             Table(pd.DataFrame({"group": [HOSTILE], "p": [0.0004], "ci": [(0.1, 0.2)]}), key="t",
                   formats={"p": "p", "ci": "ci"})]
    out = to_html(items)
    assert "<b>Gap for" not in out and "<b>**x**" in out
    assert "<a " not in out and "<img" not in out and "&lt;b&gt;b&lt;/b&gt;" in out
    assert "&lt; 0.001" in out and "[0.100, 0.200]" in out


def test_terminal_plain_text():
    items = [Group("Calibration", (text("ECE {e:.3f}", e=0.1234), Metrics((Metric(text("n"), "1,234"),)))),]
    out = to_terminal(items)
    assert "Calibration" in out and "ECE 0.123" in out and "n: 1,234" in out


def test_cells_say_undefined():
    assert format_cell(None, "num") == "undefined"
    assert format_cell(float("nan"), "p") == "undefined"
    assert format_cell((float("nan"), 1.0), "ci") == "—"


def test_lookup_by_key():
    t = Table(pd.DataFrame({"a": [1]}), key="k")
    items = [Group("G", (t,), key="g")]
    assert tables(items) == {"k": t}
    assert group(items, "g").items == (t,)
