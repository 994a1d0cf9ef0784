"""One View (issue 35, step 3): model × attribute (a column, an intersection, a slice) × class × τ × benefit ×
reference, and ``Predictions.at(view)`` the one way to its table. Every axis composes: two models on multiclass data
read one class one vs rest (each model kept), row by row and weighted alike; two regression models through the
engine (DuckDB) audit as the rows, on an intersection and on a slice; the same View gives the same object; a View
survives its address; a name the data lack is a DataError naming it."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairviz.calibration import CalibrationParams
from fairviz.data import ColumnMapping, DataError, ScoreColumn, build_predictions
from fairviz.data.engine import Engine
from fairviz.data.groups import group_counts
from fairviz.data.model import IN_SLICE, REST, merged_cells
from fairviz.data.view import View
from fairviz.report.plan import AuditParams, audit as run_audit
from fairviz.residuals import RDFParams
from tests.data.compare import shared
from tests.data.test_engine import numbers_differ

CLASSES = ("cat", "dog", "bird")
A_COLUMNS, B_COLUMNS = ("a_cat", "a_dog", "a_bird"), ("b_cat", "b_dog", "b_bird")
MULTICLASS = ColumnMapping("label", "", ("group", "region"), task="multiclass", class_scores=A_COLUMNS,
                           classes=CLASSES, model_name="A")
MODEL_B = ColumnMapping("label", "", ("group", "region"), task="multiclass", class_scores=B_COLUMNS,
                        classes=CLASSES, model_name="B")
REGRESSION = ColumnMapping("price", "model_a", ("grp", "region"), task="regression",
                           more_scores=(ScoreColumn("model_b"),))
QUICK = AuditParams(rdf=RDFParams(resamples=0, knee_resamples=0), calibration=CalibrationParams(resamples=0))
META = ("source", "mapping", "notes", "fingerprint", "engine")     # what names the data, not what they say


def probabilities(rng, rows: int, kinds: int = 6) -> np.ndarray:
    """Class probabilities drawn from a few distinct rows, so a weighted table merges many rows into one entry."""
    distinct = rng.dirichlet([2, 2, 2], kinds).round(3)
    distinct[:, 2] = 1 - distinct[:, 0] - distinct[:, 1]
    return distinct[rng.integers(0, kinds, rows)]


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(35)
    rows = 1_200
    a, b = probabilities(rng, rows), probabilities(rng, rows)
    return pd.DataFrame({"label": np.array(CLASSES)[rng.integers(0, 3, rows)],
                         **dict(zip(A_COLUMNS, a.T)), **dict(zip(B_COLUMNS, b.T)),
                         "group": rng.choice(["x", "y", "z"], rows, p=[.5, .3, .2]),
                         "region": rng.choice(["n", "s"], rows)})


def two_models(frame: pd.DataFrame, weights: np.ndarray | None = None):
    """Model A from the mapping, model B added with its class probabilities (aligned with A's entries)."""
    pred = build_predictions(frame, MULTICLASS, weights=weights)
    b = pred.frame[list(B_COLUMNS)].to_numpy(float)
    return pred.with_added_model("B", b.max(axis=1), "Model B: the b_ columns.", predicted=b.argmax(axis=1),
                                 class_scores=b)


@pytest.fixture(scope="module")
def rows(frame):
    return two_models(frame)


@pytest.fixture(scope="module")
def weighted(frame):
    """The same rows as a weighted table: one entry per distinct row, its weight the rows it stands for."""
    table = frame.groupby(list(frame.columns), sort=False).size().reset_index(name="w")
    assert len(table) < len(frame) / 2                                  # entries stand for several rows
    return two_models(table.drop(columns="w"), table["w"].to_numpy())


# ------------------------------------------------------------------------------------------ model × class

def test_one_vs_rest_keeps_every_model(rows, frame):
    dog = rows.at(View(class_name="dog")).joint()         # the class's table of every model (the first's: at)
    assert rows.at(View(class_name="dog")) is rows.at(View(model="A", class_name="dog"))
    assert dog.model_names == ["A", "B"] and dog.classes == () and dog.several_models
    np.testing.assert_array_equal(dog.y, (frame["label"] == "dog").to_numpy())
    for model, column in (("A", "a_dog"), ("B", "b_dog")):
        table = rows.at(View(model=model, class_name="dog"))
        np.testing.assert_array_equal(table.score, frame[column].to_numpy())
        assert table.active_model == model and table.joint() is dog          # a Compare reads both models
        assert table is dog.at(View(model=model))                             # one table, whichever way
    assert rows.at(View(model="A", class_name="dog")).fingerprint != rows.at(View(model="B",
                                                                                   class_name="dog")).fingerprint


def test_a_model_of_multiclass_data_is_its_own_classes(rows, frame):
    b = rows.at(View(model="B"))
    np.testing.assert_array_equal(b.class_scores, frame[list(B_COLUMNS)].to_numpy())
    np.testing.assert_array_equal(b.predicted, frame[list(B_COLUMNS)].to_numpy().argmax(axis=1))
    np.testing.assert_array_equal(b.score, frame[list(B_COLUMNS)].to_numpy().max(axis=1))
    assert rows.at(View()) is rows.at(View(model="A")) and rows.at(View(model="A")).classes == CLASSES


def test_model_b_audits_as_its_own_one_model_audit(rows, frame):
    """The second model of a two-model multiclass file audits exactly as the same file with only that model."""
    params = AuditParams(attribute="group", rdf=QUICK.rdf, calibration=QUICK.calibration)
    joint = shared(run_audit(rows.at(View(model="B")), params).data, META)
    alone = shared(run_audit(build_predictions(frame, MODEL_B), params).data, META)
    assert numbers_differ(alone, joint, 1e-12) == []


@pytest.mark.parametrize("class_name", [None, "dog", "bird"])
@pytest.mark.parametrize("model", ["A", "B"])
def test_rows_and_weighted_tables_agree(rows, weighted, model, class_name):
    view = View(model=model, class_name=class_name, attribute="group × region")
    exact, table = rows.at(view), weighted.at(view)
    assert table.n == exact.n and table.weighted
    if class_name is None:           # each group's confusion matrix and its sums of class probabilities
        for pred in (exact, table):
            assert pred.classes == CLASSES
        assert _class_sums(exact, view) == pytest.approx(_class_sums(table, view), rel=1e-12)
    else:                            # each group's counts at τ and sum of scores: everything a binary audit reads
        for tau in (0.2, 0.35, 0.5):
            assert group_counts(exact, exact.groups(view.attribute), tau) == \
                group_counts(table, table.groups(view.attribute), tau)
        assert _score_sums(exact, view) == pytest.approx(_score_sums(table, view), rel=1e-12)
    params = AuditParams(attribute=view.attribute, rdf=QUICK.rdf, calibration=QUICK.calibration)
    assert numbers_differ(shared(run_audit(exact, params).data, META), shared(run_audit(table, params).data, META),
                          1e-9) == []


def _score_sums(pred, view) -> list[float]:
    groups = pred.groups(view.attribute)
    w = np.ones(pred.y.size) if pred.weight is None else pred.weight
    return np.bincount(groups.codes, weights=w * pred.score, minlength=len(groups.names)).tolist()


def _class_sums(pred, view) -> list[float]:
    groups = pred.groups(view.attribute)
    w = np.ones(pred.y.size) if pred.weight is None else pred.weight
    cells = (groups.codes * 3 + pred.y) * 3 + pred.predicted
    counts = np.bincount(cells, weights=w, minlength=len(groups.names) * 9)
    sums = [np.bincount(groups.codes, weights=w * pred.class_scores[:, k], minlength=len(groups.names))
            for k in range(3)]
    return [*counts.tolist(), *np.concatenate(sums).tolist()]


# ------------------------------------------------------------------------------------------ regression, engine

def two_regression_models(rows: int = 3_000, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    price = np.round(rng.uniform(-150, 50, rows), 2)
    return pd.DataFrame({"grp": rng.choice(["a", "b"], rows), "region": rng.choice(["n", "s", "w"], rows),
                         "price": price, "model_a": price + rng.normal(0, 10, rows),
                         "model_b": price + rng.normal(0, 16, rows)})


@pytest.mark.parametrize("attribute", ["grp", "grp × region", "slice: grp=a ∧ region=n"])
def test_regression_models_through_the_engine_audit_as_the_rows(attribute):
    frame = two_regression_models()
    joint = Engine().reduce(frame.to_csv(index=False).encode(), REGRESSION, "upload.csv").predictions()
    joint_rows = build_predictions(frame, REGRESSION, source="upload.csv")
    assert joint.weighted and joint.model_names == joint_rows.model_names == ["model_a", "model_b"]
    params = AuditParams(attribute=attribute, rdf=QUICK.rdf, calibration=QUICK.calibration)
    for model in joint.model_names:
        view = View(model=model, attribute=attribute)
        reduced, exact = run_audit(view.table(joint), params).data, run_audit(view.table(joint_rows), params).data
        assert exact["parity"]["method"] == "error_prediction_parity"
        assert numbers_differ(shared(exact, ()), shared(reduced, ()), 1e-9) == []


def test_merged_cells_of_a_regression_keep_every_sum():
    """Cells of each model's own range, not of [0, 1]: a regression's table merges and keeps its sums."""
    joint = build_predictions(two_regression_models(), REGRESSION)
    merged = merged_cells(joint, 50)
    assert merged.y.size < joint.y.size and merged.weight.sum() == joint.y.size
    for model in joint.model_names:
        assert float(merged.scores[model] @ merged.weight) == pytest.approx(joint.scores[model].sum(), rel=1e-12)
    assert float(merged.y @ merged.weight) == pytest.approx(joint.y.sum(), rel=1e-12)


# ------------------------------------------------------------------------------------------ attributes

def test_intersections_and_slices_are_attributes(rows, weighted, frame):
    cross = rows.groups("group × region")
    assert len(cross.names) == 6 and cross.sizes.sum() == len(frame)
    inside = ((frame["group"] == "x") & (frame["region"] == "n")).to_numpy()
    for name in ("slice: group=x ∧ region=n", "group=x ∧ region=n"):     # the page's name and the search's
        for pred in (rows, weighted, rows.at(View(model="B", class_name="dog"))):
            groups = pred.groups(name)
            assert set(groups.names) == {IN_SLICE, REST} and groups.attribute == "slice: group=x ∧ region=n"
            assert groups.sizes[groups.names.index(IN_SLICE)] == inside.sum()
        np.testing.assert_array_equal(rows.groups(name).mask(IN_SLICE), inside)
    assert View.of(rows, attribute="group=x").attribute == "group=x"


# ------------------------------------------------------------------------------------------ caches and address

def test_the_same_view_gives_the_same_object(rows):
    view = View(model="B", class_name="dog", attribute="group")
    assert rows.at(view) is rows.at(View(model="B", class_name="dog")) is rows.at(view.replace(threshold=0.3))
    assert rows.at(View(model="B")).at(view) is rows.at(view)            # from any table of the same data
    assert rows.groups("group × region") is rows.groups("group × region")
    assert rows.groups("slice: group=x") is rows.groups("slice: group=x")
    assert view.key() == View(model="B", class_name="dog", attribute="group", threshold=0.5).key()
    assert hash(view.key()) == hash(View(model="B", class_name="dog", attribute="group").key())


def test_a_binary_one_model_table_is_itself():
    frame = pd.DataFrame({"y": [0, 1] * 60, "p": np.linspace(0.01, 0.99, 120), "g": ["a", "b", "c"] * 40})
    pred = build_predictions(frame, ColumnMapping("y", "p", ("g",)))
    assert pred.at(View()) is pred and pred.at(View(model="p")) is pred


@pytest.mark.parametrize("view", [
    View(),
    View(model="B", attribute="group × region", class_name="dog", threshold=0.35, benefit="negative",
         reference="x × n"),
    View(attribute="slice: group=x ∧ region=n", threshold=0.07),
])
def test_a_view_survives_its_address(view):
    params = view.to_params()
    assert all(isinstance(v, str) for v in params.values())
    assert View.from_params(params) == view and View.from_params(params).key() == view.key()
    assert View.from_params({**params, "sample": "compas", "group": "x"}) == view      # others are not the view's


def test_the_address_names_what_the_app_writes():
    assert View(model="B", attribute="sex", class_name="dog", threshold=0.5, reference="F").to_params() == \
        {"attribute": "sex", "tau": "0.50", "benefit": "positive", "reference": "F", "model": "B", "class": "dog"}


# ------------------------------------------------------------------------------------------ bad input

@pytest.mark.parametrize("chosen, named", [
    ({"model": "C"}, "C"),
    ({"class_name": "fish"}, "fish"),
    ({"model": "B", "class_name": "fish"}, "fish"),
    ({"attribute": "colour"}, "colour"),
    ({"attribute": "group × colour"}, "group × colour"),
    ({"attribute": "slice: group=w"}, "'w' is not a group of 'group'"),
    ({"attribute": "group", "reference": "q"}, "q"),
])
def test_a_name_the_data_lack_is_a_data_error_naming_it(rows, chosen, named):
    with pytest.raises(DataError, match=named):
        View.of(rows, **chosen)


def test_a_class_of_data_without_classes_is_a_data_error():
    frame = two_regression_models(200)
    with pytest.raises(DataError, match="no class 'dog'"):
        build_predictions(frame, REGRESSION).at(View(class_name="dog"))


@pytest.mark.parametrize("chosen", [{"threshold": 1.5}, {"threshold": "high"}, {"benefit": "both"}])
def test_an_impossible_view_is_a_data_error(chosen):
    with pytest.raises(DataError):
        View(**chosen)
    with pytest.raises(DataError, match="tau"):
        View.from_params({"tau": "high"})
