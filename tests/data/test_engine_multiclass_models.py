"""Two models on a multiclass file (issue 35): through the row path and the engine (DuckDB; Spark runs the same SQL),
every number of the audit's JSON — each model's sections, and the comparison of the two (paired error rates per
group and their gaps) — equals the row path's to 1e-9, for models with class probabilities and for models with a
predicted class and a confidence. Each model's audit equals the audit of a file with that model alone; binned
tables keep each model's confusion counts exact."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from fairviz.calibration import CalibrationParams
from fairviz.cli.main import main
from fairviz.data import ColumnMapping, ScoreColumn, build_predictions
from fairviz.data.engine import Engine
from fairviz.data.view import View
from fairviz.report.plan import AuditParams, audit as run_audit
from fairviz.residuals import RDFParams
from tests.data.compare import shared
from tests.data.test_engine import numbers_differ
from tests.data.test_engine_regression_models import written

ROWS = 600
CLASSES = np.array(["cat", "dog", "bird"])
FAST = ["--resamples", "20", "--knee-resamples", "0"]
# (CLI options, mapping) of each way to name two models of classes
BY_PROBABILITIES = (["--class-scores", "a_*", "--class-scores", "b_*", "--model-name", "A", "--model-name", "B"],
                    ColumnMapping("label", "", ("grp",), task="multiclass", class_scores=("a_cat", "a_dog", "a_bird"),
                                  model_name="A",
                                  more_scores=(ScoreColumn("", name="B", class_scores=("b_cat", "b_dog", "b_bird")),)))
BY_PREDICTED = (["--predicted", "pred_a", "--score", "conf_a", "--predicted", "pred_b", "--score", "conf_b"],
                ColumnMapping("label", "conf_a", ("grp",), task="multiclass", predicted="pred_a",
                              more_scores=(ScoreColumn("conf_b", predicted="pred_b"),)))
WAYS = {"probabilities": BY_PROBABILITIES, "predicted": BY_PREDICTED}
DIFFER = ("source", "engine")          # what names the source and the engine; every other key is shared
QUICK = AuditParams(attribute="grp", rdf=RDFParams(resamples=20, knee_resamples=0),
                    calibration=CalibrationParams(resamples=20), compare=True)


def two_models(rows: int = ROWS, seed: int = 0) -> pd.DataFrame:
    """A label of three classes, model A that reads group 'b's cats as dogs, model B noisier; each model's class
    probabilities (b's columns in another order than a's) and its predicted class and confidence."""
    rng = np.random.default_rng(seed)
    grp = rng.choice(["a", "b"], rows, p=[0.6, 0.4])
    label = rng.integers(0, 3, rows)
    a = rng.dirichlet([1, 1, 1], rows) + 1.5 * np.eye(3)[label]
    a[(grp == "b") & (label == 0), 1] += 1.5
    b = rng.dirichlet([1, 1, 1], rows) + 0.6 * np.eye(3)[label]
    a, b = (np.round(p / p.sum(axis=1, keepdims=True), 4) for p in (a, b))
    frame = pd.DataFrame({"grp": grp, "label": CLASSES[label]})
    for name, p in (("a", a), ("b", b)):
        frame[f"pred_{name}"], frame[f"conf_{name}"] = CLASSES[p.argmax(axis=1)], p.max(axis=1)
    for k in (0, 1, 2):
        frame[f"a_{CLASSES[k]}"] = a[:, k]
    for k in (2, 0, 1):
        frame[f"b_{CLASSES[k]}"] = b[:, k]
    return frame


def audit(capsys, *args) -> dict:
    assert main(["audit", *map(str, args), "--task", "multiclass", "--label", "label", "--group", "grp", *FAST,
                 "--json", "-"]) == 0
    return json.loads(capsys.readouterr().out)


def assert_as_rows(rows: dict, reduced: dict, engine: str) -> None:
    assert reduced["engine"]["engine"] == engine and reduced["engine"]["mode"] == "exact"
    assert reduced["engine"]["rows"] == ROWS
    assert numbers_differ(shared(rows, DIFFER), shared(reduced, DIFFER), 1e-9) == []


def error_rates(result: dict) -> dict[str, tuple[float, float]]:
    """Each group's error rate under the first and the second model, from the comparison."""
    (comparison,) = result["comparison"].values()
    return {d["group"] or "all": (d["value_a"], d["value_b"]) for d in comparison["differences"].values()
            if d["metric"] == "error_rate"}


@pytest.mark.parametrize("way", WAYS)
def test_duckdb_paths_audit_two_multiclass_models_as_the_rows(way, tmp_path, capsys):
    frame = two_models()
    options, _ = WAYS[way]
    paths = written(tmp_path, frame, "classes")
    rows = audit(capsys, paths["csv"], *options)
    assert "engine" not in rows and "errors" not in rows                     # one file: the row path
    rates = error_rates(rows)                                                # A errs on b's cats; B is noisier
    wrong = {name: frame[f"pred_{name}"] != frame["label"] for name in ("a", "b")}
    for group, mask in (("all", slice(None)), ("a", frame["grp"] == "a"), ("b", frame["grp"] == "b")):
        assert rates[group] == pytest.approx((wrong["a"][mask].mean(), wrong["b"][mask].mean()), rel=1e-12)
    db = ["--database", paths["database"]]
    for reduced in (audit(capsys, paths["folder"], *options), audit(capsys, *db, "--table", "classes", *options),
                    audit(capsys, *db, "--query", "SELECT * FROM classes", *options)):
        assert_as_rows(rows, reduced, "duckdb")


@pytest.mark.parametrize("way", WAYS)
def test_an_uploads_reduction_audits_each_multiclass_model_as_the_rows_and_as_that_model_alone(way):
    """The app's path for one file: its bytes reduced by DuckDB, then either model's audit (a page's model choice)
    equals the rows' and the audit of that model mapped alone."""
    frame = two_models()
    _, mapping = WAYS[way]
    stats = Engine().reduce(frame.to_csv(index=False).encode(), mapping, "upload.csv")
    assert stats.exact
    joint, joint_rows = stats.predictions(), build_predictions(frame, mapping, source="upload.csv")
    assert joint.model_names == joint_rows.model_names and len(joint.model_names) == 2
    for model, alone in zip(joint.model_names, mapping.models()):
        reduced = run_audit(joint.at(View(model=model)), QUICK).data
        rows = run_audit(joint_rows.at(View(model=model)), QUICK).data
        assert "comparison" in rows and rows["parity"]["method"] == "one_vs_rest"
        assert rows["calibration"]["method"] == "top_label_ece"
        assert numbers_differ(shared(rows, ()), shared(reduced, ()), 1e-9) == []
        one = run_audit(build_predictions(frame, mapping.for_model(alone), source="upload.csv"), QUICK).data
        drop = ("mapping", "comparison", "fingerprint", "notes")
        assert numbers_differ(shared(one, drop), shared(rows, drop), 1e-12) == []


def test_another_models_class_columns_are_matched_by_the_class_they_name():
    """Model B's columns come as b_bird, b_cat, b_dog; its probabilities are put in the classes' order."""
    frame = two_models()
    pred = build_predictions(frame, BY_PROBABILITIES[1])
    b = pred.at(View(model="B"))
    assert pred.classes == ("cat", "dog", "bird")
    np.testing.assert_array_equal(b.class_scores, frame[["b_cat", "b_dog", "b_bird"]].to_numpy())
    np.testing.assert_array_equal(np.asarray(pred.classes)[b.predicted], frame["pred_b"].to_numpy())


def test_a_model_of_classes_that_cannot_be_read_is_left_out_with_a_note():
    frame = two_models().assign(b_cat=lambda f: f["b_cat"] * 3)              # B's probabilities leave [0, 1]
    pred = build_predictions(frame, BY_PROBABILITIES[1])
    assert pred.model_names == ["A"] and not pred.several_models
    assert any(n.startswith("Model 'B' left out: Class probability column 'b_cat' has values outside [0, 1]")
               for n in pred.notes)


def test_a_binned_table_keeps_each_models_confusion_counts(tmp_path, monkeypatch):
    """Above the exact limit every model's probabilities are cut into cells (ECE edges kept): the table groups by
    every model's predicted class, so each model's confusion matrix per group, and the comparison's error rates,
    equal the rows'."""
    from fairviz.data import engine as engine_module
    from fairviz.data.engine import reduce_path
    monkeypatch.setattr(engine_module, "EXACT_ROWS", 100)
    frame = two_models(rows=3_000, seed=4)
    frame.to_parquet(tmp_path / "data.parquet")
    mapping = BY_PROBABILITIES[1]
    stats = reduce_path(tmp_path / "data.parquet", mapping, Engine(task_cells={"multiclass": 10}))
    pred, rows = stats.predictions(), build_predictions(frame, mapping)
    assert stats.resolution == 1 / 10 and pred.weighted and pred.y.size < len(frame)
    for model in ("A", "B"):
        table, exact = pred.at(View(model=model)), rows.at(View(model=model))
        for k in range(2):
            in_table, in_rows = table.groups("grp").codes == k, exact.groups("grp").codes == k
            counts = np.zeros((3, 3))
            np.add.at(counts, (table.y[in_table], table.predicted[in_table]), table.weight[in_table])
            expected = np.zeros((3, 3))
            np.add.at(expected, (exact.y[in_rows], exact.predicted[in_rows]), 1)
            np.testing.assert_array_equal(counts, expected)
    binned, exact = (error_rates(run_audit(p, QUICK).data) for p in (pred, rows))
    assert binned.keys() == exact.keys() == {"all", "a", "b"}
    for group, rates in exact.items():
        assert binned[group] == pytest.approx(rates, rel=1e-12)


@pytest.mark.slow           # starting a local Spark session takes a minute or more on a loaded 2-core machine
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java (make test installs Debian's "
                                                          "openjdk-17-jre-headless when run as root)")
def test_spark_local_audits_two_multiclass_models_as_the_rows(tmp_path, capsys):
    pytest.importorskip("pyspark")
    paths = written(tmp_path, two_models(), "classes")
    options, _ = BY_PROBABILITIES
    rows = audit(capsys, paths["csv"], *options)
    spark = audit(capsys, paths["folder"], *options, "--engine", "spark", "--spark-master", "local[2]")
    assert_as_rows(rows, spark, "spark")
