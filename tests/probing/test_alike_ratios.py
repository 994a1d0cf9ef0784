"""Knee probing's headline ratios that round alike say why (issue 23: three identical "1.82×" with no word)."""
from __future__ import annotations

import copy

from fairviz.core.display import Text
from fairviz.probing import load_shipped
from fairviz.probing.readings import probe_display


def _notes(data: dict) -> list[str]:
    return [i.plain() for i in probe_display(data) if isinstance(i, Text) and "round alike" in i.plain()]


def test_ratios_that_round_alike_are_explained_with_their_own_digits():
    shipped = load_shipped("probe")
    swap, removal = shipped["probes"]["demographic_swap"], shipped["probes"]["identity_removal"]
    assert f"{swap['ratio']:.2f}" == f"{removal['ratio']:.2f}"          # the shipped run: both 1.82×
    [note] = _notes(shipped)
    assert f"Demographic swap {swap['ratio']:.4f}×" in note and f"Identity-term removal {removal['ratio']:.4f}×" in note
    assert f"{swap['knee_mean']:.4f} knee vs {swap['nonknee_mean']:.4f} non-knee" in note


def test_distinct_ratios_need_no_note():
    data = copy.deepcopy(load_shipped("probe"))
    data["probes"]["identity_removal"]["ratio"] = 1.2
    assert _notes(data) == []
