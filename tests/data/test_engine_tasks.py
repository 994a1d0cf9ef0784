"""The engine's regression and multiclass reductions (issue 25, item 4): the reduced predictions audit as the rows
do (exactly in exact mode; binned: moments, confusion counts and ECE bins exact, the rest within the stated
resolution), Spark's table equals DuckDB's, and bad input gets the row path's message."""
from __future__ import annotations

import re
import shutil

import numpy as np
import pandas as pd
import pytest

from fairviz.data import ColumnMapping, DataError
from fairviz.data import engine as engine_module
from fairviz.data.engine import Engine, reduce_path
from fairviz.data.tasks.multiclass import CLASS_CELLS
from fairviz.data.tasks.regression import REGRESSION_CELLS
from fairviz.data.validation import build_predictions

CLASSES = ("cat", "dog", "bird", "fish")
REGRESSION = ColumnMapping("target", "y_pred", ("group",), task="regression",
                           more_scores=())
MULTICLASS = ColumnMapping("label", "", ("group",), task="multiclass", class_scores=tuple(f"p_{c}" for c in CLASSES))
PREDICTED = ColumnMapping("label", "conf", ("group",), task="multiclass", predicted="pred")


def regression_frame(rows: int, decimals: int | None = 1, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    group = rng.choice(np.array(["a", "b", "c"]), rows, p=[.5, .3, .2])
    y = rng.gamma(4.0, 2.5, rows)
    y_hat = y * 0.9 + 1.0 + rng.normal(0, 2.0, rows) + (group == "b") * 0.6
    if decimals is not None:
        y, y_hat = y.round(decimals), y_hat.round(decimals)
    return pd.DataFrame({"group": group, "target": y, "y_pred": y_hat})


def multiclass_frame(rows: int, decimals: int | None = 2, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    group = rng.choice(np.array(["a", "b", "c"]), rows, p=[.5, .3, .2])
    p = rng.dirichlet([1.0, 1.0, 1.0, 1.0], rows)
    if decimals is not None:                       # few values: rounded, renormalised in the last column
        p[:, :3] = p[:, :3].round(decimals) * 0.99
        p[:, 3] = 1 - p[:, :3].sum(axis=1)
    tilt = np.where(group == "b", 0.7, 1.0)[:, None]
    truth = p ** tilt / (p ** tilt).sum(axis=1, keepdims=True)
    y = (rng.random(rows)[:, None] > np.cumsum(truth, axis=1)).sum(axis=1).clip(0, 3)
    frame = pd.DataFrame({"group": group, "label": np.array(CLASSES)[y]})
    for k, c in enumerate(CLASSES):
        frame[f"p_{c}"] = p[:, k]
    return frame


def leaves(value, path: str = "") -> dict[str, float]:
    """Every numeric leaf of a result (dataclasses, dicts, lists, arrays), keyed by its path."""
    import dataclasses
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in leaves(item, f"{path}.{key}").items()}
    if isinstance(value, (list, tuple)):
        return {k: v for i, item in enumerate(value) for k, v in leaves(item, f"{path}[{i}]").items()}
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return {path: float(value)}
    return {}


def regression_results(pred) -> dict:
    from fairviz.calibration.mincer_zarnowitz import analyse_regression as calibration
    from fairviz.parity.error_parity import RegressionParityParams, analyse_regression as parity
    return {"parity": parity(pred, "group", RegressionParityParams(resamples=30, permutations=30)).to_dict(),
            "calibration": calibration(pred, "group")}


def multiclass_results(pred) -> dict:
    from fairviz.calibration.top_label_ece import MulticlassParams, analyse_multiclass
    from fairviz.parity.one_vs_rest import MulticlassParityParams, multiclass_parity
    view = pred.attributes["group"]
    return {"parity": multiclass_parity(pred.y, pred.predicted, view.codes, view.names, pred.classes, pred.weight,
                                        "group", MulticlassParityParams(resamples=30)).to_dict(),
            "calibration": analyse_multiclass(pred, "group", MulticlassParams(resamples=30))}


def assert_same(reduced: dict, rows: dict, rel: float, skip=re.compile(r"^$")) -> int:
    a, b = leaves(reduced), leaves(rows)
    assert a.keys() == b.keys()
    compared = 0
    for path in a:
        if skip.search(path.rsplit(".", 1)[-1]):
            continue
        x, y = a[path], b[path]
        if np.isnan(y):
            assert np.isnan(x), path
            continue
        # a test statistic from a difference of residual sums of squares (the nested F tests of
        # the groups) loses the digits the sums share: summed in another order (entries, not rows) it and its p agree
        # to 1e-9, their inputs to 1e-12
        nested = any(f".{test}." in path for test in ("same_line", "same_slope"))
        tolerance = max(rel, 1e-9) if nested else rel
        assert abs(x - y) <= tolerance * max(1.0, abs(y)), (path, x, y)
        compared += 1
    return compared


def reduced(tmp_path, frame: pd.DataFrame, mapping: ColumnMapping, engine: Engine | None = None):
    path = tmp_path / "data.parquet"
    frame.to_parquet(path)
    return reduce_path(path, mapping, engine or Engine())


# ----------------------------------------------------------------------------------------------- exact mode

def test_regression_exact_reduction_audits_as_the_rows(tmp_path):
    frame = regression_frame(20_000, decimals=0)
    stats = reduced(tmp_path, frame, REGRESSION)
    assert stats.exact and stats.to_dict()["mode"] == "exact"
    assert len(stats.table) < len(frame) / 2                  # one entry per distinct (group, y, ŷ)
    pred = stats.predictions()
    assert int(pred.weight.sum()) == len(frame) and pred.task == "regression"
    compared = assert_same(regression_results(pred), regression_results(build_predictions(frame, REGRESSION)),
                           1e-12)
    assert compared > 100


def test_multiclass_exact_reduction_audits_as_the_rows(tmp_path):
    frame = multiclass_frame(30_000)
    stats = reduced(tmp_path, frame, MULTICLASS)
    assert stats.exact and len(stats.table) < len(frame)
    pred = stats.predictions()
    rows = build_predictions(frame, MULTICLASS)
    assert pred.classes == rows.classes == CLASSES
    assert assert_same(multiclass_results(pred), multiclass_results(rows), 1e-12) > 100


def test_multiclass_with_a_predicted_class_reduces_exactly(tmp_path):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"group": rng.choice(["a", "b"], 5_000), "label": rng.choice(["x", "y", "z"], 5_000),
                          "pred": rng.choice(["x", "y", "z"], 5_000), "conf": rng.random(5_000).round(2)})
    pred = reduced(tmp_path, frame, PREDICTED).predictions()
    rows = build_predictions(frame, PREDICTED)
    assert assert_same(multiclass_results(pred), multiclass_results(rows), 1e-12) > 50


# ----------------------------------------------------------------------------------------------- binned mode

def _group_sums(frame: pd.DataFrame) -> pd.DataFrame:
    r = frame["y_pred"] - frame["target"]
    parts = pd.DataFrame({"group": frame["group"], "n": 1.0, "sum_y": frame["target"],
                          "sum_yy": frame["target"] ** 2, "sum_p": frame["y_pred"], "sum_abs": r.abs(),
                          "sum_sq": r ** 2, "sum_pp": frame["y_pred"] ** 2,
                          "sum_yp": frame["target"] * frame["y_pred"]})
    return parts.groupby("group").sum()


def test_binned_regression_keeps_every_moment_exact_and_moves_estimates_within_its_resolution(tmp_path,
                                                                                             monkeypatch):
    monkeypatch.setattr(engine_module, "EXACT_ROWS", 1_000)      # a small input reduced as a large one is
    frame = regression_frame(60_000, decimals=None)
    stats = reduced(tmp_path, frame, REGRESSION, Engine(task_cells={"regression": 200}))
    assert not stats.exact and stats.resolution == 1 / 200
    assert len(stats.table) < len(frame) / 2
    moments = stats.moments.assign(group=stats.table["group"], n=stats.table[stats.count].astype(float))
    expected = _group_sums(frame)
    got = moments.groupby("group").sum()[expected.columns]
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=1e-12)
    pred = stats.predictions()
    assert "1/200 of each column's range" in pred.notes[-1] and pred.resolution == 1 / 200
    rows = build_predictions(frame, REGRESSION)
    assert np.isclose(np.average(pred.y, weights=pred.weight), frame["target"].mean(), rtol=1e-12, atol=0)
    assert np.isclose(np.average(pred.score, weights=pred.weight), frame["y_pred"].mean(), rtol=1e-12, atol=0)
    # means exact; the rest within the cells: 1/200 of the range moves bias by 0, MAE and RMSE by a fraction of a cell
    width = (frame["target"].max() - frame["target"].min()) / 200
    a, b = regression_results(pred)["parity"], regression_results(rows)["parity"]
    assert list(a["groups"]) == list(b["groups"])
    for g_a, g_b in zip(a["groups"].values(), b["groups"].values()):
        assert g_a["n"] == g_b["n"]
        assert abs(g_a["bias"] - g_b["bias"]) < 1e-12
        assert abs(g_a["mae"] - g_b["mae"]) < width and abs(g_a["rmse"] - g_b["rmse"]) < width
        assert abs(g_a["mae"] - g_b["mae"]) > 0                  # binned for real


def test_binned_multiclass_keeps_confusion_counts_and_ece_bins_exact(tmp_path, monkeypatch):
    monkeypatch.setattr(engine_module, "EXACT_ROWS", 1_000)
    frame = multiclass_frame(40_000, decimals=None)
    stats = reduced(tmp_path, frame, MULTICLASS, Engine(task_cells={"multiclass": 30}))
    assert not stats.exact and stats.resolution == 1 / 30 and len(stats.table) < len(frame)
    pred = stats.predictions()
    rows = build_predictions(frame, MULTICLASS)
    a, b = multiclass_results(pred), multiclass_results(rows)
    parity_a, parity_b = a["parity"], b["parity"]
    assert leaves(parity_a) == leaves(parity_b)        # confusion matrices, rates, F1, accuracy: from counts alone
    from fairviz.core.ece import ece
    view_a, view_b = pred.attributes["group"], rows.attributes["group"]
    for k in range(len(CLASSES)):
        for g in range(len(view_a.names)):
            mask_a, mask_b = view_a.codes == g, view_b.codes == g
            exact = ece(rows.class_scores[mask_b, k], rows.y[mask_b] == k, 15)
            got = ece(pred.class_scores[mask_a, k], pred.y[mask_a] == k, 15, pred.weight[mask_a])
            assert abs(got - exact) < 1e-12
    for got, exact in zip(a["calibration"].all_groups, b["calibration"].all_groups):
        assert got.name == exact.name and got.n == exact.n and got.accuracy == exact.accuracy
        assert abs(got.top_ece - exact.top_ece) < 1e-12 and abs(got.classwise_ece - exact.classwise_ece) < 1e-12
        assert abs(got.mean_confidence - exact.mean_confidence) < 1e-12


def test_default_resolutions_are_the_documented_ones():
    assert (REGRESSION_CELLS, CLASS_CELLS) == (100_000, 300)
    assert Engine().task_cells("regression") == REGRESSION_CELLS
    assert Engine(task_cells={"multiclass": 30}).task_cells("multiclass") == 30


# ----------------------------------------------------------------------------------------------- bad input

def _messages(tmp_path, frame: pd.DataFrame, mapping: ColumnMapping) -> tuple[str, str]:
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    out = []
    for attempt in (lambda: build_predictions(pd.read_csv(path), mapping),
                    lambda: reduce_path(path, mapping).predictions()):
        with pytest.raises(DataError) as err:
            attempt()
        out.append(str(err.value))
    return out[0], out[1]


def test_bad_regression_input_gets_the_row_paths_message(tmp_path):
    rng = np.random.default_rng(1)
    g = rng.choice(["a", "b"], 300)
    y = rng.normal(size=300).round(2).astype(object)
    y[[5, 17, 40]] = ["x", "n/a?", "bad"]
    row, engine = _messages(tmp_path, pd.DataFrame({"group": g, "target": y, "y_pred": rng.normal(size=300)}),
                            REGRESSION)
    assert "has 3 non-numeric values" in row and "a regression target must be numbers" in row
    # the same sentence; the engine's table has no row order, so the examples come in another order
    examples = lambda m: sorted(re.search(r"e\.g\. (.*)\)", m).group(1).split(", "))   # noqa: E731
    assert re.sub(r"\(e\.g\. .*\)", "", row) == re.sub(r"\(e\.g\. .*\)", "", engine)
    assert examples(row) == examples(engine)
    two = pd.DataFrame({"group": g, "target": rng.choice([0, 1], 300), "y_pred": rng.normal(size=300)})
    row, engine = _messages(tmp_path, two, REGRESSION)
    assert row == engine and "that is a binary task" in row
    infinite = pd.DataFrame({"group": g, "target": rng.normal(size=300), "y_pred": rng.normal(size=300)})
    infinite.loc[7, "y_pred"] = np.inf
    row, engine = _messages(tmp_path, infinite, REGRESSION)
    assert row == engine == "The prediction column 'y_pred' has 1 infinite values."


def test_bad_multiclass_input_gets_the_row_paths_message(tmp_path):
    rng = np.random.default_rng(2)
    g = rng.choice(["a", "b"], 300)
    p = rng.dirichlet([1, 1, 1], 300)
    three = ColumnMapping("label", "", ("group",), task="multiclass", class_scores=("p_cat", "p_dog", "p_bird"))
    frame = pd.DataFrame({"group": g, "label": rng.choice(["cat", "dog", "bird", "fish"], 300),
                          "p_cat": p[:, 0], "p_dog": p[:, 1], "p_bird": p[:, 2]})
    row, engine = _messages(tmp_path, frame, three)
    assert row == engine and "no class probability column: 'fish'" in row
    frame["label"] = rng.choice(["cat", "dog", "bird"], 300)
    frame.loc[20, "p_dog"] = 1.5
    row, engine = _messages(tmp_path, frame, three)
    assert row == engine and "'p_dog' has values outside [0, 1]" in row
    frame["label"] = rng.integers(0, 1_000, 300)
    row, engine = _messages(tmp_path, frame, three)
    assert row == engine


def test_probabilities_that_miss_one_are_noted_as_the_rows_are(tmp_path, monkeypatch):
    monkeypatch.setattr(engine_module, "EXACT_ROWS", 100)       # binned: those rows keep their own entries
    rng = np.random.default_rng(4)
    p = rng.dirichlet([1, 1, 1, 1], 2_000)
    p[:25] *= 0.9
    frame = pd.DataFrame({"group": rng.choice(["a", "b"], 2_000), "label": rng.choice(CLASSES, 2_000)})
    for k, c in enumerate(CLASSES):
        frame[f"p_{c}"] = p[:, k]
    pred = reduced(tmp_path, frame, MULTICLASS).predictions()
    rows = build_predictions(frame, MULTICLASS)
    assert rows.notes[0].startswith("The class probabilities of 25 rows do not sum to 1")
    assert pred.notes[0] == rows.notes[0]


# ----------------------------------------------------------------------------------------------- Spark

@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")
def test_spark_reduces_regression_and_multiclass_to_duckdbs_cells(tmp_path, monkeypatch):
    pytest.importorskip("pyspark")
    monkeypatch.setattr(engine_module, "EXACT_ROWS", 1_000)
    spark = Engine("spark")
    try:
        for frame, mapping, cells in ((regression_frame(5_000, decimals=None), REGRESSION, {"regression": 200}),
                                      (multiclass_frame(5_000, decimals=None), MULTICLASS, {"multiclass": 30})):
            duck = reduced(tmp_path, frame, mapping, Engine(task_cells=cells))
            spark.task_cell_counts = cells
            theirs = reduced(tmp_path, frame, mapping, spark)
            assert not duck.exact and theirs.resolution == duck.resolution
            pd.testing.assert_frame_equal(theirs.table, duck.table, check_dtype=False, rtol=1e-12)
            if duck.moments is not None:
                pd.testing.assert_frame_equal(theirs.moments, duck.moments, rtol=1e-12)
    finally:
        spark.close()


# ----------------------------------------------------------------------------------------------- PostgreSQL

def test_postgres_reduces_regression_and_multiclass_to_duckdbs_cells(tmp_path, monkeypatch):
    pytest.importorskip("psycopg")
    from fairviz.data.sources import Table
    from tests.data.servers import load_frame, postgres_bin, postgres_server
    if postgres_bin() is None:
        pytest.skip("no PostgreSQL server")
    monkeypatch.setattr(engine_module, "EXACT_ROWS", 1_000)
    cases = ((regression_frame(4_000, decimals=None), REGRESSION, {"regression": 200}),
             (multiclass_frame(4_000, decimals=None), MULTICLASS, {"multiclass": 30}),
             (multiclass_frame(800, decimals=2), MULTICLASS, {}))          # small: exact on both
    with postgres_server() as dsn:
        for k, (frame, mapping, cells) in enumerate(cases):
            load_frame(dsn, f"t{k}", frame)
            duck = reduced(tmp_path, frame, mapping, Engine(task_cells=cells))
            engine = Engine("postgres", dsn=dsn, task_cells=cells)
            try:
                theirs = engine.reduce(Table(f"t{k}"), mapping)
            finally:
                engine.close()
            assert theirs.resolution == duck.resolution and theirs.exact == (k == 2)
            pd.testing.assert_frame_equal(theirs.table, duck.table, check_dtype=False, rtol=1e-12)
            if duck.moments is not None:
                pd.testing.assert_frame_equal(theirs.moments, duck.moments, rtol=1e-12)


def test_an_uploads_bytes_reduce_as_its_file_does(tmp_path):
    """The app's upload path: only the task's columns are decoded (class probabilities, predicted class)."""
    frame = multiclass_frame(3_000).assign(note="unused")
    raw = frame.to_csv(index=False).encode()
    from_bytes = Engine().reduce(raw, MULTICLASS, "upload.csv")
    path = tmp_path / "upload.csv"
    path.write_bytes(raw)
    from_file = reduce_path(path, MULTICLASS)
    pd.testing.assert_frame_equal(from_bytes.table, from_file.table)
    pred = from_bytes.predictions()
    assert pred.class_scores.shape == (len(from_bytes.table), 4) and int(pred.weight.sum()) == 3_000
