"""The parity and significance sections' display lists: their tables are the JSON rows, the DI heatmap keeps our
bold cells while a hostile group name is escaped, and a hostile name stays inert in the HTML and the terminal."""
from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from fairviz.core.display import Figure, Group, tables, walk
from fairviz.data import ColumnMapping, build_predictions
from fairviz.data.samples import load_sample
from fairviz.parity import figures as parity_figures
from fairviz.parity import display as parity
from fairviz.sample_size import display as sample_size
from fairviz.report.options import AuditParams
from fairviz.report.render import to_html, to_terminal
from fairviz.sample_size import METRIC_LABELS, with_cps_lambda

EVIL = "**x** [a](http://e.x/) ![i](http://e.x/p.png) <b>b</b>"
COMPAS = AuditParams(attribute="race", threshold=0.4, benefit="negative")


def hostile_predictions():
    """Two groups, the first named with every kind of markup; their benefit rates differ beyond four-fifths."""
    rng = np.random.default_rng(3)
    n = 400
    group = np.repeat([EVIL, "plain"], n // 2)
    score = np.where(group == EVIL, rng.uniform(0.0, 0.7, n), rng.uniform(0.3, 1.0, n))
    frame = pd.DataFrame({"y": rng.binomial(1, 0.5, n), "score": score, "grp": group})
    return build_predictions(frame, ColumnMapping(label="y", score="score", groups=("grp",)), source="evil.csv")


@pytest.fixture(scope="module")
def compas():
    pred = load_sample("compas")
    audit = parity.parity_run(parity.SECTION.given(pred), COMPAS)
    significance = sample_size.significance_run(sample_size.SECTION.given(pred), COMPAS)
    return pred, audit, significance


def _same(value, expected) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return expected is None or (isinstance(expected, float) and math.isnan(expected))
    if isinstance(value, float):
        return expected == pytest.approx(value, rel=1e-12, abs=1e-12)
    return value == expected


def test_parity_tables_are_the_json_rows(compas):
    pred, audit, _ = compas
    items = parity.display(pred, audit, COMPAS)
    data = parity.parity_to_dict(pred, audit, COMPAS)["parity"]
    by_pair = {(p["group_i"], p["group_j"]): p for p in data["pairs"]}
    found = tables(items)
    assert set(found) == {"pair_readings", "pairs", "groups"}
    for key in ("pair_readings", "pairs"):
        records = found[key].records()
        assert len(records) == len(by_pair) == 15
        for row in records:
            entry = by_pair[(row["group_i"], row["group_j"])]
            for column, value in row.items():
                assert _same(value, entry[column]), (key, column, row["group_i"], row["group_j"])
    for row in found["groups"].records():
        stored = data["groups"][row["group"]]
        for column in ("tp", "fn", "fp", "tn", "benefit_rate", "expected_benefit", "marginal_benefit"):
            assert _same(row[column], stored[column]), (row["group"], column)
    assert found["groups"].frame["n"].sum() == 7214


def test_significance_tables_are_the_json_rows(compas):
    pred, _, result = compas
    items = sample_size.display(pred, result, COMPAS)
    data = sample_size.significance_to_dict(pred, result, COMPAS)["parity"]
    found = tables(items)
    assert set(found) == {"match", "cps"}
    label_to_key = {label: key for key, label in METRIC_LABELS.items()}
    records = found["match"].records()
    assert len(records) == sum(len(m) for m in data["match"].values()) == 96
    for row in records:
        entry = data["match"][row["group"]][label_to_key[row["metric"]]]
        for column in ("n", "score", "reference_score", "cdf", "p_value", "p_adjusted", "undefined_probability",
                       "method"):
            assert _same(row[column], entry[column]), (row["group"], row["metric"], column)
        assert (row["note"] or None) == entry["note"]
    for row in found["cps"].records():
        entry = data["cps"][row["group"]]
        for column in ("n", "tp", "fn", "fp", "tn"):
            assert _same(row[column], entry[column]), (row["group"], column)


def test_terminal_carries_what_the_summary_printed(compas):
    """Outside collapsed groups: per pair OFI (p), DI (four-fifths) and the reading; MATCH's k of n flagged and the
    flagged scores."""
    pred, audit, result = compas
    shown = [i for i in parity.display(pred, audit, COMPAS) if not (isinstance(i, Group) and i.collapsed)]
    printed = to_terminal(shown)
    # the pair's table row (the reading above it names the same pair now: the reference vs the top group)
    line = next(row for row in printed.splitlines() if row.split()[:2] == ["African-American", "Caucasian"])
    for cell in ("-0.120", "< 0.001", "0.632", "for j", "algorithmic"):
        assert cell in line, (cell, line)
    assert "Benefit = score < 0.40" in printed
    shown = [i for i in sample_size.display(pred, result, COMPAS) if not (isinstance(i, Group) and i.collapsed)]
    printed = " ".join(to_terminal(shown).split())             # wrapped lines joined
    # on the label (issue 34 item 9): 0.412 was the benefit's rate; F1 and PT on the label flag 7 fewer than on it
    assert "50 of 96 group × metric scores differ from all other rows" in printed
    assert "Benjamini–Hochberg adjusted p < 0.05" in printed
    assert "- African-American · Positive prediction rate = 0.588 at n = 3,696: higher than all other rows" in printed
    assert "- African-American · FPR = 0.448 at n = 3,696: higher than all other rows" in printed


def test_di_heatmap_keeps_our_bold_cells_and_escapes_a_hostile_name():
    pred = hostile_predictions()
    audit = parity.parity_run(pred, AuditParams(attribute="grp", threshold=0.5))
    di = audit.values(EVIL, "plain")["di"]
    assert not 0.8 <= di <= 1.25, di                             # outside the four-fifths band: a bold cell
    fig = parity_figures.heatmap(audit.matrices["di"])
    trace = fig.data[0]
    cells = [str(v) for v in np.ravel(trace.text)]
    assert any(c.startswith("<b>") and c.endswith("</b>") for c in cells), cells      # bold survives
    labels = list(trace.x) + list(trace.y)
    assert "**x** [a](http://e.x/) ![i](http://e.x/p.png) &lt;b&gt;b&lt;/b&gt;" in labels
    assert not any("<b>b</b>" in str(v) for v in labels)
    hover = " ".join(str(v) for v in np.ravel(trace.customdata))
    assert "&lt;b&gt;b&lt;/b&gt;" in hover and "<b>b</b>" not in hover


def test_a_hostile_name_stays_inert_in_html_and_terminal():
    pred = hostile_predictions()
    options = AuditParams(attribute="grp", threshold=0.5)
    audit = parity.parity_run(pred, options)
    significance = sample_size.significance_run(pred, options)
    items = parity.display(pred, audit, options) + sample_size.display(pred, significance, options)
    page = to_html(items)
    assert "<b>b</b>" not in page and "<img" not in page and 'href="http://e.x/' not in page
    assert "<strong>x</strong>" not in page and "<em>" not in page
    assert "&lt;b&gt;b&lt;/b&gt;" in page                        # the name shows as typed
    # in the figures' JSON: our bold DI cells are tags, the name's tags are escaped
    assert re.search(r"\\u003cb\\u003e\d\.\d\d\\u003c\\u002fb\\u003e", page)
    assert "\\u003cb\\u003eb\\u003c\\u002fb\\u003e" not in page
    for figure in (i for i in walk(items) if isinstance(i, Figure)):
        for trace in figure.figure().data:
            for prop in ("x", "y", "name", "customdata", "hovertext"):
                values = trace[prop] if prop in trace else None
                if values is not None:
                    assert "<b>b</b>" not in " ".join(str(v) for v in np.ravel(np.asarray(values, dtype=object)))
    printed = to_terminal(items)
    assert EVIL in printed                                        # plain characters, as typed
    assert "\x1b" not in printed


def test_another_cps_lambda_redoes_cps_only_and_equals_a_full_run(compas):
    pred, _, result = compas
    ten = sample_size.significance_run(sample_size.SECTION.given(pred), replace(COMPAS, cps_lambda=10.0))
    moved = with_cps_lambda(result, 10.0)
    assert moved.match is result.match and moved.cps_lambda == 10.0
    assert moved.cps == ten.cps
    assert with_cps_lambda(result, result.cps_lambda) is result
