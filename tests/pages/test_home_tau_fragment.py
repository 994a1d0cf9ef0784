"""Home's τ step (issue 23, τ ≤ 300 ms): Home draws τ, in its sidebar place, from the fragment that holds its
Summary, so a τ step reruns that fragment alone (tests/browser/test_home_tau_step.py checks the rerun's scope in
Chromium); the frame still draws τ on the other pages and whenever Home stops before its fragment; the startup
objects are out of Streamlit's garbage collection after every run."""
from __future__ import annotations

import gc

import pytest
from streamlit.testing.v1 import AppTest

from app_pages import _sources
from tests.conftest import ROOT

PARITY = "app_pages/parity.py"
REWEIGHTING = "app_pages/reweighting.py"       # a framed page whose τ stays in the frame


def _app() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    assert not at.exception, at.exception
    return at


def _sidebar_labels(at: AppTest) -> list[str]:
    return [w.label for w in at.sidebar if hasattr(w, "label") and w.label]


def _link(at: AppTest) -> str:
    return at.sidebar.code[0].value


def test_home_draws_tau_in_its_place_from_the_summarys_fragment():
    at = _app()
    assert at.session_state["_tau_slot"]["drawn"] is True                 # Home's fragment drew it
    labels = _sidebar_labels(at)
    assert labels.index("Group attribute") < labels.index("Decision threshold τ") < labels.index("Beneficial outcome")
    at.slider(key="threshold").set_value(0.47).run()
    assert not at.exception, at.exception
    assert at.subheader[0].value.endswith("race at τ = 0.47")
    assert "tau=0.47" in _link(at)                                        # the link carries the new τ
    assert len(at.sidebar.code) == 1                                      # drawn once: by the fragment, not also by the frame


def test_other_pages_draw_tau_in_the_frame_and_keep_its_value():
    at = _app()
    at.slider(key="threshold").set_value(0.33).run()
    at.switch_page(REWEIGHTING).run()
    assert not at.exception, at.exception
    assert "_tau_slot" not in at.session_state
    assert at.slider(key="threshold").value == pytest.approx(0.33)
    labels = _sidebar_labels(at)
    assert labels.index("Group attribute") < labels.index("Decision threshold τ") < labels.index("Link to this view")
    assert "tau=0.33" in _link(at)


def test_an_audit_page_draws_tau_in_the_frames_place_from_its_fragment_and_keeps_its_value():
    at = _app()
    at.slider(key="threshold").set_value(0.33).run()
    at.switch_page(PARITY).run()
    assert not at.exception, at.exception
    assert at.session_state["_tau_slot"]["drawn"] is True                 # the page's fragment drew it
    assert at.slider(key="threshold").value == pytest.approx(0.33)
    labels = _sidebar_labels(at)
    assert labels.index("Group attribute") < labels.index("Decision threshold τ") < labels.index("Beneficial outcome")
    assert "tau=0.33" in _link(at) and len(at.sidebar.code) == 1


def test_tau_stays_in_the_sidebar_when_home_stops_before_its_summary(monkeypatch):
    def broken() -> bool:
        raise RuntimeError("a page bug before the Summary")
    monkeypatch.setattr(_sources, "offered", broken)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    assert any("Something went wrong" in e.value for e in at.error)      # the page's guard caught it
    assert at.session_state["_tau_slot"]["drawn"] is False
    assert at.slider(key="threshold").value == pytest.approx(0.4)        # the frame drew τ after the page
    assert "tau=0.40" in _link(at)


def test_the_startup_objects_leave_the_collection_after_every_run():
    _app()
    assert gc.get_freeze_count() > 10_000        # the imports' objects: Streamlit's gc.collect(2) after a run skips them


def _summary_block(at: AppTest):
    """The block Home's fragment draws the Summary in (it opens with the "Summary: …" heading)."""
    def find(node):
        for child in getattr(node, "children", {}).values():
            kids = list(getattr(child, "children", {}).values())
            if kids and kids[0].type == "subheader" and kids[0].value.startswith("Summary:"):
                return child
            found = find(child)
            if found is not None:
                return found
    return find(at.main)


def _shape(node) -> list:
    return [(child.type, _shape(child)) for child in getattr(node, "children", {}).values()]


def _kinds(node) -> list[str]:
    return [kind for child in getattr(node, "children", {}).values() for kind in (child.type, *_kinds(child))]


def _same_places(a: list, b: list) -> bool:
    """The same number of elements in the same order at every level, each of the same kind or an empty placeholder
    on one side (a part or a finding slot drawn at one τ and not at the other)."""
    return len(a) == len(b) and all((ka == kb or "empty" in (ka, kb)) and _same_places(ca, cb)
                                    for (ka, ca), (kb, cb) in zip(a, b))


def test_the_summary_keeps_its_elements_in_place_when_the_findings_change():
    """COMPAS by race: five findings at τ = 0.40, three at τ = 0.70, where one more note is said (a kind checked and
    unremarkable); a τ step between them updates the Summary's elements in place (the progress bar of a first
    audit at that τ has its place too)."""
    at = _app()
    shapes, tops = {}, {}
    for tau in (0.70, 0.40, 0.70):          # 0.70 computed, 0.40 kept from the first run, then 0.70 kept
        at.slider(key="threshold").set_value(tau).run()
        assert not at.exception, at.exception
        block = _summary_block(at)
        shapes.setdefault(tau, []).append(_shape(block))
        tops[tau] = sum(kind == "page_link" for kind in _kinds(block))
    assert tops == {0.40: 5, 0.70: 3}                                   # the findings differ
    first, back, again = shapes[0.70][0], shapes[0.40][0], shapes[0.70][1]
    assert _same_places(first, back) and first == again
    box = next(children for kind, children in first if "page_link" in [k for k, _ in children])
    assert len(box) == 10                                               # five finding slots, a sentence and a link each


def test_the_reports_downloads_outside_the_fragment_follow_a_tau_step():
    """The downloads are drawn after Home's fragment (they change only when a report is prepared): a τ step forgets
    the report of the previous τ and offers to prepare it again."""
    at = _app()
    next(b for b in at.button if b.label == "Prepare the full report").click().run()
    assert not at.exception, at.exception
    assert [b.label for b in at.get("download_button")] == ["Download JSON", "Download HTML report"]
    at.slider(key="threshold").set_value(0.47).run()
    assert not at.exception, at.exception
    assert at.get("download_button") == [] and "report_key" not in at.session_state
    assert any(b.label == "Prepare the full report" for b in at.button)
