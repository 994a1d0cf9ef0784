"""Quotas: parsing the targets and allocating rows exactly."""
import pytest

from fairviz.data import DataError
from fairviz.synth import quotas


def test_uniform_and_explicit_targets():
    assert quotas.parse_target("uniform", ["a", "b", "c", "d"], "group") == {k: 0.25 for k in "abcd"}
    assert quotas.parse_target(None, [0, 1], "label") == {0: 0.5, 1: 0.5}
    got = quotas.parse_target("a=1, b=3", ["a", "b", "c"], "group")
    assert got == {"a": 0.25, "b": 0.75, "c": 0.0}
    assert quotas.parse_target("1=0.7,0=0.3", [0, 1], "label") == {0: pytest.approx(0.3), 1: pytest.approx(0.7)}
    assert quotas.parse_target("Male × White=1", ["Male × White", "Female × Black"], "group")["Male × White"] == 1.0


@pytest.mark.parametrize("text, message", [("x=0.5", "not one of: a, b"), ("a=lots", "not a number"),
                                           ("a=-1", "≥ 0"), ("a=0,b=0", "share of 0"), ("a", "NAME=SHARE")])
def test_bad_targets_are_named(text, message):
    with pytest.raises(DataError, match=message):
        quotas.parse_target(text, ["a", "b"], "group")


def test_allocate_is_exact_to_the_row():
    assert quotas.allocate(301, {"a": 0.3, "b": 0.7}) == {"a": 90, "b": 211}
    assert quotas.allocate(10, {"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}) == {"a": 4, "b": 3, "c": 3}
    for rows in (0, 1, 7, 999, 10_001):
        counts = quotas.allocate(rows, {"a": 0.123, "b": 0.456, "c": 0.421})
        assert sum(counts.values()) == rows
        assert all(abs(counts[k] - rows * s) < 1 for k, s in {"a": 0.123, "b": 0.456, "c": 0.421}.items())


def test_matched_real_rows_follow_the_synthetic_cell_shares():
    import numpy as np

    from fairviz.synth.evaluate import matched_rows

    real = np.array(["a|0"] * 80 + ["a|1"] * 10 + ["b|0"] * 8 + ["b|1"] * 2, dtype=object)
    synth = np.array(["a|0"] * 25 + ["a|1"] * 25 + ["b|0"] * 25 + ["b|1"] * 25 + ["c|1"] * 0, dtype=object)
    picked = real[matched_rows(real, synth, 200, np.random.default_rng(0))]
    values, counts = np.unique(picked, return_counts=True)
    assert dict(zip(values, counts)) == {"a|0": 50, "a|1": 50, "b|0": 50, "b|1": 50}
