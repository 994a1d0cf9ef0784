"""The task registry (fairviz.data.tasks): a fourth task registered from a test — its spec, recognition and
validation — is picked up without editing any module, and the three shipped tasks are recognised as before."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from fairviz.data import ColumnMapping, DataError, build_predictions, guess_mapping
from fairviz.data.engine import Engine
from fairviz.data.tasks import (BINARY, MULTICLASS, REGRESSION, TaskSpec, guess_task, register, spec_of, task_names,
                                unregister)
from fairviz.data.task_spec import NO, STRONG

RANKS = pd.DataFrame({"rank": np.tile(np.arange(1.5, 61.5), 2), "estimate": np.tile(np.arange(60.0), 2) + 2.0,
                      "group": ["a", "b"] * 60})


def _toy(claim: float, calls: list) -> TaskSpec:
    """A ranking task of the test's own: a label named ``rank`` claimed at ``claim``; validation records its call
    and reads the rows as a regression's would."""
    def recognise(frame, label):
        return claim if str(label) == "rank" else NO

    def guess_roles(frame, guess):
        return replace(guess.mapping, task="toy_ranking", score="estimate")

    def validate(frame, mapping, source, file_fingerprint, weights, limits, converted):
        calls.append((tuple(frame.columns), mapping.task, source, converted))
        as_regression = REGRESSION.validate(frame, replace(mapping, task=REGRESSION.name), source, file_fingerprint,
                                            weights, limits, converted)
        return replace(as_regression, task=mapping.task, mapping=mapping)

    return TaskSpec(name="toy_ranking", title="ranking", roles=("label", "score", "groups"), numeric_target=True,
                    words={"label": "rank", "score": "estimate"},
                    recognise=recognise, guess_roles=guess_roles, validate=validate)


@pytest.fixture
def toy():
    """Registers the toy task (claiming a ``rank`` label more strongly than regression does), then removes it."""
    calls: list = []
    spec = register(_toy(STRONG + 0.05, calls))
    yield spec, calls
    unregister(spec.name)
    assert "toy_ranking" not in task_names()


def test_the_three_tasks_are_registered_in_order_and_each_is_its_own_spec():
    assert task_names()[:3] == ("binary", "regression", "multiclass")
    assert [spec_of(name) for name in task_names()[:3]] == [BINARY, REGRESSION, MULTICLASS]
    assert spec_of(ColumnMapping("y", "p", ("g",), task="multiclass")) is MULTICLASS
    with pytest.raises(KeyError, match="unknown task 'survival'"):
        spec_of("survival")


def test_a_fourth_task_is_a_spec_and_every_name_of_it_finds_that_spec(toy):
    spec, _ = toy
    assert task_names()[-1] == "toy_ranking" and spec_of("toy_ranking") is spec
    assert spec_of(ColumnMapping("rank", "estimate", ("group",), task="toy_ranking")) is spec
    assert spec_of(spec) is spec


def test_the_strongest_claim_wins_and_the_first_registered_on_a_tie(toy):
    """Regression claims a label of fractional numbers STRONG; the toy claims a ``rank`` label a little more, so it
    wins; registered again at exactly STRONG, the tie goes to regression, registered first. A two-valued label
    stays binary (SURE), whatever its name."""
    _, calls = toy
    assert REGRESSION.recognise(RANKS, "rank") == STRONG
    assert guess_task(RANKS, "rank") == "toy_ranking"
    mapping = guess_mapping(RANKS)
    assert (mapping.task, mapping.label, mapping.score) == ("toy_ranking", "rank", "estimate")
    register(_toy(STRONG, calls))
    assert guess_task(RANKS, "rank") == "regression"
    assert guess_task(RANKS.assign(rank=RANKS["rank"] > 10), "rank") == "binary"


def test_validation_dispatches_to_the_fourth_tasks_validate(toy):
    _, calls = toy
    mapping = ColumnMapping("rank", "estimate", ("group",), task="toy_ranking")
    pred = build_predictions(RANKS, mapping, source="ranks.csv")
    assert calls == [(("rank", "estimate", "group"), "toy_ranking", "ranks.csv", False)]
    assert pred.task == "toy_ranking" and pred.n == len(RANKS)
    np.testing.assert_array_equal(pred.y, RANKS["rank"].to_numpy())
    # the shared checks speak the task's words: its label is a "rank"
    with pytest.raises(DataError, match="The rank column 'position' is not in the file"):
        build_predictions(RANKS, replace(mapping, label="position"))


def test_a_task_without_a_reduction_is_refused_by_the_engine_in_a_sentence(toy, tmp_path):
    path = tmp_path / "ranks.csv"
    RANKS.to_csv(path, index=False)
    from fairviz.data.sources import resolve
    with pytest.raises(DataError, match="Ranking predictions are read row by row only"):
        Engine().reduce(resolve(str(path)), ColumnMapping("rank", "estimate", ("group",), task="toy_ranking"))


@pytest.mark.parametrize("frame, label, task", [
    (pd.DataFrame({"y": [0, 1] * 5, "p": np.linspace(0, 1, 10)}), "y", "binary"),
    (pd.DataFrame({"y": np.linspace(0, 9, 10) + 0.5, "p": np.linspace(0, 9, 10)}), "y", "regression"),
    (pd.DataFrame({"y": np.arange(20) % 12, "p": np.arange(20.0)}), "y", "regression"),       # many whole numbers
    (pd.DataFrame({"y": ["cat", "dog", "bird"] * 4, "p_cat": 0.2, "p_dog": 0.3, "p_bird": 0.5}), "y", "multiclass"),
    (pd.DataFrame({"y": ["cat", "dog", "bird"] * 4, "p": 0.5}), "y", "binary"),   # three values, one score: binary
    (pd.DataFrame({"y": np.arange(12) % 4, "p": 0.5}), "y", "binary"),           # few whole numbers, no classes
])
def test_the_shipped_tasks_are_recognised_as_the_one_rule_did(frame, label, task):
    assert guess_task(frame, label) == task
