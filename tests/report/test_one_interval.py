"""One bootstrap convention for every interval (Residual Distribution Fairness App. B: percentile, 1,000 row
resamples), and one interval per quantity: the overall ECE in the audit JSON has the same interval in the
knee-concentration block and in the calibration block."""
from __future__ import annotations

import json

import numpy as np
import pytest

from fairviz.calibration import CalibrationParams
from fairviz.calibration import analysis as calibration_analysis
from fairviz.cli.main import main
from fairviz.core import ece as ece_module
from fairviz.core import stats
from fairviz.data.samples import load_sample, sample_path


@pytest.fixture(scope="module")
def audit_json(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("one") / "a.json"
    assert main(["audit", str(sample_path("synthetic")), "--resamples", "200", "--knee-resamples", "0",
                 "--seed", "3", "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_overall_ece_has_one_interval_in_the_audit_json(audit_json):
    knee = audit_json["knee_concentration"]
    overall = audit_json["calibration"]["overall"]
    assert knee["ece"] == pytest.approx(audit_json["calibration"]["overall"]["ece"], abs=1e-15)
    assert knee["ece_ci"] == overall["ece_ci"]
    assert knee["ece_ci"][0] < knee["ece_ci"][1]


def test_the_interval_is_the_percentile_interval_of_row_resamples(audit_json):
    pred = load_sample("synthetic")
    boot = ece_module.ece_resamples(pred.score, pred.y, 200, seed=3)
    expected = stats.percentile_interval(boot)
    assert audit_json["knee_concentration"]["ece_ci"] == pytest.approx([expected.low, expected.high], abs=1e-12)
    # row resamples: each one is the ECE of a with-replacement draw of the rows, so the spread is real
    rng = np.random.default_rng(0)
    direct = [ece_module.ece(pred.score[i], pred.y[i]) for i in (rng.integers(0, pred.n, pred.n) for _ in range(200))]
    assert np.std(boot) == pytest.approx(np.std(direct), rel=0.25)
    assert np.mean(boot) == pytest.approx(np.mean(direct), abs=0.2 * np.std(direct))


def test_no_reverse_percentile_interval_is_left():
    assert not hasattr(calibration_analysis, "basic_interval")
    # a group's ECE interval holds the 2.5 % and 97.5 % quantiles of its own resamples: both ends at or above the
    # smallest resample, which a reflected (basic) interval of an upward-biased statistic is not
    pred = load_sample("synthetic")
    audit = calibration_analysis.analyse(pred, "group", CalibrationParams(resamples=200, seed=5))
    for g in audit.groups:
        mask = pred.groups("group").codes == list(pred.groups("group").names).index(g.name)
        boot = ece_module.ece_resamples(pred.score[mask], pred.y[mask], audit.params.resamples,
                                        seed=ece_module.group_seed(audit.params.seed, g.name))
        interval = stats.percentile_interval(boot, audit.params.level)
        assert (g.ece_ci.low, g.ece_ci.high) == pytest.approx((interval.low, interval.high), abs=1e-12)
