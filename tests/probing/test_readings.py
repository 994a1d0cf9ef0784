"""The probing page's display lists: their tables hold the JSON's numbers, the CLI's lines are unchanged, and the
names, titles and notes that come from the data stay text in every renderer."""
from __future__ import annotations

import copy
import json

import pytest

from fairviz.core.display import Figure, tables, walk
from fairviz.probing import (AUGMENT_STRATEGIES, PROBES, augment_display, augment_summary, examples_table,
                             load_shipped, probe_display, probe_summary)
from fairviz.report.render import to_html, to_terminal

HOSTILE = "**x** [a](http://e.x/) ![i](http://e.x/p.png) <b>b</b>"


def test_probe_tables_are_the_json_numbers():
    data = load_shipped("probe")
    items = probe_display(data)
    probes = tables(items)["probes"]
    for row in probes.records():
        key = next(k for k, name in PROBES.items() if name == row["probe"])
        expected = data["probes"][key]
        for column in ("knee_mean", "nonknee_mean", "ratio", "p_value", "n_knee", "n_nonknee"):
            assert row[column] == pytest.approx(expected[column]), column
    strategies = tables(items)["strategies"].frame
    assert strategies["demographic_sensitivity"].tolist() == pytest.approx(
        [s["demographic_sensitivity"] for s in data["strategies"].values()])
    knee = examples_table(data, "knee").frame
    assert len(knee) == sum(e["region"] == "knee" for e in data["examples"])
    assert knee["delta_swap"].is_monotonic_decreasing


def test_augment_table_reads_the_records():
    data = load_shipped("augment")
    table = tables(augment_display(data))["augmentation"].frame
    first = data["records"][0]
    row = table.iloc[0]
    assert row["strategy"] == AUGMENT_STRATEGIES[first["strategy"]] and row["k"] == first["k"]
    mean, std = first["delta"]["f_pattern"]["mean"], first["delta"]["f_pattern"]["std"]
    assert row["f_pattern"] == f"{mean:+.4f} ± {std:.4f}"
    assert len(table) == len(data["records"]) + (data["control"] is not None)


def test_terminal_summaries_keep_their_lines():
    probe, augment = load_shipped("probe"), load_shipped("augment")
    lines = probe_summary(probe).splitlines()
    assert lines[0].endswith(f"ECE {probe['pool']['ece']:.3f} ({probe['pool']['regime']})")
    assert lines[1].startswith(f"  {'Demographic swap':<22} knee {probe['probes']['demographic_swap']['knee_mean']:.4f}")
    assert augment_summary(augment).splitlines()[-1] == "  " + augment["calibration"]["reading"]


def test_hostile_titles_notes_and_texts_stay_text():
    probe, augment = copy.deepcopy(load_shipped("probe")), copy.deepcopy(load_shipped("augment"))
    for data in (probe, augment):
        data["meta"]["data"]["title"] = HOSTILE
        data["warnings"] = [f"group {HOSTILE} is small"]
    probe["examples"][0]["text"] = HOSTILE
    items = probe_display(probe) + augment_display(augment)
    html = to_html([i for i in walk(items) if not isinstance(i, Figure)])
    for raw in ("<b>b</b>", "<a ", "<img"):
        assert raw not in html, raw
    assert "**x** [a](http://e.x/) ![i](http://e.x/p.png) &lt;b&gt;b&lt;/b&gt;" in html
    assert HOSTILE in to_terminal(items)
    figures = json.dumps([i.figure().to_plotly_json() for i in walk(items) if isinstance(i, Figure)], default=str)
    assert "<b>b</b>" not in figures and "&lt;b&gt;b&lt;/b&gt;" in figures
