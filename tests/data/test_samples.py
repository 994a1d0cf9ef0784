"""The bundled sample files in assets/: shape, catalogue, and real values (read from the shipped CSVs only,
so the data packages that scripts/make_samples.py reads need not be installed)."""
import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairviz.data import ColumnMapping, ScoreColumn, load_predictions
from fairviz.data.samples import load_sample, samples
from fairviz.data.view import View

ASSETS = Path(__file__).resolve().parents[2] / "assets"

EXPECTED = {   # file → (rows, columns)
    "compas.csv": (7214, ["id", "two_year_recid", "score", "decile_score", "race", "sex", "age_cat", "age",
                          "priors_count", "juv_fel_count", "c_charge_degree"]),
    "default.csv": (5000, ["id", "default", "score", "student", "balance", "income"]),
    "adult.csv": (16281, ["id", "income_gt_50k", "score", "sex", "race", "age", "education_num",
                          "hours_per_week", "score_lr"]),
    "synthetic.csv": (6000, ["id", "y", "score", "group", "x1", "x2", "true_prob"]),
}

# Spec 002 §1.7.2: all 7,214 rows; positive (beneficial) = Low = decile_score <= 4; actual positive = no recid.
#                     TP    FN    FP    TN     n
SPEC_COMPAS = {
    "African-American": (990, 805, 532, 1369, 3696),
    "Asian": (21, 2, 3, 6, 32),
    "Caucasian": (1139, 349, 461, 505, 2454),
    "Hispanic": (318, 87, 129, 103, 637),
    "Native American": (5, 3, 1, 9, 18),
    "Other": (208, 36, 90, 43, 377),
}
SPEC_COMPAS_ALL = (2681, 1282, 1216, 2035, 7214)


def auroc(y: np.ndarray, score: np.ndarray) -> float:
    ranks = pd.Series(score).rank().to_numpy()
    pos = y == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


@pytest.fixture(scope="module")
def frames() -> dict[str, pd.DataFrame]:
    return {name: pd.read_csv(ASSETS / name) for name in EXPECTED}


@pytest.fixture(scope="module")
def catalogue() -> list[dict]:
    return json.loads((ASSETS / "samples.json").read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------------------------- files

@pytest.mark.parametrize("name", list(EXPECTED))
def test_rows_columns_and_size(name, frames):
    rows, columns = EXPECTED[name]
    frame = frames[name]
    assert frame.shape == (rows, len(columns))
    assert list(frame.columns) == columns
    assert frame["id"].is_unique
    assert not frame.isna().any().any()
    assert frame["score"].between(0, 1).all()
    assert (ASSETS / name).stat().st_size < 2 * 1024 * 1024


@pytest.mark.parametrize("name", list(EXPECTED))
def test_plain_text_format(name):
    raw = (ASSETS / name).read_bytes()
    assert b"\r" not in raw and raw.endswith(b"\n")
    assert not re.search(rb"\d\.\d{7,}", raw), "floats must be rounded to 6 decimals"
    assert not re.search(rb"\de[-+]\d", raw), "no scientific notation"


# ----------------------------------------------------------------------------------------------- catalogue

def binary_samples(catalogue: list[dict]) -> list[dict]:
    """The binary samples (no "task"); the regression and multiclass ones: tests/data/test_task_samples.py."""
    return [sample for sample in catalogue if "task" not in sample["mapping"]]


def test_catalogue_shape(catalogue):
    assert isinstance(catalogue, list) and catalogue[0]["key"] == "compas"
    keys = [s["key"] for s in catalogue]
    assert len(set(keys)) == len(keys) and {"compas", "adult", "default", "synthetic"} <= set(keys)
    assert [s["key"] for s in binary_samples(catalogue)] == ["compas", "adult", "default", "synthetic"]
    for sample in binary_samples(catalogue):
        required = {"key", "title", "file", "mapping", "threshold", "benefit", "description", "provenance"}
        assert required <= set(sample) <= required | {"words", "reference_groups"}
        assert sample["benefit"] in ("positive", "negative")
        models = {"model_name", "more_scores"} if sample["key"] == "adult" else set()   # the sample with two models
        assert set(sample["mapping"]) == {"label", "score", "groups", "positive_label", "text", "features",
                                          "row_id", "intersect"} | models
        assert 0 < sample["threshold"] < 1
        assert sample["title"] and sample["description"] and sample["provenance"]
        assert (ASSETS / sample["file"]).is_file()
    compas = catalogue[0]
    assert compas["title"] == "COMPAS recidivism (ProPublica)" and compas["file"] == "compas.csv"
    assert compas["threshold"] == 0.4
    assert compas["mapping"] == {"label": "two_year_recid", "score": "score", "groups": ["race", "sex"],
                                 "positive_label": 1, "text": None,
                                 "features": ["age", "priors_count", "juv_fel_count"], "row_id": "id",
                                 "intersect": False}


def test_every_sample_loads_through_fairviz_data(catalogue):
    for sample in binary_samples(catalogue):
        m = sample["mapping"]
        mapping = ColumnMapping(label=m["label"], score=m["score"], groups=tuple(m["groups"]),
                                positive_label=m["positive_label"], text=m["text"],
                                features=tuple(m["features"]), row_id=m["row_id"], intersect=m["intersect"])
        predictions = load_predictions(ASSETS / sample["file"], mapping)
        assert predictions.n == EXPECTED[sample["file"]][0]
        assert predictions.notes == ()          # nothing dropped
        assert predictions.attribute_names == m["groups"]


# ----------------------------------------------------------------------------------------------- COMPAS

def test_compas_score_is_the_decile_midpoint(frames):
    frame = frames["compas.csv"]
    assert np.allclose(frame["score"], (frame["decile_score"] - 0.5) / 10, atol=1e-12)
    assert sorted(frame["decile_score"].unique()) == list(range(1, 11))
    # ProPublica's Low (decile <= 4) is exactly score < 0.4; Medium/High (decile >= 5) is score >= 0.4
    assert ((frame["decile_score"] <= 4) == (frame["score"] < 0.4)).all()
    assert ((frame["decile_score"] <= 4) == ~(frame["score"] >= 0.4)).all()


def _compas_counts(frame: pd.DataFrame, low: pd.Series) -> dict[str, tuple[int, ...]]:
    no_recid = frame["two_year_recid"] == 0
    cells = pd.DataFrame({"TP": no_recid & low, "FN": no_recid & ~low, "FP": ~no_recid & low,
                          "TN": ~no_recid & ~low, "race": frame["race"]}).groupby("race").sum()
    return {race: (*map(int, row), int(row.sum())) for race, row in cells.iterrows()}


def test_compas_per_race_counts_match_spec_002(frames):
    frame = frames["compas.csv"]
    by_decile = _compas_counts(frame, frame["decile_score"] <= 4)
    by_score = _compas_counts(frame, frame["score"] < 0.4)
    assert by_decile == SPEC_COMPAS
    assert by_score == SPEC_COMPAS
    assert tuple(map(sum, zip(*by_decile.values()))) == SPEC_COMPAS_ALL


def test_compas_other_counts(frames):
    frame = frames["compas.csv"]
    assert int(frame["two_year_recid"].sum()) == 3251
    assert frame.groupby("sex")["two_year_recid"].agg(["size", "sum"]).to_dict() == {
        "size": {"Female": 1395, "Male": 5819}, "sum": {"Female": 498, "Male": 2753}}
    assert auroc(frame["two_year_recid"].to_numpy(), frame["score"].to_numpy()) == pytest.approx(0.7022, abs=5e-4)


# ----------------------------------------------------------------------------------------------- Default

def test_default_values(frames):
    frame = frames["default.csv"]
    assert frame["id"].between(1, 10000).all() and frame["id"].is_monotonic_increasing
    assert set(frame["student"]) == {"No", "Yes"} and set(frame["default"]) == {0, 1}
    stats = frame.groupby("student")["default"].agg(["size", "sum"]).to_dict()
    assert stats == {"size": {"No": 3525, "Yes": 1475}, "sum": {"No": 108, "Yes": 58}}
    # stratified half of ISLR's 333 defaults
    assert int(frame["default"].sum()) in (166, 167)
    assert auroc(frame["default"].to_numpy(), frame["score"].to_numpy()) == pytest.approx(0.9478, abs=5e-4)
    # a logistic regression with an intercept matches the base rate on average (here on held-out data)
    assert frame["score"].mean() == pytest.approx(frame["default"].mean(), abs=0.005)


# ----------------------------------------------------------------------------------------------- Adult

def test_adult_values(frames):
    frame = frames["adult.csv"]
    assert int(frame["income_gt_50k"].sum()) == 3846          # UCI's adult.test: 3,846 of 16,281 earn >50K
    assert frame.groupby("sex")["income_gt_50k"].agg(["size", "sum"]).to_dict() == {
        "size": {"Female": 5421, "Male": 10860}, "sum": {"Female": 590, "Male": 3256}}
    assert frame["race"].value_counts().to_dict() == {"White": 13946, "Black": 1561, "Asian-Pac-Islander": 480,
                                                      "Amer-Indian-Eskimo": 159, "Other": 135}
    assert auroc(frame["income_gt_50k"].to_numpy(), frame["score"].to_numpy()) == pytest.approx(0.9260, abs=5e-4)
    assert frame["score"].mean() == pytest.approx(frame["income_gt_50k"].mean(), abs=0.01)


# The gradient boosting's scores as they were before the logistic regression joined them (sha256 of the column's
# text, one value a line): adding the second model must not move the first model's numbers.
ADULT_GB_SCORE_SHA256 = "081570613509bb9e419d84d1f261a5ba38d185088efc88f5a5dfd3dc9518a40d"


def _readme_adult_aurocs() -> dict[str, float]:
    """The test AUROCs assets/README.md states for the Adult sample's two models."""
    readme = (ASSETS / "README.md").read_text(encoding="utf-8")
    match = re.search(r"Test AUROC \(on all 16,281 rows of `adult.test`\): gradient boosting (0\.\d{3}), logistic\s+"
                      r"regression (0\.\d{3})\.", readme)
    assert match, "assets/README.md no longer states the Adult models' test AUROCs"
    return {"score": float(match.group(1)), "score_lr": float(match.group(2))}


def test_adult_gradient_boosting_column_is_unchanged():
    scores = pd.read_csv(ASSETS / "adult.csv", dtype=str)["score"]
    assert hashlib.sha256("\n".join(scores).encode()).hexdigest() == ADULT_GB_SCORE_SHA256


def test_adult_logistic_regression_is_a_second_real_model(frames):
    frame = frames["adult.csv"]
    y, gb, lr = frame["income_gt_50k"].to_numpy(), frame["score"].to_numpy(), frame["score_lr"].to_numpy()
    assert ((lr >= 0) & (lr <= 1)).all() and not frame["score_lr"].isna().any()
    # a different model over the same people: other scores, ranked alike but not the same
    assert np.mean(lr == gb) < 0.01 and np.abs(lr - gb).mean() > 0.03
    assert 0.8 < np.corrcoef(lr, gb)[0, 1] < 0.98
    # the README's AUROCs are the measured ones; the linear model is the weaker of the two
    stated = _readme_adult_aurocs()
    measured = {"score": auroc(y, gb), "score_lr": auroc(y, lr)}
    assert measured["score_lr"] == pytest.approx(0.9050, abs=5e-4)
    for column in ("score", "score_lr"):
        assert measured[column] == pytest.approx(stated[column], abs=1e-3)
    assert measured["score_lr"] < measured["score"]
    # with an intercept the logistic regression matches the base rate on average (here on held-out data)
    assert lr.mean() == pytest.approx(y.mean(), abs=0.005)


def test_adult_sample_loads_with_two_named_models(frames, catalogue):
    adult = next(s for s in catalogue if s["key"] == "adult")
    assert adult["mapping"]["model_name"] == "gradient boosting"
    assert adult["mapping"]["more_scores"] == [{"column": "score_lr", "name": "logistic regression"}]
    assert samples()["adult"].mapping.models() == (ScoreColumn("score", name="gradient boosting"),
                                                   ScoreColumn("score_lr", name="logistic regression"))
    pred = load_sample("adult")
    assert pred.model_names == ["gradient boosting", "logistic regression"] and pred.several_models
    assert pred.n == 16281 and pred.notes == ()            # both models kept, no row dropped
    frame = frames["adult.csv"]
    assert np.array_equal(pred.score, frame["score"].to_numpy())        # the first model is the active one
    assert np.array_equal(pred.scores["gradient boosting"], frame["score"].to_numpy())
    assert np.array_equal(pred.scores["logistic regression"], frame["score_lr"].to_numpy())
    lr = pred.at(View(model="logistic regression"))
    assert lr.model == "logistic regression" and np.array_equal(lr.score, frame["score_lr"].to_numpy())
    # the other samples keep one model, named by its column
    assert load_sample("compas").model_names == ["score"]
