"""Stop keeps what finished: a retraining sweep stopped during condition k+1 hands back the k finished conditions,
equal to the full run's first k (models retrain with the same seeds), marked partial and never as the whole run."""
from __future__ import annotations

import pytest

from fairviz.conditions import data as cdata
from fairviz.conditions import simulate
from fairviz.conditions.methods import DebiasTrainParams
from fairviz.core.progress import Stopped

SETTINGS = simulate.RetrainingParams(alphas=(0.0, 1.0, 2.0), methods=("vanilla", "rw"), seeds=1, m=600,
                                     train=DebiasTrainParams(hidden=8, epochs=2, patience=1))


class StopAt:
    """A progress callback that raises Stopped at its first report on the condition named ``label``."""

    def __init__(self, label: str):
        self.label = label

    def __call__(self, fraction: float, message: str) -> None:
        if message.startswith(self.label):
            raise Stopped()


def _timeless(sim) -> list[dict]:
    return [{k: v for k, v in r.to_dict().items() if k != "seconds"} for r in sim.runs]


@pytest.fixture(scope="module")
def data():
    return cdata.moji_like(n_train=1200, n_dev=400, n_test=400, seed=1)


@pytest.fixture(scope="module")
def full(data):
    return simulate.run(data, SETTINGS)


@pytest.mark.parametrize("k", [1, 2])
def test_a_stop_after_k_conditions_returns_those_k(data, full, k):
    labels = [c.condition.label for c in full.train_cells]
    with pytest.raises(Stopped) as stopped:
        simulate.run(data, SETTINGS, progress=StopAt(labels[k]))
    partial = stopped.value.partial
    assert partial is not None and partial.completion.done == k and partial.completion.total == 3
    assert not partial.completion.complete
    first_k = [r for r in _timeless(full) if r["alpha"] in SETTINGS.alphas[:k]]
    assert _timeless(partial) == first_k and len(first_k) == k * 2 * 2      # methods × {dev, test}
    assert [c.condition.label for c in partial.train_cells] == labels[:k]
    assert [s.to_dict() for s in partial.selected] == [s.to_dict() for s in full.selected[:2 * k]]
    assert partial.to_dict()["partial"] == {"complete": False, "done": k, "total": 3, "unit": "conditions"}
    assert "partial" not in full.to_dict() and full.completion is None


def test_a_stop_before_any_condition_finished_keeps_nothing(data, full):
    with pytest.raises(Stopped) as stopped:
        simulate.run(data, SETTINGS, progress=StopAt(full.train_cells[0].condition.label))
    assert stopped.value.partial is None


def test_the_partial_note_names_the_count(data, full):
    from fairviz.conditions import display as report
    with pytest.raises(Stopped) as stopped:
        simulate.run(data, SETTINGS, progress=StopAt(full.train_cells[2].condition.label))
    head = report.simulation_head(stopped.value.partial)
    assert head[0].plain().startswith("Partial: 2 of 3 conditions finished before Stop")
    assert head[0].level == "note"


def test_a_stop_on_the_last_report_keeps_every_condition(data, full):
    with pytest.raises(Stopped) as stopped:
        simulate.run(data, SETTINGS, progress=StopAt("done"))
    kept = stopped.value.partial
    assert kept.completion is None and _timeless(kept) == _timeless(full)
