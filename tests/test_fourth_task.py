"""A fourth task registered in this test only — a toy ranking task (a spec plus one method for each of two checks)
— runs end to end through the CLI and one page without any module of fairviz or the app edited: the proof that a
new task is a module of its own, not edits across the code (issue 35)."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from fairviz.calibration import display as calibration
from fairviz.core.checks import Section
from fairviz.core.display import Table, text
from fairviz.data.tasks import REGRESSION, TaskSpec, register, unregister
from fairviz.parity import display as parity

TOY = "toy_ranking"


def _validate(frame, mapping, source, file_fingerprint, weights, limits, converted):
    """Ranks are read as a numeric target's rows are (the toy's own part is its checks)."""
    rows = REGRESSION.validate(frame, replace(mapping, task=REGRESSION.name), source, file_fingerprint, weights,
                               limits, converted)
    return replace(rows, task=TOY, mapping=mapping)


def _rank_gaps(pred, options):
    """Each group's mean rank displacement |estimate − rank| (the toy's parity method)."""
    groups = pred.groups(options.attribute)
    shift = np.abs(pred.score - pred.y)
    return {name: float(shift[groups.codes == k].mean()) for k, name in enumerate(groups.names)}


def _rank_bias(pred, options):
    """Each group's mean signed displacement estimate − rank (the toy's calibration-in-the-mean method)."""
    groups = pred.groups(options.attribute)
    return {name: float((pred.score - pred.y)[groups.codes == k].mean()) for k, name in enumerate(groups.names)}


def _display(title):
    def display(pred, result, options):
        rows = pd.DataFrame({"group": list(result), title: list(result.values())})
        return [text("{title} per group", "plain", title=title), Table(rows, key=(title,))]
    return display


RANK_PARITY = Section("rank_parity", _rank_gaps, lambda pred, result, options: {"rank_parity": result},
                      title="Rank displacement by group", weighted=False, display=_display("mean displacement"))
RANK_CALIBRATION = Section("rank_calibration", _rank_bias, lambda pred, result, options: {"rank_calibration": result},
                           title="Rank bias by group", weighted=False, display=_display("mean bias"))


@pytest.fixture
def toy_task():
    spec = register(TaskSpec(name=TOY, title="ranking", roles=("label", "score", "groups"), numeric_target=True,
                             words={"label": "rank", "score": "estimate"}, validate=_validate))
    parity.CHECK.serve(spec, RANK_PARITY)
    calibration.CHECK.serve(spec, RANK_CALIBRATION)
    yield spec
    parity.CHECK.methods.pop(TOY)
    calibration.CHECK.methods.pop(TOY)
    unregister(TOY)


def _ranks(path):
    rng = np.random.default_rng(7)
    rank = np.arange(1.0, 201.0)
    group = np.where(np.arange(200) % 2 == 0, "a", "b")
    estimate = rank + np.where(group == "a", 0.0, 5.0) + rng.normal(0, 1, 200)
    pd.DataFrame({"rank": rank, "estimate": estimate, "group": group}).to_csv(path, index=False)
    return rank, estimate, group


def test_the_fourth_task_runs_through_the_cli(toy_task, tmp_path):
    from fairviz.cli.main import main
    rank, estimate, group = _ranks(tmp_path / "ranks.csv")
    out = tmp_path / "audit.json"
    code = main(["audit", str(tmp_path / "ranks.csv"), "--task", TOY, "--label", "rank", "--score", "estimate",
                 "--group", "group", "--json", str(out), "--resamples", "0"])
    data = json.loads(out.read_text())
    assert data["task"] == TOY and code in (0, 1)
    expected = {g: float(np.abs(estimate - rank)[group == g].mean()) for g in ("a", "b")}
    assert data["rank_parity"] == pytest.approx(expected, rel=1e-12)
    assert data["rank_calibration"]["b"] == pytest.approx(float((estimate - rank)[group == "b"].mean()), rel=1e-12)
    assert not [e for e in data.get("errors", []) if e["section"].startswith("rank_")]


@pytest.mark.app
def test_the_fourth_task_opens_on_the_parity_page(toy_task, tmp_path):
    """Loaded as an upload leaves it, the toy's data open on Group parity with the toy's own method and numbers."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from fairviz.data import ColumnMapping, build_predictions
    rank, estimate, group = _ranks(tmp_path / "ranks.csv")
    frame = pd.read_csv(tmp_path / "ranks.csv")
    pred = build_predictions(frame, ColumnMapping("rank", "estimate", ("group",), task=TOY), source="ranks.csv")
    assert pred.task == TOY
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=240)
    at.session_state["predictions"] = pred
    at.session_state["sample_key"] = None
    at.run()
    assert not at.exception, at.exception
    at.switch_page("app_pages/parity.py").run()
    assert not at.exception, at.exception
    assert any("mean displacement per group" in m.value for m in at.markdown)
    shown = next(d.value for d in at.dataframe if "mean displacement" in d.value.columns)
    expected = {g: float(np.abs(estimate - rank)[group == g].mean()) for g in ("a", "b")}
    assert dict(zip(shown["group"], shown["mean displacement"])) == pytest.approx(expected, rel=1e-12)


@pytest.mark.app
def test_the_fourth_task_opens_on_the_calibration_page_with_its_own_method(toy_task, tmp_path):
    """The calibration page asks the check for the toy's method: its own rank bias per group, not calibration in the
    mean, which a numeric target would otherwise suggest."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from fairviz.data import ColumnMapping, build_predictions
    rank, estimate, group = _ranks(tmp_path / "ranks.csv")
    frame = pd.read_csv(tmp_path / "ranks.csv")
    pred = build_predictions(frame, ColumnMapping("rank", "estimate", ("group",), task=TOY), source="ranks.csv")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=240)
    at.session_state["predictions"] = pred
    at.session_state["sample_key"] = None
    at.run()
    at.switch_page("app_pages/calibration.py").run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Rank bias by group"
    shown = next(d.value for d in at.dataframe if "mean bias" in d.value.columns)
    expected = {g: float((estimate - rank)[group == g].mean()) for g in ("a", "b")}
    assert dict(zip(shown["group"], shown["mean bias"])) == pytest.approx(expected, rel=1e-12)
