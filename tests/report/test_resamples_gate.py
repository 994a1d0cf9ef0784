"""Issue 34 item 2: `--resamples 0, 1, 2` give every task the Summary its point estimates support (the tests that
need resampling named untested, never a fake interval or p-value), and the release gate fails closed: a section
that fails makes `--fail-on material` exit 1, naming the section in the terminal, the JSON and the JUnit XML."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from fairviz.cli.main import main
from fairviz.parity.entry_stats import split_among_groups
from fairviz.report import plan

CLASSES = np.array(["cat", "dog", "bird"])
COLUMNS = {"binary": ["--label", "y", "--score", "score"],
           "regression": ["--task", "regression", "--label", "price", "--score", "y_pred"],
           "multiclass": ["--task", "multiclass", "--label", "label", "--class-scores", "p_*"]}
PARITY = {"binary": "parity", "regression": "parity_regression", "multiclass": "parity_multiclass"}


def _frames(n: int, seed: int, planted: bool) -> dict[str, pd.DataFrame]:
    """One small data set per task; ``planted``: group b is treated worse (errors biased, cats read as dogs, more
    false positives), else the groups are alike."""
    rng = np.random.default_rng(seed)
    group = rng.choice(["a", "b"], n, p=[0.6, 0.4]).astype(object)
    b = (group == "b") & planted
    prediction = rng.normal(50, 10, n)
    target = prediction + rng.normal(0, 5, n) + 5 * b
    p = rng.dirichlet([2, 2, 2], n)
    labels = (rng.random(n)[:, None] > np.cumsum(p, 1)).sum(1)
    swap = b & (labels == 0) & (rng.random(n) < 0.6)
    p[swap] = p[swap][:, [1, 0, 2]]
    p[swap, 1] = p[swap].max(1) + 0.05
    p /= p.sum(1, keepdims=True)
    y = rng.random(n) < 0.4
    flagged = np.where(y, rng.random(n) < 0.7, rng.random(n) < np.where(b, 0.45, 0.2))
    score = np.where(flagged, rng.uniform(0.5, 1, n), rng.uniform(0, 0.5, n))
    return {"regression": pd.DataFrame({"price": target.round(3), "y_pred": prediction.round(3), "group": group}),
            "multiclass": pd.DataFrame({"label": CLASSES[labels], "p_cat": p[:, 0], "p_dog": p[:, 1],
                                        "p_bird": p[:, 2], "group": group}),
            "binary": pd.DataFrame({"y": y.astype(int), "score": score, "group": group})}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("resamples")
    paths = {}
    for planted in (True, False):
        for task, frame in _frames(800, 0 if planted else 5, planted).items():
            paths[task, planted] = folder / f"{task}_{'planted' if planted else 'alike'}.csv"
            frame.to_csv(paths[task, planted], index=False)
    return paths


def _audit(path, task: str, resamples: int, out, *more) -> tuple[int, dict, str]:
    import contextlib
    import io
    terminal = io.StringIO()
    with contextlib.redirect_stdout(terminal):
        code = main(["audit", str(path), *COLUMNS[task], "--group", "group", "--resamples", str(resamples),
                     "--knee-resamples", "0", "--fail-on", "material", "--json", str(out), *map(str, more)])
    return code, json.loads(out.read_text()), terminal.getvalue()


@pytest.fixture(scope="module")
def full(files, tmp_path_factory):
    """Each task's audit with 200 resamples: the findings the point estimates are held against."""
    folder = tmp_path_factory.mktemp("full")
    return {task: _audit(files[task, True], task, 200, folder / f"{task}.json")[:2] for task in COLUMNS}


def _key(row: dict) -> tuple:
    return row["kind"], row["group"], row.get("class")


@pytest.mark.parametrize("task", list(COLUMNS))
@pytest.mark.parametrize("resamples", [0, 1, 2])
def test_few_resamples_give_the_summary_the_point_estimates_support(files, full, tmp_path, task, resamples):
    full_code, full_data = full[task]
    code, data, terminal = _audit(files[task, True], task, resamples, tmp_path / "audit.json")
    assert "errors" not in data and "errors" not in full_data               # 0 resamples used to crash parity
    assert code == full_code == 1                                            # the gate fails as with 200
    summary, reference = data["findings"], full_data["findings"]
    assert summary["top"] and terminal.startswith(data["source"]) and "\nSummary\n" in terminal
    every = {_key(row): row for row in reference["candidates"]}
    for row in summary["candidates"]:                                        # the same point estimates
        assert row["effect"] == pytest.approx(every[_key(row)]["effect"], rel=1e-12, abs=1e-15)
    full_headlines = {_key(row) for row in reference["candidates"] if row["headline"]}
    headlines = {_key(row) for row in summary["candidates"] if row["headline"]}
    assert headlines and headlines <= full_headlines
    for kind, _, _ in full_headlines - headlines:                           # what resampling tests is untested
        assert kind in summary["untested"]
    for row in summary["candidates"]:
        if row["kind"] in summary["untested"]:
            assert row["p_value"] is None and row["ci"] is None and not row["headline"]
    assert f"{resamples} resamples (--resamples): bootstrap intervals are not computed" in " ".join(data["notes"])
    assert "Not tested:" in terminal and "the full report has them" not in terminal
    assert data["gate"]["exit_code"] == 1 and data["gate"]["failed"] == []


def test_a_regression_without_resamples_tests_its_error_gaps_by_welch(files, tmp_path):
    code, data, terminal = _audit(files["regression", True], "regression", 0, tmp_path / "audit.json")
    rows = pd.read_csv(files["regression", True])
    residual = rows.y_pred - rows.price
    b, a = residual[rows.group == "b"], residual[rows.group == "a"]
    found = {row["kind"]: row for row in data["findings"]["candidates"] if row["group"] == "b"}
    assert found["bias_gap"]["p_value"] == pytest.approx(sps.ttest_ind(b, a, equal_var=False).pvalue, rel=1e-9)
    assert found["mae_gap"]["p_value"] == pytest.approx(sps.ttest_ind(b.abs(), a.abs(), equal_var=False).pvalue,
                                                        rel=1e-9)
    assert found["bias_gap"]["test"].startswith("Welch's t-test") and found["bias_gap"]["ci"] is None
    assert found["bias_gap"]["effect"] == pytest.approx((b.mean() - a.mean()) / a.abs().mean(), rel=1e-12)
    assert "Not tested: 0 permutations of group labels cannot reach α = 0.05" in terminal   # never "no gap"
    assert "is beyond sampling noise once" not in terminal


@pytest.mark.parametrize("task", list(COLUMNS))
def test_alike_groups_still_pass_without_resamples(files, tmp_path, task):
    code, data, _ = _audit(files[task, False], task, 0, tmp_path / "audit.json")
    assert code == 0 and data["findings"]["material_count"] == 0 and data["gate"]["failed"] == []


def _boom(pred, params):
    raise ValueError("the fit diverged")


def _break_parity(monkeypatch, task: str) -> None:
    parity = plan.check("parity")
    monkeypatch.setitem(parity.methods, task, replace(parity.section(task), run=_boom))


@pytest.mark.parametrize("task", list(COLUMNS))
def test_a_failing_section_fails_the_gate_and_is_named(files, tmp_path, monkeypatch, task):
    """Alike groups pass the gate (exit 0); the same audit with its parity section failing exits 1, and the
    terminal, the JSON's gate and the JUnit XML say which section failed and why."""
    junit = tmp_path / "audit.xml"
    _break_parity(monkeypatch, task)
    code, data, terminal = _audit(files[task, False], task, 0, tmp_path / "audit.json", "--junit", junit)
    assert code == 1
    failed = {"attribute": "group", "section": PARITY[task], "error": "ValueError: the fit diverged"}
    assert {k: data["gate"]["failed"][0][k] for k in failed} == failed and data["gate"]["exit_code"] == 1
    sentence = f"the {PARITY[task]} section of 'group' could not be computed: ValueError: the fit diverged"
    assert f"gate: {sentence}; the audit is incomplete, so the gate fails" in terminal
    suite = ET.parse(junit).getroot()
    errors = [case.find("error") for case in suite if case.find("error") is not None]
    assert suite.get("errors") == "1" and [e.get("message") for e in errors] == [sentence]
    monkeypatch.undo()
    assert _audit(files[task, False], task, 0, tmp_path / "fixed.json")[0] == 0


def test_a_failing_section_of_another_attribute_fails_the_gate(files, tmp_path, monkeypatch):
    """Several attributes: the second attribute's failed section fails the gate too, named with its attribute."""
    frame = pd.read_csv(files["binary", False])
    frame["region"] = np.where(np.arange(len(frame)) % 3 == 0, "north", "south")
    path = tmp_path / "two.csv"
    frame.to_csv(path, index=False)
    parity = plan.check("parity")
    real = parity.section("binary")

    def parity_fails_on_region(pred, params):
        if params.attribute == "region":
            raise ValueError("the fit diverged")
        return real.run(pred, params)

    monkeypatch.setitem(parity.methods, "binary", replace(real, run=parity_fails_on_region))
    out = tmp_path / "audit.json"
    code = main(["audit", str(path), *COLUMNS["binary"], "--group", "group", "--group", "region", "--resamples", "0",
                 "--knee-resamples", "0", "--fail-on", "material", "--json", str(out)])
    data = json.loads(out.read_text())
    assert code == 1 and [(f["attribute"], f["section"]) for f in data["gate"]["failed"]] == [("region", "parity")]


@pytest.mark.parametrize("resamples", [0, 1, 2, 5])
def test_permuting_group_labels_with_few_resamples(resamples):
    """No resamples give an empty null (it raised IndexError); any number keeps each group's size and the pooled
    counts of every cell."""
    cells = np.array([[3, 0, 5, 2], [1, 4, 0, 6], [2, 2, 2, 2]])
    null = split_among_groups(cells, resamples, np.random.default_rng(0))
    assert null.shape == (resamples, 3, 4)
    assert (null.sum(2) == cells.sum(1)).all() and (null.sum(1) == cells.sum(0)).all()


def test_a_model_comparison_with_few_resamples_says_what_it_did_not_test(files, tmp_path):
    """Two models at --resamples 2: AUROC keeps DeLong's test; the permutation-tested differences say so."""
    frame = pd.read_csv(files["binary", True])
    frame["other"] = np.clip(frame.score + np.random.default_rng(1).normal(0, 0.1, len(frame)), 0, 1)
    path = tmp_path / "two_models.csv"
    frame.to_csv(path, index=False)
    code, data, terminal = _audit(path, "binary", 2, tmp_path / "audit.json", "--score", "other")
    assert "comparison" in data and "errors" not in data and code == 1
    assert "Only AUROC (DeLong's test) is tested: 2 paired permutations cannot reach α = 0.05" in \
        " ".join(terminal.split())


@pytest.mark.parametrize("flag", ["--resamples", "--knee-resamples"])
def test_negative_resamples_are_refused_in_one_line(files, capsys, flag):
    assert main(["audit", str(files["binary", True]), *COLUMNS["binary"], flag, "-5"]) == 2
    err = capsys.readouterr().err
    assert f"{flag} must be 0 or more (0 skips resampling), got -5." in err and "Traceback" not in err
