"""One plan for every task (issue 35): a task's sections are those of the checks that serve it, in ``CHECKS`` order,
and a task registered in a test alone is served by registering methods, with no edit to the plan."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairviz.core.checks import Check, Section
from fairviz.data import ColumnMapping, build_predictions
from fairviz.data.tasks import TaskSpec, spec_of, task_names
from fairviz.data.tasks.registry import _REGISTRY
from fairviz.report import plan
from fairviz.report.audit import AuditParams
from fairviz.residuals import RDFParams


@pytest.mark.parametrize("task", task_names())
def test_a_task_runs_the_sections_of_the_checks_that_serve_it_in_one_order(task):
    expected = [check.section(task) for check in plan.CHECKS if check.serves(task)]
    assert plan.sections_for(task) == expected
    assert plan.sections_for(spec_of(task)) == expected
    assert expected, f"no check serves {task}"


def test_every_task_follows_one_order():
    order = [check.name for check in plan.CHECKS]
    assert order == ["residuals", "threshold_invariance", "calibration", "parity", "sample_size", "per_class",
                     "explain"]
    assert [s.name for s in plan.sections_for("regression")] == ["residuals", "calibration_regression",
                                                                 "parity_regression"]
    assert [s.name for s in plan.sections_for("multiclass")] == ["calibration_multiclass", "parity_multiclass",
                                                                 "class_match", "per_class"]


def test_the_summary_quick_audit_is_the_parity_and_sample_size_checks():
    assert plan.quick_sections("binary") == ("parity", "significance")
    assert plan.quick_sections("regression") == ("parity_regression",)       # no sample-size method for it
    assert plan.quick_sections("multiclass") == ("parity_multiclass", "class_match")


TOY = TaskSpec(name="toy_task", title="toy task", roles=("label", "score", "groups"))


def _toy_run(pred, options):
    return {"n": float(pred.n)}


TOY_SECTION = Section("toy_parity", _toy_run, lambda pred, result, options: {"toy_parity": result},
                      title="Toy parity", weighted=True, display=lambda pred, result, options: [])


@pytest.fixture
def toy(monkeypatch):
    """A fourth task registered here only (its registry entry and its parity method undone after the test)."""
    monkeypatch.setitem(_REGISTRY, TOY.name, TOY)
    monkeypatch.setitem(plan.check("parity").methods, TOY.name, TOY_SECTION)
    return TOY


def test_a_method_registered_for_a_new_task_is_picked_up(toy):
    assert plan.sections_for(toy.name) == [TOY_SECTION]
    assert plan.quick_sections(toy.name) == ("toy_parity",)
    assert TOY.name not in [s.name for s in plan.sections_for("binary")]


def test_a_new_check_joins_the_plan_in_its_place(toy, monkeypatch):
    extra = Section("toy_extra", _toy_run, lambda pred, result, options: {"toy_extra": result})
    checks = (*plan.CHECKS[:1], Check("toy_check", {toy.name: extra}), *plan.CHECKS[1:])
    monkeypatch.setattr(plan, "CHECKS", checks)
    assert plan.sections_for(toy.name) == [extra, TOY_SECTION]
    assert "toy_extra" not in [s.name for s in plan.sections_for("binary")]


def test_one_path_audits_one_attribute_or_every_attribute():
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame({"y": rng.integers(0, 2, n), "score": rng.uniform(size=n),
                          "sex": rng.choice(["f", "m"], n), "region": rng.choice(["n", "s"], n)})
    pred = build_predictions(frame, ColumnMapping("y", "score", ("sex", "region")))
    options = AuditParams(attribute="sex", rdf=RDFParams(resamples=0, knee_resamples=0), sections=("parity",))
    one = plan.audit(pred, options)
    assert "attributes" not in one.data and not one.several
    every = plan.audit(pred, options, every_attribute=True)
    assert list(every.data["attributes"]) == ["sex", "region"] and every.several
    assert every.attribute_audits["sex"] is not every          # the first attribute's own audit is left as it was
    assert "attributes" not in every.attribute_audits["sex"].data
    assert every.data["attributes"]["region"]["attribute"] == "region" and "summary" in every.data
