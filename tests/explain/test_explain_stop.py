"""Stop within a batch: every explanation loop reaches the caller's progress callback between model batches.

A page's Stop works by raising from the next progress call (Streamlit raises at the next element call). Each test
hands a loop a progress callback that raises after k calls and counts the model's forward passes: the run must end
right there (no forward pass after the raise) and no loop may do more than one model batch between two progress
calls (``runtime.BEAT_INTERVAL_S`` is 0 here, so every heartbeat reaches the callback).
"""
from __future__ import annotations

import dataclasses

import pytest

torch = pytest.importorskip("torch")

from fairviz.core import runtime  # noqa: E402
from fairviz.explain import data, models  # noqa: E402
from fairviz.explain import pipeline  # noqa: E402
from fairviz.explain.attribute import AttributionParams, explain  # noqa: E402
from fairviz.explain.metrics import pgd_deltas, soft_many  # noqa: E402
from tests.devices import devices  # noqa: E402

SMALL = AttributionParams(shap_max_evals=64, model_batch=8, ig_internal_batch=10, ig_steps=20, batch_size=2,
                            lime_max_samples=200)


class Stop(BaseException):
    """What Streamlit raises (its ScriptControlException is a BaseException, so `except Exception` lets it pass)."""


class Probe:
    """A progress callback that raises on call ``k``, and a forward hook that notes how many calls preceded each
    forward pass."""

    def __init__(self, clf, k: int):
        self.k, self.calls, self.forwards = k, 0, []
        clf.model.register_forward_hook(lambda *_: self.forwards.append(self.calls))

    def __call__(self, fraction, message):
        self.calls += 1
        if self.calls >= self.k:
            raise Stop

    def check(self) -> None:
        assert self.calls == self.k, "the loop never reached the k-th progress call"
        assert self.forwards and max(self.forwards) < self.k, "a forward pass ran after the Stop"
        per_call = [self.forwards.count(c) for c in set(self.forwards)]
        assert max(per_call) <= 1, f"{max(per_call)} forward passes between two progress calls"


@pytest.fixture(scope="module", params=devices())
def setup(request):
    torch.set_num_threads(1)
    clf = models.load(models.ModelParams("tiny", seed=0), device=request.param)   # untrained: stopping is the point
    dataset = data.neutral_control(40, seed=0)
    rows = clf.encode(dataset.frame.text[:6])
    return clf, dataset, rows, dataset.frame.label.astype(int).tolist()[:6]


@pytest.fixture(autouse=True)
def every_beat(monkeypatch):
    monkeypatch.setattr(runtime, "BEAT_INTERVAL_S", 0.0)


def fresh(clf):
    """The same weights without the hooks of earlier tests."""
    import copy
    return models.TextClassifier(copy.deepcopy(clf.model), clf.tokenizer, clf.spec, clf.device)


@pytest.mark.parametrize("method, k", [pytest.param("shap", 4, marks=pytest.mark.slow),  # importing shap: seconds
                                       ("lime", 9), ("igxi", 4), ("grad", 2)])
def test_each_explainer_stops_within_a_model_batch(setup, method, k):
    clf, _, rows, targets = setup
    clf = fresh(clf)
    probe = Probe(clf, k=k)
    with pytest.raises(Stop), runtime.heartbeat(probe):
        explain(clf, rows, targets, method, [1] * len(rows), SMALL)
    probe.check()


def test_soft_metrics_and_the_pgd_attack_stop(setup):
    clf, _, rows, targets = setup
    clf = fresh(clf)
    probe = Probe(clf, k=3)
    with pytest.raises(Stop), runtime.heartbeat(probe):
        pgd_deltas(clf, rows, targets, batch_size=2)
    probe.check()
    probe = Probe(clf, k=2)
    items = [(r, [1.0] * (len(r) - 2), y, 1, 2) for r, y in zip(rows, targets)]
    with pytest.raises(Stop), runtime.heartbeat(probe):
        soft_many(clf, items, batch_size=2, keep_given=True)
    probe.check()


def test_training_stops_at_the_next_batch(setup):
    clf, dataset, _, _ = setup
    clf = fresh(clf)
    clf.spec = dataclasses.replace(clf.spec, epochs=3, batch_size=4)
    probe = Probe(clf, k=3)
    with pytest.raises(Stop):
        models.train(clf, dataset.frame.text, dataset.frame.label, progress=probe)
    probe.check()
    assert not clf.model.training                       # put back in eval mode on the way out


def test_a_whole_explanation_run_stops_and_the_generators_are_free_again(setup):
    clf, dataset, _, _ = setup
    clf = fresh(clf)
    train, test = data.split_by_pair(dataset, 0.5, seed=0)
    trained = pipeline.TrainedModel(clf, dataset, train, test, models.TrainingReport(0, 0, 0.0, float("nan")), {})
    settings = pipeline.ExplainParams(n_pairs=3, attribution=SMALL)
    for k in (2, 7, 15):
        probe = Probe(clf, k=k)
        with pytest.raises(Stop):
            pipeline.explain_dataset(trained, settings, progress=probe)
        assert probe.calls == k and max(probe.forwards, default=-1) < k
    with runtime.seeded(0):                              # nothing left holding the process-wide generators
        pass
