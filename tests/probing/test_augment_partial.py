"""Stop keeps what finished: Algorithm 1 stopped during seed k+1 hands back the k seeds that finished — every
strategy's and the control's Δ equal to the full run's first k values — marked partial in its JSON."""
from __future__ import annotations

import pytest

from fairviz.core.progress import Stopped
from fairviz.probing.augment import AugmentParams, Split, augment
from fairviz.probing.textmodel import splits
from fairviz.explain.data import geco_like
from tests.probing.stand_ins import BagOfWords

SETTINGS = AugmentParams(ks=(30,), seeds=(42, 123, 456))


@pytest.fixture(scope="module")
def data():
    train, val, test = splits(geco_like(900, "subj", seed=1), (0.4, 0.3), seed=0)
    t, v, s = Split.of(train.frame), Split.of(val.frame), Split.of(test.frame)
    return t, v, s, BagOfWords(t.text, t.label)


def _stop_at(seed: int):
    def progress(fraction, message):
        if f"seed {seed}:" in message:
            raise Stopped()
    return progress


def _values(result: dict) -> dict:
    records = [*result["records"], result["control"]]
    return {(r["strategy"], r["k"]): {m: d["values"] for m, d in r["delta"].items()} for r in records}


@pytest.mark.parametrize("k", [1, 2])
def test_a_stop_after_k_seeds_returns_those_k(data, k):
    train, val, test, model = data
    full = augment(model, train, val, test, SETTINGS).to_dict()
    with pytest.raises(Stopped) as stopped:
        augment(model, train, val, test, SETTINGS, progress=_stop_at(SETTINGS.seeds[k]))
    partial = stopped.value.partial.to_dict()
    assert partial["partial"] == {"complete": False, "done": k, "total": 3, "unit": "seeds"}
    assert "partial" not in full
    expected = {key: {m: values[:k] for m, values in metrics.items()} for key, metrics in _values(full).items()}
    assert _values(partial) == expected
    assert all(len(v) == k for metrics in expected.values() for v in metrics.values())
    assert partial["before"] == full["before"]


def test_a_stop_in_the_first_seed_keeps_nothing(data):
    train, val, test, model = data
    with pytest.raises(Stopped) as stopped:
        augment(model, train, val, test, SETTINGS, progress=_stop_at(SETTINGS.seeds[0]))
    assert stopped.value.partial is None
