"""The residual section's display list ([1]): its tables are the JSON's rows, its figures escape names where they
enter, and a hostile group name stays inert in the HTML report and the terminal."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairviz.core.display import Group, Table, Text, tables, walk
from fairviz.core.markup import plot_text
from fairviz.data import ColumnMapping, build_predictions
from fairviz.data.samples import load_sample
from fairviz.report.audit import run_audit
from fairviz.report.options import AuditParams
from fairviz.report.render import to_html
from fairviz.residuals.display import SECTION, THRESHOLD_SECTION
from fairviz.residuals import RDFParams, analyse, at_threshold
from fairviz.residuals import figures as figs

HOSTILE = "**x** [a](http://e.x/) ![i](http://e.x/p.png) <b>b</b>"
FAST = RDFParams(resamples=100, knee_resamples=20)


@pytest.fixture(scope="module")
def audit():
    return run_audit(load_sample("synthetic"), AuditParams(attribute="group", threshold=0.5, rdf=FAST))


def _same(shown, stored):
    """A table cell against its JSON value: undefined is None in JSON, None or NaN in a table."""
    if stored is None:
        assert shown is None or (isinstance(shown, float) and np.isnan(shown))
    elif isinstance(stored, float):
        assert shown == pytest.approx(stored, rel=1e-12, abs=1e-12)
    else:
        assert shown == stored


def test_group_and_pair_tables_are_the_json_rows(audit):
    shown = tables(audit.display(SECTION))
    groups = audit.data["groups"]
    frame = shown["groups"].frame
    assert list(frame["group"]) == list(groups)
    for row in frame.to_dict("records"):
        for column, value in row.items():
            if column in groups[row["group"]]:
                _same(value, groups[row["group"]][column])
    pairs = {f"{p['group_i']} vs {p['group_j']}": p for p in audit.data["pairs"]}
    for key in ("pairs", "pairs_detail"):
        rows = shown[key].frame.to_dict("records")
        assert [r["pair"] for r in rows] == list(pairs)
        for row in rows:
            for column, value in row.items():
                if column in pairs[row["pair"]]:
                    _same(value, pairs[row["pair"]][column])
                elif column.endswith("_ci"):                       # an interval, from the JSON's ``ci``
                    assert value == pairs[row["pair"]]["ci"].get(column[:-3])
    gaps = shown["threshold_gaps"].frame.to_dict("records")
    for row in gaps:                                         # Theorem 6.1: the counted gaps are the JSON's gaps
        pair = pairs[row["pair"]]
        for name in ("dp_diff", "eo_tpr_diff", "eo_fpr_diff"):
            _same(row[f"{name}_direct"], pair[name])
            assert row[f"{name}_residual"] == pytest.approx(pair[name], abs=1e-9)


def test_the_terminal_carries_the_numbers_it_printed(audit):
    """What the terminal printed for residuals (per group, per pair, the knee concentration) is in the display
    list outside collapsed groups."""
    terminal = audit.to_terminal()
    for name, g in audit.data["groups"].items():
        line = next(line for line in terminal.splitlines() if line.split()[:1] == [name] and "%" in line)
        for key in ("base_rate", "ppr", "tpr", "fpr", "median_residual", "ece"):
            assert f"{g[key]:.3f}" in line, (name, key)
        assert f"{g['n']:,}" in line and g["ece_regime"] in line
    c = audit.data["knee_concentration"]
    assert f"Error ratio knee / elsewhere: {c['ratio']:.2f}×" in terminal
    assert "Mann–Whitney p (two-sided)" in terminal and f"ECE (15 bins): {c['ece']:.3f}" in terminal
    assert f"({c['verdict']}" in terminal and c["regime"] in terminal
    for p in audit.data["pairs"]:
        assert f"{p['group_i']} vs {p['group_j']}" in terminal
    assert "F_pattern Y=0" not in terminal                   # the detail group is collapsed


def test_display_needs_the_rates_at_the_audits_threshold():
    pred = load_sample("synthetic")
    analysed = analyse(pred, "group", RDFParams(resamples=0, knee_resamples=0))
    with pytest.raises(ValueError):
        SECTION.display(pred, analysed, AuditParams(attribute="group", threshold=0.5))
    with pytest.raises(ValueError):
        SECTION.display(pred, at_threshold(analysed, pred, 0.3), AuditParams(attribute="group", threshold=0.5))
    assert SECTION.display(pred, at_threshold(analysed, pred, 0.5), AuditParams(attribute="group", threshold=0.5))


def test_invariance_table_is_the_json(audit):
    items = audit.display(THRESHOLD_SECTION)
    frame = tables(items)["invariance_cv"].frame
    for row, pair in zip(frame.to_dict("records"), audit.data["threshold_invariance"]["pairs"]):
        for metric, cv in pair["cv"].items():
            assert row[metric] == ("undefined" if cv is None else f"{cv:.2f}%")
    assert any("do not depend on the threshold" in i.plain() for i in walk(items) if isinstance(i, Text))


# ----------------------------------------------------------------------------------------------- hostile names

def _hostile():
    rng = np.random.default_rng(3)
    n = 1200
    score = rng.uniform(0.05, 0.95, n)
    frame = pd.DataFrame({"y": rng.binomial(1, score), "score": score, "group": np.repeat([HOSTILE, "plain"], n // 2)})
    return build_predictions(frame, ColumnMapping("y", "score", ("group",)), source="hostile.csv")


@pytest.fixture(scope="module")
def hostile_audit():
    return run_audit(_hostile(), AuditParams(attribute="group", rdf=FAST))


def test_a_hostile_name_is_data_in_every_text_of_the_section(hostile_audit):
    """The name reaches the display list as span characters only: our marks never come from it."""
    for item in walk(hostile_audit.display(SECTION)):
        if isinstance(item, Text) and HOSTILE in item.plain():
            assert any(HOSTILE in span.text for span in item.spans)
            assert not any(span.style and span.text in ("x", "i", "b") for span in item.spans)


def test_a_hostile_name_is_inert_in_the_html_report(hostile_audit):
    html = to_html(hostile_audit.display(SECTION))        # this section as the report draws it (figures included)
    decoded = html.replace("\\u003c", "<").replace("\\u003e", ">").replace("\\u002f", "/")   # figures' JSON too
    for raw in ("<b>b</b>", "<img", "href=\"http://e.x"):
        assert raw not in decoded, raw
    assert "&lt;b&gt;b&lt;/b&gt;" in html
    # the figures carry the name escaped once (Plotly shows "&lt;" as "<"), our own <b> survives around it
    fig = figs.sorted_residual_plot(hostile_audit.results["residuals"])
    legend = {t.name for t in fig.data}
    assert f"{plot_text(HOSTILE)} (n = 600)" in legend
    hover = next(t.hovertemplate for t in fig.data if t.name.startswith(plot_text(HOSTILE)))
    assert hover.startswith(f"<b>{plot_text(HOSTILE)}</b>")
    assert "<b>b</b>" not in fig.to_json().replace("\\u003c", "<").replace("\\u003e", ">").replace("\\u002f", "/")


def test_a_hostile_name_prints_as_typed_in_the_terminal(hostile_audit):
    terminal = hostile_audit.to_terminal()
    assert HOSTILE in terminal and "&lt;" not in terminal and "\x1b" not in terminal
    group_table = next(i for i in walk(hostile_audit.display(SECTION)) if isinstance(i, Table) and i.key == "groups")
    assert HOSTILE in list(group_table.frame["group"])


def test_the_sections_groups_are_keyed_for_the_pages_tabs(audit):
    keys = [i.key for i in audit.display(SECTION) if isinstance(i, Group)]
    assert keys == ["curves", "pairs", "pairs_detail", "groups", "threshold", "concentration"]
