"""`fairviz conditions run`: the JSON's keys and values, the CSV, uploads, and one-line errors with exit 2."""
import json

import numpy as np
import pandas as pd
import pytest

from fairviz.cli.main import main

TINY = ["--alphas", "0,2", "--methods", "vanilla,rw", "--seeds", "1", "--epochs", "3", "--hidden", "16", "--quiet", "--m", "2000"]


def _run(capsys, *argv):
    code = main(["conditions", "run", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_json_keys_values_and_csv(tmp_path, capsys):
    code, out, _ = _run(capsys, "--data", "moji-like", "--condition", "cb", *TINY, "--json", "-",
                        "--csv", str(tmp_path / "runs.csv"))
    assert code == 0
    data = json.loads(out)
    assert {"runs", "selected", "train_cells"} <= set(data)
    assert len(data["runs"]) == 2 * 2 * 1 * 2                       # α × methods × seeds × {dev, test}
    for r in data["runs"]:
        for key in ("performance", "fairness", "gap_tpr", "dto"):
            assert 0 <= r[key] <= 1
        assert r["fairness"] == pytest.approx(1 - r["gap_tpr"])
        assert r["dto"] == pytest.approx(np.hypot(1 - r["performance"], 1 - r["fairness"]))
    assert {(s["alpha"], s["method"]) for s in data["selected"]} == {(0, "vanilla"), (0, "rw"), (2, "vanilla"),
                                                                      (2, "rw")}
    cells = {c["alpha"]: c for c in data["train_cells"]}
    assert cells[0]["counts"] == [[800, 200], [200, 800]]           # 40/10/10/40 % of m = 2,000
    assert cells[2]["counts"] == [[200, 800], [800, 200]]           # CB at α = 2 mirrors the split
    frame = pd.read_csv(tmp_path / "runs.csv")
    assert len(frame) == len(data["runs"])
    assert frame["dto"].tolist() == pytest.approx([r["dto"] for r in data["runs"]])


def test_jb_on_bios_like_flags_clipped_cells(capsys):
    code, out, _ = _run(capsys, "--data", "bios-like", "--condition", "jb", "--alphas", "2", "--methods", "vanilla",
                        "--seeds", "1", "--epochs", "1", "--hidden", "8", "--quiet", "--json", "-")
    assert code == 0
    (cells,) = json.loads(out)["train_cells"]
    professor = cells["classes"].index("professor")
    assert cells["clipped"][professor] == [True, True] and cells["counts"][professor] == [0, 0]
    assert sum(map(sum, cells["clipped"])) == 7


def test_upload_with_features_and_split(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 900
    y = rng.integers(0, 2, n)
    g = np.where(rng.random(n) < 0.7, y, 1 - y)
    frame = pd.DataFrame({"x1": y + rng.normal(0, 1, n), "x2": g + rng.normal(0, 0.5, n),
                          "colour": rng.choice(["red", "blue"], n), "label": np.where(y, "yes", "no"),
                          "sex": np.where(g, "F", "M"), "part": rng.choice(["train", "dev", "test"], n, p=[.6, .2, .2])})
    path = tmp_path / "mine.csv"
    frame.to_csv(path, index=False)
    code, out, _ = _run(capsys, "--data", str(path), "--label", "label", "--group", "sex", "--features",
                        "x1,x2,colour", "--split", "part", "--condition", "grid", "--grid", "0.5", *TINY[2:-2],
                        "--json", "-")
    assert code == 0
    data = json.loads(out)
    assert data["data"]["classes"] == ["no", "yes"] and data["data"]["groups"] == ["F", "M"]
    assert data["data"]["features"] == 4                               # two numeric + two one-hot columns
    assert {(s["p_y"], s["s"]) for s in data["selected"]} == {(0.5, 0.5)}


@pytest.mark.parametrize("argv, message", [
    (["--data", "nowhere.csv", "--condition", "cb"], "neither a built-in set"),
    (["--data", "moji-like", "--condition", "cb", "--alphas", "0,3"], "[0, 2]"),
    (["--data", "moji-like", "--condition", "cb", "--alphas", "zero"], "comma-separated numbers"),
    (["--data", "moji-like", "--condition", "cb", "--methods", "magic"], "Unknown method 'magic'"),
    (["--data", "bios-like", "--condition", "grid"], "two classes and two groups"),
    (["--data", "moji-like", "--condition", "cb", "--seeds", "0"], "seeds must be between"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv, message):
    code, out, err = _run(capsys, *argv, "--quiet")
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("fairviz: error:") and message in lines[0]


@pytest.mark.parametrize("frame, message", [
    (pd.DataFrame({"x": [1.0, 2.0], "label": [1, 1], "sex": ["F", "M"]}), "single value"),
    (pd.DataFrame({"x": [1.0, 2.0], "label": [0, 1], "sex": ["F", "F"]}), "single value"),
    (pd.DataFrame({"x": [1.0, None], "label": [0, 1], "sex": ["F", "M"]}), "missing"),
    (pd.DataFrame({"x": [1.0, 2.0], "lab": [0, 1], "sex": ["F", "M"]}), "not found"),
])
def test_bad_files_exit_2(tmp_path, capsys, frame, message):
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    code, _, err = _run(capsys, "--data", str(path), "--label", "label", "--group", "sex", "--condition", "cb",
                        "--quiet")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_leakage_is_reported_for_test_runs(capsys):
    code, out, _ = _run(capsys, "--data", "moji-like", "--condition", "cb", *TINY, "--leakage", "--json", "-")
    assert code == 0
    data = json.loads(out)
    test_runs = [r for r in data["runs"] if r["split"] == "test"]
    assert all(0.4 <= r["leakage"] <= 1 for r in test_runs)
    assert all(r["leakage"] is None for r in data["runs"] if r["split"] == "dev")
    # the group is the second feature: an MLP trained on stereotyped data keeps it in its hidden layer
    vanilla0 = next(s for s in data["selected"] if s["method"] == "vanilla" and s["alpha"] == 0)
    assert vanilla0["leakage_mean"] > 0.8
