"""The calibration section writes one JSON shape for every task (issue 35): one key, ``calibration``, holding
``method``, ``attribute``, ``groups`` ({group: record}), ``pairs`` where the method compares groups in pairs, the
method's own keys, ``settings`` and ``notes``; all rows' record is ``overall``, never a group."""
from __future__ import annotations

import numpy as np
import pytest

from fairviz.calibration import CalibrationParams, analyse
from fairviz.calibration.mincer_zarnowitz_display import mean_calibration_to_dict
from fairviz.calibration.reliability_display import calibration_to_dict
from fairviz.calibration.top_label_display import top_label_calibration_to_dict
from fairviz.core.serialize import clean
from fairviz.data.samples import load_sample
from tests.calibration.test_mean_and_top_label_display import multiclass_result, regression_result

ENVELOPE = ["method", "attribute", "groups"]
CLOSING = ["settings", "notes"]


def _records():
    cal = analyse(load_sample("compas"), "race", CalibrationParams(resamples=0))
    return {"reliability": (cal, calibration_to_dict(cal)["calibration"]),
            "mincer_zarnowitz": (regression_result(), mean_calibration_to_dict(regression_result())),
            "top_label_ece": (multiclass_result(), top_label_calibration_to_dict(multiclass_result()))}


@pytest.fixture(scope="module")
def records():
    return _records()


@pytest.mark.parametrize("method", ["reliability", "mincer_zarnowitz", "top_label_ece"])
def test_every_method_writes_the_same_envelope(records, method):
    result, record = records[method]
    keys = list(clean(record))
    assert keys[:3] == ENVELOPE and keys[-2:] == CLOSING
    assert record["method"] == method and record["attribute"] == result.attribute
    assert ("pairs" in record) == (method != "mincer_zarnowitz")          # calibration in the mean has no pairs
    # each group once, under its name; all rows under ``overall``, with the same numbers as the result
    assert list(record["groups"]) == [g.name for g in result.groups]
    assert record["overall"]["n"] == result.overall.n
    assert all("group" not in row for row in record["groups"].values())


def test_the_records_are_the_results_numbers(records):
    cal, binary = records["reliability"]
    aa = cal.group("African-American")
    assert binary["groups"]["African-American"]["ece"] == aa.ece
    assert binary["groups"]["African-American"]["n"] == aa.n and binary["overall"]["ece"] == cal.overall.ece
    mean, regression = records["mincer_zarnowitz"]
    for g in mean.groups:
        assert regression["groups"][g.name]["slope"] == g.mz.slope.estimate
        assert regression["groups"][g.name]["mean_y"] == g.mean_y
    top, multiclass = records["top_label_ece"]
    for g in top.groups:
        assert multiclass["groups"][g.name]["top_label_ece"] == g.top_ece
    assert [(p["group"], p["reference"], p["measure"]) for p in multiclass["pairs"]] == \
        [(d.group, d.reference, d.measure) for d in top.gaps]
    assert np.isclose(multiclass["overall"]["accuracy"], top.overall.accuracy, rtol=0, atol=0)
