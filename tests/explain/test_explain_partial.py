"""Stop keeps what finished: an explanation run stopped while its (k+1)-th explainer works hands back the k explainers
that finished, every sentence's scores equal to the full run's, marked partial."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fairviz.core import runtime  # noqa: E402
from fairviz.core.progress import Stopped  # noqa: E402
from fairviz.explain import data, models, pipeline  # noqa: E402
from fairviz.explain.attribute import AttributionParams  # noqa: E402
from fairviz.explain.registry import METHOD_NAMES  # noqa: E402

SETTINGS = pipeline.ExplainParams(methods=("grad", "gxi", "random"), metrics=("aopc_comp", "complexity"), n_pairs=3,
                                  attribution=AttributionParams(batch_size=2))


@pytest.fixture(scope="module")
def trained():
    torch.set_num_threads(1)
    clf = models.load(models.ModelParams("tiny", seed=0), device="cpu")
    dataset = data.neutral_control(40, seed=0)
    train, test = data.split_by_pair(dataset, 0.5, seed=0)
    return pipeline.TrainedModel(clf, dataset, train, test, models.TrainingReport(0, 0, 0.0, float("nan")), {})


@pytest.fixture(autouse=True)
def every_beat(monkeypatch):
    monkeypatch.setattr(runtime, "BEAT_INTERVAL_S", 0.0)


def _stop_at(method: str):
    def progress(fraction, message):
        if message.startswith(f"{METHOD_NAMES[method]}:"):
            raise Stopped()
    return progress


def _rows(result, methods):
    frame = result.scores[result.scores["method"].isin(methods)].reset_index(drop=True)
    return frame.drop(columns=[c for c in frame.columns if c.endswith("_s")], errors="ignore")


@pytest.mark.parametrize("k", [1, 2])
def test_a_stop_after_k_explainers_returns_those_k(trained, k):
    full = pipeline.explain_dataset(trained, SETTINGS)
    with pytest.raises(Stopped) as stopped:
        pipeline.explain_dataset(trained, SETTINGS, progress=_stop_at(SETTINGS.methods[k]))
    partial = stopped.value.partial
    assert partial is not None and partial.completion.done == k and partial.completion.total == 3
    assert partial.methods == [m for m in full.methods if m in SETTINGS.methods[:k]]
    expected = _rows(full, SETTINGS.methods[:k])
    assert len(expected) == k * 6                                     # 3 pairs = 6 sentences per explainer
    assert _rows(partial, SETTINGS.methods[:k]).equals(expected)
    assert full.completion is None and partial.meta["partial"]["unit"] == "explainers"
    assert partial.completion.note().plain().startswith(f"Partial: {k} of 3 explainers finished before Stop")


def test_a_stop_in_the_first_explainer_keeps_nothing(trained):
    with pytest.raises(Stopped) as stopped:
        pipeline.explain_dataset(trained, SETTINGS, progress=_stop_at("grad"))
    assert stopped.value.partial is None
