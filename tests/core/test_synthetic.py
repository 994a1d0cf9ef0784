"""fairviz.core.synthetic: group sizes, base rates, within-group calibration, and controlled miscalibration."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairviz.core.synthetic import SAMPLE_KWARGS, expected_rate, intercept_for_rate, make_predictions, write_sample

ASSETS = Path(__file__).resolve().parents[2] / "assets"


def auroc(y: np.ndarray, score: np.ndarray) -> float:
    """Mann–Whitney AUROC (average ranks for ties)."""
    ranks = pd.Series(score).rank().to_numpy()
    pos = y == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def calibration_fit(y: np.ndarray, score: np.ndarray) -> tuple[float, float]:
    """(intercept, slope) of the logistic fit logit P(Y=1) = a + b * logit(score), by Newton's method."""
    X = np.column_stack([np.ones_like(score), np.log(score / (1 - score))])
    beta = np.zeros(2)
    for _ in range(50):
        p = 1 / (1 + np.exp(-X @ beta))
        step = np.linalg.solve(X.T @ (X * (p * (1 - p))[:, None]), X.T @ (y - p))
        beta += step
        if np.abs(step).max() < 1e-10:
            break
    return float(beta[0]), float(beta[1])


def test_columns_types_and_ranges():
    frame = make_predictions(n=1000)
    assert list(frame.columns) == ["id", "y", "score", "group", "x1", "x2", "true_prob"]
    assert frame["id"].tolist() == list(range(1, 1001))
    assert set(frame["y"].unique()) <= {0, 1}
    assert frame["score"].between(1e-6, 1 - 1e-6).all()
    assert frame["true_prob"].between(0, 1).all()
    assert sorted(frame["group"].unique()) == ["A", "B"]


def test_group_sizes_are_exact_shares():
    frame = make_predictions(n=1000, groups={"A": 0.5, "B": 0.3, "C": 0.2})
    assert frame["group"].value_counts().to_dict() == {"A": 500, "B": 300, "C": 200}
    # shares are normalised and rounded by largest remainder so the sizes add up to n
    frame = make_predictions(n=10, groups={"x": 1, "y": 1, "z": 1})
    assert frame["group"].value_counts().sort_index().tolist() == [4, 3, 3]


@pytest.mark.parametrize("rate,separation", [(0.05, 2.0), (0.3, 2.0), (0.5, 0.5), (0.8, 3.0), (0.3, 0.0)])
def test_intercept_solves_the_population_base_rate(rate, separation):
    assert expected_rate(intercept_for_rate(rate, separation), separation) == pytest.approx(rate, abs=1e-10)


def test_base_rates_per_group():
    rates = {"A": 0.1, "B": 0.3, "C": 0.6}
    frame = make_predictions(n=60_000, groups={"A": 1, "B": 1, "C": 1}, base_rates=rates, seed=3)
    for group, rate in rates.items():
        part = frame[frame["group"] == group]
        se = np.sqrt(rate * (1 - rate) / len(part))
        assert abs(part["y"].mean() - rate) < 4 * se            # at most ~0.013 here
        assert abs(part["true_prob"].mean() - rate) < 0.01


def test_default_base_rate_is_0_3():
    frame = make_predictions(n=50_000, seed=1)
    assert frame.groupby("group")["y"].mean().sub(0.3).abs().max() < 0.01


def test_calibrated_within_each_group_when_no_shift_and_temperature_1():
    frame = make_predictions(n=50_000, groups={"A": 0.6, "B": 0.4}, base_rates={"A": 0.2, "B": 0.5}, seed=7)
    assert np.array_equal(frame["score"], frame["true_prob"].clip(1e-6, 1 - 1e-6))
    for _, part in frame.groupby("group"):
        assert abs(part["score"].mean() - part["y"].mean()) < 0.02
        intercept, slope = calibration_fit(part["y"].to_numpy(), part["score"].to_numpy())
        assert abs(intercept) < 0.1 and abs(slope - 1) < 0.1


def test_shift_moves_mean_score_in_its_direction():
    frame = make_predictions(n=50_000, groups={"A": 1, "B": 1, "C": 1}, shift={"B": 0.5, "C": -0.5}, seed=2)
    gap = frame.groupby("group").apply(lambda g: g["score"].mean() - g["y"].mean(), include_groups=False)
    assert abs(gap["A"]) < 0.02                 # untouched group stays calibrated
    assert gap["B"] > 0.05                      # positive shift: risk over-predicted
    assert gap["C"] < -0.05                     # negative shift: risk under-predicted
    part = frame[frame["group"] == "B"]
    intercept, slope = calibration_fit(part["y"].to_numpy(), part["score"].to_numpy())
    assert intercept == pytest.approx(-0.5, abs=0.1) and slope == pytest.approx(1.0, abs=0.1)


def test_temperature_sets_the_calibration_slope():
    frame = make_predictions(n=60_000, groups={"A": 1, "B": 1, "C": 1}, temperature={"B": 0.6, "C": 1.6}, seed=4)
    slopes = {g: calibration_fit(p["y"].to_numpy(), p["score"].to_numpy())[1] for g, p in frame.groupby("group")}
    assert slopes["A"] == pytest.approx(1.0, abs=0.1)
    assert slopes["B"] == pytest.approx(0.6, abs=0.08)      # over-confident: slope < 1
    assert slopes["C"] == pytest.approx(1.6, abs=0.15)      # under-confident: slope > 1
    over, under = frame[frame["group"] == "B"], frame[frame["group"] == "C"]
    assert over["score"].std() > frame.loc[frame["group"] == "A", "score"].std() > under["score"].std()
    top = over[over["score"] > 0.9]
    assert top["y"].mean() < top["score"].mean() - 0.05    # over-confident highs happen less often than claimed
    # a single float applies to every group
    flat = make_predictions(n=2000, temperature=2.0)
    assert np.allclose(flat["score"], 1 / (1 + np.exp(-np.log(flat["true_prob"] / (1 - flat["true_prob"])) / 2)))


def test_separation_controls_auroc():
    values = [auroc(f["y"].to_numpy(), f["score"].to_numpy())
              for f in (make_predictions(n=20_000, separation=s, seed=5) for s in (0.0, 1.0, 2.0, 3.0))]
    assert abs(values[0] - 0.5) < 0.02
    assert values == sorted(values) and values[2] == pytest.approx(0.87, abs=0.02)


def test_features_correlate_with_the_true_logit():
    frame = make_predictions(n=20_000, groups={"A": 1})
    logit = np.log(frame["true_prob"] / (1 - frame["true_prob"]))
    assert np.corrcoef(frame["x1"], logit)[0, 1] == pytest.approx(0.8, abs=0.02)
    assert np.corrcoef(frame["x2"], logit)[0, 1] == pytest.approx(-0.5, abs=0.02)


def test_deterministic_for_a_seed():
    kwargs = dict(n=3000, groups={"A": 0.7, "B": 0.3}, base_rates={"B": 0.4}, shift={"B": 0.3}, temperature=1.2)
    pd.testing.assert_frame_equal(make_predictions(**kwargs, seed=11), make_predictions(**kwargs, seed=11))
    assert not make_predictions(**kwargs, seed=11).equals(make_predictions(**kwargs, seed=12))


@pytest.mark.parametrize("kwargs", [
    {"base_rates": {"Z": 0.2}},                 # unknown group
    {"shift": {"Z": 1.0}},
    {"temperature": {"Z": 1.0}},
    {"base_rates": {"A": 0.0}},                 # base rate must be inside (0, 1)
    {"base_rates": {"A": 1.0}},
    {"temperature": 0.0},
    {"temperature": {"A": -1.0}},
    {"groups": {"A": 0.5, "B": -0.5}},
    {"groups": {}},
    {"n": 0},
    {"separation": -1.0},
])
def test_bad_arguments_raise(kwargs):
    with pytest.raises(ValueError):
        make_predictions(**kwargs)


def test_write_sample_reproduces_the_shipped_asset(tmp_path):
    frame = write_sample(tmp_path / "synthetic.csv")
    assert len(frame) == SAMPLE_KWARGS["n"] == 6000
    assert frame["group"].value_counts().to_dict() == {"A": 3000, "B": 1800, "C": 1200}
    assert (tmp_path / "synthetic.csv").read_bytes() == (ASSETS / "synthetic.csv").read_bytes()


def test_shipped_synthetic_sample_has_the_documented_miscalibration():
    frame = pd.read_csv(ASSETS / "synthetic.csv")
    fits = {g: calibration_fit(p["y"].to_numpy(), p["score"].to_numpy()) for g, p in frame.groupby("group")}
    rates = frame.groupby("group")["y"].mean()
    assert rates["A"] == pytest.approx(0.3, abs=0.03) and rates["B"] == pytest.approx(0.3, abs=0.035)
    assert rates["C"] == pytest.approx(0.45, abs=0.045)
    assert abs(fits["A"][0]) < 0.2 and fits["A"][1] == pytest.approx(1.0, abs=0.15)      # calibrated
    assert fits["B"][0] < -0.2                                                             # shifted +0.4
    assert fits["C"][1] > 1.3                                                              # T = 1.6
