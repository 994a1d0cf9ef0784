"""The one reduction: counts per (group, label, score) on DuckDB (and Spark), audits read from it.

Exact mode must give today's row-level audit to 1e-12 (every number of the JSON); binned mode must stay within its
stated resolution; validation must name the same problems with the same row counts."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from fairviz.calibration import CalibrationParams
from fairviz.data import ColumnMapping, DataError, build_predictions, read_table
from fairviz.data.dialects import DUCKDB
from fairviz.data.engine import Engine, reduce_path, resolve
from fairviz.data.tasks.binary import reduction_sql
from fairviz.data.samples import load_sample, sample_path, samples
from fairviz.report.plan import AuditParams, audit as run_audit
from fairviz.residuals import RDFParams

FAST = AuditParams(rdf=RDFParams(resamples=100, knee_resamples=10), calibration=CalibrationParams(resamples=100))
ROW_ONLY = {"source", "mapping"}      # what the table does not carry: the file's title, the row-level roles


def numbers_differ(a, b, tol: float, path: str = "") -> list:
    """Every leaf of two JSON trees: keys and strings equal, numbers within ``tol`` (relative above 1)."""
    if isinstance(a, dict):
        if set(a) != set(b):
            return [(path, sorted(set(a) ^ set(b)))]
        return [d for k in a for d in numbers_differ(a[k], b[k], tol, f"{path}.{k}")]
    if isinstance(a, list):
        if len(a) != len(b):
            return [(path, len(a), len(b))]
        return [d for k, (x, y) in enumerate(zip(a, b)) for d in numbers_differ(x, y, tol, f"{path}[{k}]")]
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None or abs(a - b) > tol * max(1.0, abs(a)):
            return [(path, a, b)]
        return []
    return [] if a == b else [(path, a, b)]


def _audit_json(pred, options=FAST) -> dict:
    return {k: v for k, v in run_audit(pred, options).data.items() if k not in ROW_ONLY}


@pytest.mark.parametrize("key", ["compas", "synthetic", pytest.param("adult", marks=pytest.mark.slow),
                                 pytest.param("default", marks=pytest.mark.slow)])
def test_exact_mode_equals_the_row_level_audit_on_the_bundled_samples(key):
    sample = samples()[key]
    stats = Engine().reduce(resolve(sample_path(key)), sample.mapping)
    assert stats.exact and stats.rows == len(read_table(sample_path(key))[0])
    assert len(stats.table) < stats.rows                      # a reduction, not a copy
    pred = stats.predictions()
    assert pred.weighted and pred.n == load_sample(key).n
    assert numbers_differ(_audit_json(load_sample(key)), _audit_json(pred), 1e-12) == []


def _synthetic(n: int, seed: int, distinct: int | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    group = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    p = rng.beta(2, 3, n)
    if distinct:
        p = np.round(p * distinct) / distinct
    y = rng.binomial(1, np.clip(p + (group == "b") * 0.1, 0, 1))
    return pd.DataFrame({"y": y, "score": p, "group": group, "sex": rng.choice(["f", "m"], n)})


MAPPING = ColumnMapping("y", "score", ("group", "sex"), intersect=True)


def test_exact_mode_on_synthetic_data_with_an_intersection(tmp_path):
    frame = _synthetic(3000, 1, distinct=40)
    path = tmp_path / "s.parquet"
    frame.to_parquet(path)
    stats = reduce_path(path, MAPPING)
    assert stats.exact and len(stats.table) <= 3 * 2 * 2 * 41
    rows = build_predictions(frame, MAPPING)
    options = AuditParams(attribute="group × sex", rdf=FAST.rdf, calibration=FAST.calibration)
    assert numbers_differ(_audit_json(rows, options), _audit_json(stats.predictions(), options), 1e-12) == []


def test_validation_names_the_same_problems_with_row_counts(tmp_path):
    raw = b"y,score,group\n1,0.9,a\n0,,b\n1,1.7,b\n0,0.1,a\n1,0.2,\n0,-0.5,a\n"
    path = tmp_path / "bad.csv"
    path.write_bytes(raw)
    mapping = ColumnMapping("y", "score", ("group",))
    with pytest.raises(DataError) as rows:
        build_predictions(read_table(raw, "bad.csv")[0], mapping)
    with pytest.raises(DataError) as reduced:
        reduce_path(path, mapping).predictions()
    assert reduced.value.problems == rows.value.problems
    assert "2 values outside [0, 1]" in rows.value.problems[0]
    text = tmp_path / "text.csv"
    text.write_bytes(b"y,score,group\n1,0.9,a\n0,high,b\n1,high,b\n0,0.1,a\n")
    with pytest.raises(DataError, match="2 non-numeric values"):
        reduce_path(text, mapping).predictions()
    with pytest.raises(DataError, match="The score column 'p' is not in the file"):
        reduce_path(path, ColumnMapping("y", "p", ("group",)))


def test_scores_outside_the_unit_interval_are_counted_and_ranged_in_a_bounded_table(tmp_path):
    """NaN is missing; ±inf and finite scores outside [0, 1] are named with their row counts and range, while the
    table keeps one cell per side (a file of logits cannot make it as large as the file)."""
    rng = np.random.default_rng(4)
    score = rng.normal(0, 3, 5000)                                   # logits: mostly outside [0, 1]
    score[:3] = [np.inf, -np.inf, np.nan]
    frame = pd.DataFrame({"y": rng.integers(0, 2, 5000), "score": score, "group": rng.choice(["a", "b"], 5000)})
    path = tmp_path / "logits.parquet"
    frame.to_parquet(path)
    mapping = ColumnMapping("y", "score", ("group",))
    stats = reduce_path(path, mapping)
    inside = int(((score >= 0) & (score <= 1)).sum())
    assert len(stats.table) <= inside + 2 * 2 * (2 * 2 + 3)        # per group × label: 2 sides × 2 entries, NaN, ±inf
    with pytest.raises(DataError) as rows:
        build_predictions(frame, mapping)
    with pytest.raises(DataError) as reduced:
        stats.predictions()
    assert reduced.value.problems == rows.value.problems
    assert "2 infinite values" in rows.value.problems[0] and "look like logits" in rows.value.problems[1]


def test_missing_rows_and_small_groups_are_counted_in_rows(tmp_path):
    frame = pd.DataFrame({"y": [1, 0, 1, 0, 1, 0, 1], "score": [0.5, 0.5, 0.5, np.nan, 0.2, 0.2, 0.9],
                          "group": ["a", "a", "a", "a", "b", "b", "c"]})
    path = tmp_path / "m.parquet"
    frame.to_parquet(path)
    mapping = ColumnMapping("y", "score", ("group",))
    pred = reduce_path(path, mapping).predictions()
    rows = build_predictions(frame, mapping)
    assert pred.notes == rows.notes and pred.n == rows.n == 5
    assert pred.groups().names == rows.groups().names and pred.groups().sizes.tolist() == [3, 2]
    assert sorted(pred.rows().score.tolist()) == sorted(rows.score.tolist())


def test_weighted_rows_expand_to_the_same_multiset():
    frame = _synthetic(500, 2, distinct=10)
    table = frame.groupby(["y", "score", "group", "sex"], as_index=False).size()
    pred = build_predictions(table, MAPPING, weights=table["size"].to_numpy())
    rows = build_predictions(frame, MAPPING)
    expanded = pred.rows()
    assert expanded.n == rows.n == 500 and not expanded.weighted
    key = lambda p: sorted(zip(p.y.tolist(), p.score.tolist(), p.groups("group × sex").codes.tolist()))
    assert key(expanded) == key(rows)
    assert pred.groups("group × sex").sizes.tolist() == rows.groups("group × sex").sizes.tolist()


def test_the_sql_is_one_text_for_both_engines():
    text = reduction_sql("src", ColumnMapping("y", "s", ('we"ird',)), numeric_score=True)
    assert '"we""ird" AS g0' in text and "FLOOR(s * 300000)" in text and "`" not in text


def test_the_dialects_differ_only_where_the_engines_do():
    """Spark quotes with backticks (a user's session need not read double quotes); PostgreSQL has no isnan and calls
    the 64-bit float DOUBLE PRECISION. Everything else is the same text."""
    from fairviz.data.dialects import POSTGRES, SPARK
    mapping = ColumnMapping("y", "s", ("we`ird",))
    duck, spark, pg = (reduction_sql("src", mapping, True, dialect=d) for d in (DUCKDB, SPARK, POSTGRES))
    assert spark == duck.replace('"we`ird"', "`we``ird`").replace('"y"', "`y`").replace('"s"', "`s`")
    assert pg == duck.replace("AS DOUBLE)", "AS DOUBLE PRECISION)").replace("isnan(s)", "(s = 'NaN')")


@pytest.mark.slow
def test_binned_mode_moves_point_estimates_by_less_than_1e_4(tmp_path):
    frame = _synthetic(250_000, 3)
    path = tmp_path / "big.parquet"
    frame.to_parquet(path)
    mapping = ColumnMapping("y", "score", ("group",))
    stats = reduce_path(path, mapping)
    assert not stats.exact and stats.resolution == pytest.approx(1 / 300_000)
    assert len(stats.table) <= 3 * 2 * 300_001
    options = AuditParams(rdf=RDFParams(resamples=0, knee_resamples=0), calibration=CalibrationParams(resamples=0))
    binned = _audit_json(stats.predictions(), options)
    rows = _audit_json(build_predictions(frame, mapping), options)
    binned.pop("notes"), rows.pop("notes")
    assert numbers_differ(rows, binned, 1e-4) == []


@pytest.mark.slow
def test_duckdb_audits_a_file_larger_than_its_memory_limit(tmp_path):
    rng = np.random.default_rng(5)
    n = 6_000_000
    group = rng.integers(0, 4, n).astype(np.int8)
    score = rng.random(n)
    y = (rng.random(n) < score).astype(np.int8)
    path = tmp_path / "large.parquet"
    pd.DataFrame({"y": y, "score": score, "group": group}).to_parquet(path, row_group_size=500_000)
    in_memory = n * (1 + 8 + 1)
    engine = Engine(memory_limit="40MB", threads=1)
    assert in_memory > 40e6
    stats = engine.reduce(resolve(path), ColumnMapping("y", "score", ("group",)))
    assert stats.rows == n and not stats.exact
    pred = stats.predictions()
    view = pred.groups()
    expected = {str(g): (int((group == g).sum()), int(y[group == g].sum())) for g in range(4)}
    got = {name: (int(view.sizes[k]), int(pred.weight[(view.codes == k) & (pred.y == 1)].sum()))
           for k, name in enumerate(view.names)}
    assert got == expected
    mean = {name: float(np.average(pred.score[view.codes == k], weights=pred.weight[view.codes == k]))
            for k, name in enumerate(view.names)}
    assert all(abs(mean[str(g)] - score[group == g].mean()) < 1e-12 for g in range(4))


def test_calibration_reads_the_weighted_table_with_the_row_level_numbers():
    """Weights through every bincount of the calibration audit (used in binned mode). Point estimates and every
    interval equal the row-level ones to 1e-12, except the ECE intervals: their resamples bin each score cell by its
    mean, and a mean that sits on an ECE bin edge (0.2 = 3/15 here) rounds differently when summed per row or per
    weighted entry — a Monte Carlo-sized difference, which is why exact mode gives this section rows."""
    from fairviz.calibration import CalibrationParams, analyse
    from fairviz.core.serialize import clean
    from fairviz.calibration.reliability_display import calibration_to_dict
    frame = _synthetic(3000, 1, distinct=40)
    table = frame.groupby(["y", "score", "group", "sex"], as_index=False).size()
    weighted = build_predictions(table, MAPPING, weights=table["size"].to_numpy())
    rows = build_predictions(frame, MAPPING)
    for strategy in ("uniform", "quantile"):
        params = CalibrationParams(resamples=100, strategy=strategy)
        a = clean(calibration_to_dict(analyse(rows, "group × sex", params)))
        b = clean(calibration_to_dict(analyse(weighted, "group × sex", params)))
        diffs = numbers_differ(a, b, 1e-12)
        assert [d for d in diffs if not re.search(r"\.ece_(diff_)?ci", d[0])] == []
        # the ECE intervals: Monte Carlo-sized differences only (resampling cells as if each were one row would
        # widen them several-fold)
        assert all(abs(x - y) < 0.02 for _, x, y in diffs), diffs
        assert a["calibration"]["overall"]["ece"] == pytest.approx(b["calibration"]["overall"]["ece"], abs=1e-12)
