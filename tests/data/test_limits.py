"""Group-count limits: an attribute over the cap is refused with one message; pair work covers the largest groups."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairviz.calibration import CalibrationParams
from fairviz.calibration import analyse as calibration_analyse
from fairviz.data import ColumnMapping, DataError, build_predictions
from fairviz.data.limits import GroupLimits
from fairviz.parity.analysis import analyse as parity_analyse
from fairviz.residuals import RDFParams
from fairviz.residuals import analyse as residual_analyse

MAPPING = ColumnMapping(label="y", score="score", groups=("group",))


def frame(n_groups: int, per_group: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = n_groups * per_group
    score = rng.uniform(0.05, 0.95, n)
    return pd.DataFrame({"y": rng.binomial(1, score), "score": score,
                         "group": np.repeat([f"g{k:05d}" for k in range(n_groups)], per_group)})


def test_an_attribute_over_the_cap_is_refused_with_one_message_naming_it():
    with pytest.raises(DataError) as err:
        build_predictions(frame(20_000, 2), MAPPING)
    assert len(err.value.problems) == 1
    message = err.value.problems[0]
    assert "'group' has 20,000 groups" in message and "limit is 200" in message and "--max-groups" in message


def test_the_cap_is_adjustable_and_kept_with_the_data():
    pred = build_predictions(frame(30, 4), MAPPING, limits=GroupLimits(max_groups=30))
    assert len(pred.groups("group").names) == 30 and pred.limits.max_groups == 30
    with pytest.raises(DataError, match="has 30 groups; the limit is 29"):
        build_predictions(frame(30, 4), MAPPING, limits=GroupLimits(max_groups=29))


def test_an_intersection_over_the_cap_is_refused_when_chosen():
    data = frame(40, 20)
    data["other"] = np.tile(np.arange(10).astype(str), 80)
    pred = build_predictions(data, ColumnMapping(label="y", score="score", groups=("group", "other")),
                             limits=GroupLimits(max_groups=100))
    assert len(pred.groups("group").names) == 40           # each column alone is within the cap
    with pytest.raises(DataError, match="'group × other' has 400 groups; the limit is 100"):
        pred.groups("group × other")
    with pytest.raises(DataError, match="'group × other' has 400 groups"):      # also at load time
        build_predictions(data, ColumnMapping(label="y", score="score", groups=("group", "other"), intersect=True),
                          limits=GroupLimits(max_groups=100))


def test_pair_indices_cover_the_largest_groups_only():
    limits = GroupLimits(max_groups=500, max_pair_groups=4)
    assert limits.pair_indices(3) == [(0, 1), (0, 2), (1, 2)] and limits.pair_note("a", 3) is None
    assert limits.pair_indices(50) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert "1,225 pairs" in limits.pair_note("a", 50) and "6 pairs among the 4 largest" in limits.pair_note("a", 50)


def test_every_pair_table_is_bounded_and_says_so():
    data = frame(8, 30)
    data.loc[data.group == "g00007", "group"] = "big"          # make one group the largest
    data = pd.concat([data, frame(1, 60, seed=1).assign(group="big")], ignore_index=True)
    pred = build_predictions(data, MAPPING, limits=GroupLimits(max_pair_groups=3))
    names = pred.groups("group").names
    assert names[0] == "big" and len(names) == 8
    first_three = set(names[:3])

    rdf = residual_analyse(pred, "group", RDFParams(resamples=20, knee_resamples=0))
    assert len(rdf.pairs) == 3 and {p.group_i for p in rdf.pairs} | {p.group_j for p in rdf.pairs} == first_three
    assert len(rdf.groups) == 8 and any("28 pairs" in w for w in rdf.warnings)

    cal = calibration_analyse(pred, "group", CalibrationParams(resamples=20))
    assert len(cal.pairs) == 3 and len(cal.groups) == 8 and any("28 pairs" in n for n in cal.notes)

    par = parity_analyse(pred, "group")
    assert len(par.pair_table()) == 3 and len(par.pairs()) == 3 and par.matrices["ofi"].values.shape == (8, 8)
    assert any("28 pairs" in w for w in par.warnings)


def test_the_pair_cap_changes_no_per_group_number():
    """Per-group and overall intervals are the same whether 2 or all groups are compared pair by pair."""
    data = frame(4, 150)
    small = build_predictions(data, MAPPING, limits=GroupLimits(max_pair_groups=2))
    full = build_predictions(data, MAPPING)
    a = calibration_analyse(small, "group", CalibrationParams(resamples=60, seed=3))
    b = calibration_analyse(full, "group", CalibrationParams(resamples=60, seed=3))
    assert a.overall.ece_ci == b.overall.ece_ci and a.overall.smooth_ece_ci == b.overall.smooth_ece_ci
    assert [g.ece_ci for g in a.groups] == [g.ece_ci for g in b.groups]
    assert len(a.pairs) == 1 and len(b.pairs) == 6 and a.pairs[0] == b.pairs[0]
    ra = residual_analyse(small, "group", RDFParams(resamples=40, knee_resamples=10))
    rb = residual_analyse(full, "group", RDFParams(resamples=40, knee_resamples=10))
    assert ra.pairs[0].ci == rb.pairs[0].ci and len(rb.pairs) == 6
