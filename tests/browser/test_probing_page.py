"""The "Knee probing & augmentation" page in a real browser: shipped results, both tabs, an uploaded file (a broken
one first), a real computation with the tiny model, no traceback."""
from __future__ import annotations

import re

import pytest

from .conftest import choose, no_traceback, wait_for_app

pytestmark = pytest.mark.slow             # ("browser" comes from tests/conftest.py, by folder)


def _csv(path, pairs: int, one_group: bool = False) -> None:
    """Twin sentences: text, sentiment label, the subject's gender (in that column order)."""
    verbs = {1: ["loved", "enjoyed", "praised"], 0: ["hated", "disliked", "mocked"]}
    things = ["the film", "the book", "the meal", "the show", "the play", "the song", "the park"]
    rows = ["text,label,group"]
    for i in range(pairs):
        label = i % 2
        verb, thing = verbs[label][i % 3], things[i % 7]
        for subject, own, gender in (("He", "his", "male"), ("She", "her", "female")):
            rows.append(f"{subject} said {own} friend {verb} {thing} number {i},{label},"
                        f"{'male' if one_group else gender}")
    path.write_text("\n".join(rows) + "\n")


def test_shipped_tabs_then_an_uploaded_file(page, app_url, tmp_path):
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_test_id("stSidebarNavItems").get_by_role("link", name="Knee probing & augmentation").click()
    page.locator(".js-plotly-plot").first.wait_for()
    wait_for_app(page)
    page.get_by_text("Demographic swap: knee / non-knee").wait_for()
    page.get_by_text("The examples and their counterfactuals").wait_for()
    page.get_by_role("tab", name="RDF-guided augmentation").click()
    page.get_by_text("Sign convention.").wait_for()
    page.get_by_text("Calibration-conditioned reading (App. E).").wait_for()
    no_traceback(page)

    page.get_by_text("Compute now").click()
    wait_for_app(page)
    choose(page, page.get_by_label("Data", exact=True), "Upload a CSV (text, label, group)", exact=False)
    broken = tmp_path / "one_group.csv"
    _csv(broken, 20, one_group=True)
    page.locator('input[type="file"]').first.set_input_files(str(broken))
    page.get_by_text("has a single value ('male'); two groups are compared").wait_for()
    no_traceback(page)

    good = tmp_path / "twins.csv"
    _csv(good, 150)
    page.locator('input[type="file"]').first.set_input_files(str(good))
    wait_for_app(page)
    page.get_by_text("Uploaded texts ('text')").wait_for()
    page.get_by_role("tab", name="Counterfactual probing").click()
    page.get_by_role("button", name="Run probing").click()
    page.get_by_text("Demographic swap: knee / non-knee").wait_for(timeout=300_000)
    caveats = page.get_by_test_id("stExpander").filter(has_text=re.compile(r"\d+ caveats?"))
    caveats.first.locator("summary").click()                        # the caveats are folded after the first chart
    page.get_by_text("knee-region rows in the pool: all are probed").wait_for()       # 150 asked, fewer there
    no_traceback(page)
