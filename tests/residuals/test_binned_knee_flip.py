"""The binned knee search cannot flip on sub-cell noise (issue 28 item 5).

2M rows with a steep residual curve (scores Beta(0.15, 0.15), labels drawn from them): DuckDB reduces them to
1/300,000-wide score cells, each at the mean of its scores. Kneedle reads a LOWESS curve whose difference curve is
flat near its maximum, so before, the cells' sub-cell noise moved a group's knee by up to five grid points and F_v by
5.6e-3 between the rows and their table. The search now reads residuals at the cell resolution above 200,000 rows:
rows and table find the same knee percentiles (F_h equal), and the knees' residuals — read raw — differ by less than a
cell, so F_v moves by less than 1e-4 as the docs promise. The JSON carries the pooled knees."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from fairviz.data import ColumnMapping, build_predictions
from fairviz.data.engine import Engine
from fairviz.data.sources import Frame
from fairviz.residuals.display import rdf_to_dict
from fairviz.residuals import RDFParams, analyse, at_threshold

N_PER_GROUP = 1_000_000
PARAMS = RDFParams(resamples=0, knee_resamples=0)


def _steep(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    parts = []
    for name, shift in (("a", 0.0), ("b", 0.05)):
        s = np.clip(rng.beta(0.15, 0.15, N_PER_GROUP) * (1 - shift) + shift / 2, 0, 1)
        parts.append(pd.DataFrame({"y": (rng.random(N_PER_GROUP) < s).astype(np.int64), "score": s, "group": name}))
    return pd.concat(parts, ignore_index=True)


@pytest.fixture(scope="module")
def audits():
    frame = _steep(3)
    mapping = ColumnMapping("y", "score", ("group",))
    rows = build_predictions(frame, mapping, source="steep", file_fingerprint="steep-3")
    stats = Engine().reduce(Frame(pa.Table.from_pandas(frame)), mapping)
    assert not stats.exact and stats.rows == 2 * N_PER_GROUP
    binned = stats.predictions()
    return (at_threshold(analyse(rows, "group", PARAMS), rows, 0.5),
            at_threshold(analyse(binned, "group", PARAMS), binned, 0.5))


def test_rows_and_their_binned_table_find_the_same_knees(audits):
    exact, binned = audits
    for g_exact, g_binned in zip(exact.groups, binned.groups):
        for k_exact, k_binned in zip(g_exact.knees, g_binned.knees):
            assert k_exact.percentile == k_binned.percentile
            assert abs(k_exact.residual - k_binned.residual) < 1 / 300_000
    for p_exact, p_binned in zip(exact.pairs, binned.pairs):
        for k_exact, k_binned in zip(p_exact.pooled_knees, p_binned.pooled_knees):
            assert k_exact.percentile == k_binned.percentile
            assert abs(k_exact.residual - k_binned.residual) < 1 / 300_000
        assert p_exact.f_h == p_binned.f_h
        assert abs(p_exact.f_v - p_binned.f_v) < 1e-4
        assert abs(p_exact.f_v_abs - p_binned.f_v_abs) < 1e-5


def test_the_json_carries_the_pooled_knees(audits):
    exact, binned = audits
    data = rdf_to_dict(binned)["pooled_knees"]
    assert [(p["group_i"], p["group_j"]) for p in data] == [(p.group_i, p.group_j) for p in binned.pairs]
    first = data[0]
    assert first["search_cells"] == 300_000
    assert first["left"]["percentile"] == binned.pairs[0].pooled_knees[0].percentile
    assert first["right"]["residual"] == binned.pairs[0].pooled_knees[1].residual
    assert rdf_to_dict(exact)["pooled_knees"][0]["left"]["percentile"] == first["left"]["percentile"]
