"""Stop keeps what finished: a synthetic-data run stopped during trial k+1 hands back the k trials that finished —
their fairness and accuracy equal to a run of k trials (the same samples and classifiers), the realism and privacy
checks of the full run — marked partial in its JSON."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from fairviz.core.progress import Stopped  # noqa: E402
from fairviz.synth.data import prepare  # noqa: E402
from fairviz.synth.run import SynthParams, run  # noqa: E402
from tests.synth.test_run import skewed_table  # noqa: E402

SETTINGS = dict(group_target="a=0.3,b=0.7", rows=301, epochs=3, batch=100)


def _stop_at_trial(number: int):
    def progress(fraction, message):
        if message == f"generating and judging trial {number}":
            raise Stopped()
    return progress


@pytest.fixture(scope="module")
def table():
    return prepare(skewed_table(), "y", ["g"])


@pytest.fixture(scope="module")
def full(table):
    return run(table, SynthParams(trials=3, **SETTINGS)).to_dict()


@pytest.mark.parametrize("k", [1, 2])
def test_a_stop_after_k_trials_returns_those_k(table, full, k):
    with pytest.raises(Stopped) as stopped:
        run(table, SynthParams(trials=3, **SETTINGS), progress=_stop_at_trial(k + 1))
    result = stopped.value.partial
    partial = result.to_dict()
    first_k = run(table, SynthParams(trials=k, **SETTINGS)).to_dict()
    assert partial["partial"] == {"complete": False, "done": k, "total": 3, "unit": "trials"}
    assert partial["fairness"] == first_k["fairness"] and partial["accuracy"] == first_k["accuracy"]
    for key in ("realism", "privacy", "distribution", "rows_per_group"):
        assert partial[key] == full[key]
    assert "partial" not in full and result.trials == k


def test_a_stop_in_the_first_trial_keeps_nothing(table):
    with pytest.raises(Stopped) as stopped:
        run(table, SynthParams(trials=3, **SETTINGS), progress=_stop_at_trial(1))
    assert stopped.value.partial is None
