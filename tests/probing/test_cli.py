"""``fairviz probe`` and ``fairviz augment``: the JSON shapes of the issue, shipped results, one-line errors."""
from __future__ import annotations

import json

import pytest

from fairviz.cli.main import main
from fairviz.probing.shipped import load_shipped

SMALL = ["--data", "neutral-biased", "--generate", "100", "--epochs", "2", "--model", "tiny"]


@pytest.mark.parametrize("argv, words", [
    (["probe", "--data", "no-such-set"], "neither a built-in data set"),
    (["probe", "--eps", "2"], "--eps must be between 0 and 0.5"),
    (["probe", "--n", "2"], "--n and --n-strategy must be at least 5"),
    (["augment", "--k", "ten"], "--k must be comma-separated whole numbers"),
    (["augment", "--k", "0"], "--k needs at least one value"),
    (["augment", "--strategies", "rdf,magic"], "Unknown strategy magic"),
    (["augment", "--seeds", "0"], "--seeds must be at least 1"),
    (["probe", "--generate", "3"], "--generate must be at least 10"),
    (["probe", "--mode", "diagonal"], "invalid choice"),
])
def test_bad_input_exits_2_with_one_line(argv, words, capsys):
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and "Traceback" not in err


def _exit_code(argv) -> int:
    """main's return value, or the status of argparse's SystemExit (bad choices exit before main returns)."""
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def test_bad_csv_columns_exit_2(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("sentence,y,g\nhe is here,1,m\nshe is here,0,f\n")
    assert main(["probe", "--data", str(path), "--text-column", "text"]) == 2
    err = capsys.readouterr().err.strip()
    assert "The text column 'text' is not in the file" in err and "\n" not in err


@pytest.mark.parametrize("kind", ["probe", "augment"])
def test_shipped_results_print_pure_json(kind, capsys):
    assert main([kind, "--shipped", "--json", "-"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == load_shipped(kind)


def test_shipped_json_has_the_issue_shapes():
    probe = load_shipped("probe")
    for name in ("demographic_swap", "identity_removal"):
        assert {"knee_mean", "nonknee_mean", "ratio", "ci", "p_value"} <= set(probe["probes"][name])
    assert set(probe["strategies"]) == {"knees", "uncertainty", "confidence", "random"}
    augment = load_shipped("augment")
    pairs = {(r["strategy"], r["k"]) for r in augment["records"]}
    assert pairs == {(s, k) for s in ("random", "uncertainty", "rdf") for k in (100, 500)}
    record = augment["records"][0]
    assert set(record["delta"]) >= {"f_pattern", "f_v", "f_dist"}
    assert set(record["delta"]["f_pattern"]) >= {"mean", "std"} and len(record["delta"]["f_pattern"]["values"]) == 3
    assert {"efficiency", "t_test_vs_random"} <= set(record)


@pytest.mark.slow
def test_probe_and_augment_compute_with_the_tiny_model(tmp_path, capsys):
    out = tmp_path / "probe.json"
    assert main(["probe", *SMALL, "--n", "10", "--n-strategy", "10", "--resamples", "100", "--json", str(out)]) == 0
    probe = json.loads(out.read_text())
    swap = probe["probes"]["demographic_swap"]
    assert swap["n_knee"] == 10 and swap["n_nonknee"] == 10
    assert probe["meta"]["model"]["kind"] == "tiny" and probe["meta"]["data"]["key"] == "neutral-biased"
    assert "Demographic swap" in capsys.readouterr().out          # the summary, on stdout when JSON goes to a file
    assert main(["augment", *SMALL, "--k", "10", "--seeds", "2", "--strategies", "random,rdf", "--no-control",
                 "--json", "-"]) == 0
    augment = json.loads(capsys.readouterr().out)
    assert [(r["strategy"], r["k"]) for r in augment["records"]] == [("random", 10), ("rdf", 10)]
    rdf = augment["records"][1]
    assert len(rdf["delta"]["f_pattern"]["values"]) == 2 and rdf["t_test_vs_random"] is not None
    assert augment["control"] is None
