"""The explanation-disparity section's display list: its tests table holds the JSON's numbers, the HTML and the
terminal draw it, our bold survives every renderer and a hostile group name stays inert in all of them."""
from __future__ import annotations

import json

import numpy as np
import pytest

from fairviz.core.display import Bullets, Figure, Text, tables, walk
from fairviz.core.wording import fmt_p
from fairviz.explain import METHOD_NAMES, METRICS, ExplainResult, compare, disparity_json, load_shipped, model_warnings
from fairviz.explain import readings
from fairviz.explain.display import disparity_display, disparity_table
from fairviz.report.render import to_html, to_terminal
from tests.html_tables import html_tables

HOSTILE = "**x** [a](http://e.x/) ![i](http://e.x/p.png) <b>b</b>"


def hostile_result(key: str = "geco-all") -> ExplainResult:
    """A shipped result whose first group is renamed to a name made of markup."""
    result = load_shipped(key)
    gi, _ = result.groups
    rename = (lambda frame: frame.assign(group=frame["group"].replace(gi, HOSTILE)))
    meta = json.loads(json.dumps(result.meta))
    meta["dataset"]["groups"] = [HOSTILE if g == gi else g for g in meta["dataset"]["groups"]]
    for run in meta["runs"].values():
        groups = run["behaviour"]["groups"]
        groups[HOSTILE] = groups.pop(gi)
    return ExplainResult(rename(result.scores), rename(result.instances), result.attributions, meta)


def _same(value, json_value) -> bool:
    """A table value and its JSON value: undefined is NaN in the table and null in the JSON."""
    if json_value is None:
        return value is None or np.isnan(value)
    return value == pytest.approx(json_value)


@pytest.mark.parametrize("correction", ["none", "bh"])
def test_tests_table_rows_are_the_json_cells(correction):
    result = load_shipped("neutral")
    report = compare(result, correction=correction)
    payload = disparity_json(result, report, [t for _, t in model_warnings(result)])
    table = disparity_table(report)
    gi, gj = report.groups
    method_key = {name: key for key, name in METHOD_NAMES.items()}
    metric_key = {m.label: key for key, m in METRICS.items()}
    assert len(table.frame) == sum(len(cells) for cells in payload["tests"].values())
    for row in table.records():
        cell = payload["tests"][method_key[row["method"]]][metric_key[row["metric"]]]
        assert (row["n_i"], row["n_j"]) == (cell["n"][gi], cell["n"][gj])
        for mine, theirs in ((row["median_i"], cell["median"][gi]), (row["median_j"], cell["median"][gj]),
                             (row["p_value"], cell["p_value"]), (row["cohens_d"], cell["cohens_d"])):
            assert _same(mine, theirs), (row, cell)
        assert row["significant"] == cell["significant"] and row["considerable"] == cell["considerable"]
        assert row["runs_significant"] == f"{cell['runs_significant']}/{cell['runs']}"
        assert row["better"] == (cell["better"] or "—")
        if correction == "bh":
            assert _same(row["p_adjusted"], cell["p_adjusted"])
    assert ("p_adjusted" in table.frame) == (correction == "bh")


def test_html_table_is_the_display_table_formatted():
    result = load_shipped("compas")
    report = compare(result)
    items = disparity_display(result, report)
    table = tables(items)["explanation_tests"]
    drawn = next(t for t in html_tables(to_html(items)) if "p (Mann–Whitney)" in t[0])
    expected = table.formatted()
    assert drawn[0] == list(expected.columns)
    assert drawn[1:] == expected.astype(str).values.tolist()
    first = report.cells[0]
    assert expected["p (Mann–Whitney)"].iloc[0] == fmt_p(first.p_value)


def test_default_class_asymmetry_is_bold_in_every_renderer_and_the_json_keeps_its_text():
    result = load_shipped("geco-all")
    found = readings.model_readings(result)
    asymmetry = next(r for r in found if r.text.plain().startswith("Default-class asymmetry"))
    assert asymmetry.text.spans[0].style == "b" and asymmetry.text.spans[0].text == "Default-class asymmetry"
    assert asymmetry.lines and asymmetry.kind == "warn"
    assert any(t.startswith("**Default-class asymmetry** (found by") and "\n- every word deleted" in t
               for _, t in model_warnings(result))                   # the JSON's warnings, as they were
    items = disparity_display(result, compare(result))
    html = to_html(items)
    assert "<b>Default-class asymmetry</b>" in html and "**Default-class asymmetry**" not in html
    terminal = to_terminal([i for i in items if not getattr(i, "collapsed", False)])
    assert "Default-class asymmetry (found by" in terminal and "**" not in terminal
    assert any(isinstance(i, Bullets) and i.level == "caveat" for i in walk(items))


def test_a_hostile_group_name_is_inert_in_html_terminal_and_figures():
    result = hostile_result()
    report = compare(result)
    items = disparity_display(result, report)
    html = to_html([i for i in items if not isinstance(i, Figure)])
    for raw in ("<b>b</b>", "<a ", "<img", "](http://e.x/)\n"):
        assert raw not in html, raw
    assert "**x** [a](http://e.x/) ![i](http://e.x/p.png) &lt;b&gt;b&lt;/b&gt;" in html      # shown as typed
    terminal = to_terminal([i for i in items if not getattr(i, "collapsed", False)])
    assert HOSTILE in terminal                                          # as typed
    texts = [t for t in walk(items) if isinstance(t, Text)]
    assert any(HOSTILE in t.plain() for t in texts)
    assert all(s.style == "" for t in texts for s in t.spans if HOSTILE in s.text)
    figures = [i.figure() for i in walk(items) if isinstance(i, Figure)]
    strings = json.dumps([f.to_plotly_json() for f in figures], default=str)
    assert "<b>b</b>" not in strings and "&lt;b&gt;b&lt;/b&gt;" in strings


def test_every_metric_in_the_registry_reads_the_same_everywhere():
    result = load_shipped("neutral")
    report = compare(result)
    for cell in report.cells:
        metric = METRICS[cell.metric]
        assert metric.direction in (1, -1) and metric.property in ("faithfulness", "complexity", "robustness")
        if cell.better is not None:
            higher = cell.group_i if cell.cohens_d > 0 else cell.group_j
            assert (cell.better == higher) == (metric.direction > 0)
    s = np.array([0.5, 0.3, 0.2, 0.0])
    assert METRICS["gini"].function(s) == pytest.approx(0.4)     # Σ (2k − n − 1)|s|_(k) / n = (−.2 + .3 + 1.5) / 4
    assert METRICS["sparsity"].function(s) == pytest.approx(0.75)
    assert {k for k, m in METRICS.items() if m.needs == "scores"} == {"gini", "sparsity"}
