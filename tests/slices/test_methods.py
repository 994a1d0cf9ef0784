"""The slice search is task-neutral: a task's slices are one ``SliceMethod`` entry (``fairviz.slices.methods``), and a
fourth task registered here, in the test only, is searched, tested and worded without editing any module."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fairviz.core.display import Text
from fairviz.data.model import DataError
from fairviz.data.tasks import _REGISTRY, MetricSpec, TaskSpec, task_names
from fairviz.slices import METHODS, SliceParams, find_slices, method_of, slice_counts
from fairviz.slices.display import slices_display
from fairviz.slices.methods import CountMetric, rate, summed
from fairviz.slices.metrics import default_metric, metric_title

from tests.slices.data import regression_frame, regression_predictions

TOY = TaskSpec(name="toy_ordinal", title="ordinal rating", roles=("label", "score", "groups"),
               metrics=(MetricSpec("miss_rate", "miss rate"),), error_metric="miss_rate")


def _miss_rows(pred, threshold):
    weight = np.ones(len(pred.y)) if pred.weight is None else np.asarray(pred.weight, float)
    miss = (np.abs(np.asarray(pred.score, float) - np.asarray(pred.y, float)) > 2.5).astype(float)
    return {"n": weight, "misses": weight * miss}


def _describe_misses(out, t):
    out["miss_rate"] = rate(summed(t, ("misses",)), t["n"].to_numpy(float))


@pytest.fixture
def toy(monkeypatch):
    """The toy task in the registry and its slice method in METHODS, both gone after the test."""
    monkeypatch.setitem(_REGISTRY, TOY.name, TOY)
    monkeypatch.setitem(METHODS, TOY.name, dataclasses.replace(
        METHODS["regression"], counts=("n", "misses"),
        metrics={"miss_rate": CountMetric(("misses",), ("n",), "miss rate (|prediction − rating| > 2.5)")},
        row_counts=_miss_rows, describe=_describe_misses, usable="a rating and a prediction",
        empty="No row has a rating and a prediction.", condition="(|prediction − rating| > 2.5), "))
    return TOY


def test_every_registered_task_with_slices_has_its_error_metric_among_its_slice_metrics():
    for name in task_names():
        if name in METHODS:
            assert default_metric(name) in method_of(name).metrics


def test_a_fourth_task_is_one_entry(toy):
    data = regression_frame(n=6_000, planted=True)
    data.loc[(data["sex"] == "F") & (data["age"] == "18-25"), "prediction"] += 3.0
    pred = dataclasses.replace(regression_predictions(data), task=toy.name)
    counts = slice_counts(pred, ["sex", "age"], 2, 100, metric=None, top_k=3)
    assert counts.task == toy.name and counts.search.metric == "miss_rate"
    result = find_slices(counts, SliceParams(metric=default_metric(toy.name)))
    top = result.significant.iloc[0]
    assert top["slice"] == "sex=F ∧ age=18-25" and top["metric"] > top["rest"]
    assert np.isfinite(result.table["cps"]).all()
    assert metric_title("miss_rate", toy.name).startswith("miss rate")
    words = " ".join(item.plain() for item in slices_display(result, figure=False) if isinstance(item, Text))
    assert "(|prediction − rating| > 2.5)" in words
    with pytest.raises(DataError, match="MATCH tests a confusion-matrix metric"):
        find_slices(counts, SliceParams(metric="miss_rate", test="match"))


def test_a_task_without_a_slice_method_is_refused(monkeypatch):
    monkeypatch.setitem(_REGISTRY, TOY.name, TOY)
    with pytest.raises(DataError, match="Slices cover"):
        method_of(TOY.name)
