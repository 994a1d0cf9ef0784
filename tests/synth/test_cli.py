"""`fairviz synth train`: pure JSON on stdout with the issue's keys, the synthetic CSV, and one-line errors (exit 2)."""
import json

import pandas as pd
import pytest

pytest.importorskip("torch")

from fairviz.cli.main import main  # noqa: E402
from tests.synth.test_run import skewed_table  # noqa: E402


@pytest.fixture
def table_path(tmp_path):
    path = tmp_path / "skewed.csv"
    skewed_table(300).to_csv(path, index=False)
    return path


@pytest.mark.slow
def test_json_on_stdout_and_csv(table_path, tmp_path, capsys):
    out = tmp_path / "synthetic.csv"
    code = main(["synth", "train", str(table_path), "--label", "y", "--group", "g", "--epochs", "2", "--trials", "1",
                 "--rows", "101", "--group-target", "a=0.5,b=0.5", "--label-target", "0=0.4,1=0.6",
                 "--out", str(out), "--json", "-", "--quiet"])
    assert code == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)                                     # stdout is pure JSON
    assert "Conditional HydraGAN on skewed.csv" in captured.err
    assert {"distribution", "fairness", "realism", "privacy"} <= set(data)
    assert set(data["distribution"]) == {"label", "group"}
    for target in data["distribution"].values():
        for key in ("ks", "kl", "js"):
            assert set(target[key]) == {"real", "synthetic", "improvement"}
    assert data["distribution"]["label"]["target"] == pytest.approx([0.4, 0.6])
    for group in data["fairness"].values():
        for key in ("ofi", "dppl", "di", "dca"):
            assert {"real", "synthetic", "improves"} <= set(group[key])
    frame = pd.read_csv(out)
    assert len(frame) == 101 and frame["g"].value_counts().to_dict() == {"a": 51, "b": 50}
    assert list(frame.columns) == ["g", "x1", "x2", "age", "y"]


@pytest.mark.parametrize("change, message", [
    ({"--group-target": "c=1"}, "not one of: a, b"),
    ({"--label-target": "0=zero"}, "not a number"),
    ({"--epochs": "0"}, "epochs must be between"),
    ({"--label": "age"}, "exactly two values"),
    ({"--label": "nope"}, "No label column 'nope'"),
    ({"--group": ["x2", "age", "g"]}, "At most two group columns"),
    ({"--positive": "7"}, "does not occur"),
])
def test_bad_input_exits_2_with_one_line(table_path, tmp_path, capsys, change, message):
    options = {"--label": "y", "--group": ["g"], "--out": str(tmp_path / "o.csv"), **change}
    args = ["synth", "train", str(table_path), "--quiet"]
    for key, value in options.items():
        for v in (value if isinstance(value, list) else [value]):
            args += [key, v]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err


def test_missing_file_and_missing_label_for_a_path(tmp_path, capsys):
    assert main(["synth", "train", str(tmp_path / "none.csv"), "--label", "y", "--group", "g",
                 "--out", str(tmp_path / "o.csv")]) == 2
    assert "File not found" in capsys.readouterr().err
    path = tmp_path / "t.csv"
    skewed_table(100).to_csv(path, index=False)
    assert main(["synth", "train", str(path), "--out", str(tmp_path / "o.csv")]) == 2
    assert "needs --label and --group" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["synth", "train", "adult"])                                    # --out is required
    assert stop.value.code == 2
