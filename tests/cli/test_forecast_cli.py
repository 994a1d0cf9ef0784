"""`fairviz forecast evaluate` and `fairviz ptn train`: JSON per group, and one-line errors with exit status 2."""
import json

import numpy as np
import pytest

from fairviz.cli.main import main
from fairviz import forecast as ev

from tests.conftest import ROOT
from tests.forecast.test_forecast_evaluate import _frame

SAMPLE = ROOT / "assets" / "forecast" / "lorenz_forecasts.csv"


def test_evaluate_writes_per_group_metrics(tmp_path, capsys):
    out = tmp_path / "ff.json"
    code = main(["forecast", "evaluate", str(SAMPLE), "--group", "regime", "--model", "PTN with static context",
                 "--compare", "PTN without static context", "--resamples", "200", "--json", str(out)])
    assert code == 0
    data = json.loads(out.read_text())
    assert set(data["groups"]) == {"typical", "rare"}
    rare = data["groups"]["rare"]
    assert {"crps", "pinball", "coverage", "width", "ci", "n_series"} <= set(rare)
    assert set(rare["coverage"]) == {"0.5", "0.8", "0.9", "0.99"} and set(rare["width"]) == set(rare["coverage"])
    models = ev.read(SAMPLE)
    expected = ev.analyse(models["PTN with static context"], "regime", ev.EvalParams(resamples=200))
    assert rare["crps"] == pytest.approx(expected.group("rare").crps)
    assert rare["coverage"]["0.9"] == pytest.approx(expected.group("rare").coverage[0.9])
    assert set(data["comparison"]["groups"]) == {"typical", "rare"}
    assert "rare: 50 series" in capsys.readouterr().out


def test_evaluate_second_file_and_long_format(tmp_path):
    a = _frame(seed=1)
    b = a.copy()
    quantile_columns = [c for c in b.columns if c.startswith("q")]
    b.loc[b["group"] == "B", quantile_columns] += 0.5              # B's forecasts are off, for group B only
    a.to_csv(tmp_path / "a.csv", index=False)
    b.to_csv(tmp_path / "b.csv", index=False)
    out = tmp_path / "out.json"
    assert main(["forecast", "evaluate", str(tmp_path / "a.csv"), "--compare", str(tmp_path / "b.csv"),
                 "--resamples", "100", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["comparison"]["model_a"] == "a" and data["comparison"]["model_b"] == "b"
    assert data["comparison"]["groups"]["A"]["skill"] == pytest.approx(0.0)      # same forecasts for group A
    assert data["comparison"]["groups"]["B"]["skill"] > 0
    _frame(seed=1, wide=False).to_csv(tmp_path / "long.csv", index=False)
    assert main(["forecast", "evaluate", str(tmp_path / "long.csv"), "--resamples", "0", "--json", str(out)]) == 0
    long = json.loads(out.read_text())
    assert long["groups"]["A"]["crps"] == pytest.approx(data["groups"]["A"]["crps"])


@pytest.mark.parametrize("args,message", [
    (["forecast", "evaluate", "missing.csv"], "File not found"),
    (["forecast", "evaluate", str(SAMPLE), "--bands", "1.5"], "--bands"),
    (["forecast", "evaluate", str(SAMPLE), "--model", "nope"], "No model 'nope'"),
    (["forecast", "evaluate", str(SAMPLE), "--truth", "nvar", "--step", "zzz"], "step column 'zzz'"),
    (["ptn", "train", "--config", "missing.json", "--out", "x"], "Config file not found"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, capsys):
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_bad_ptn_config(tmp_path, capsys):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"ptn": {"d": 30, "history_heads": 4}}))
    assert main(["ptn", "train", "--config", str(cfg), "--out", str(tmp_path / "o")]) == 2
    assert "heads" in capsys.readouterr().err
    cfg.write_text(json.dumps({"model": {}}))
    assert main(["ptn", "train", "--config", str(cfg), "--out", str(tmp_path / "o")]) == 2


@pytest.mark.slow
def test_ptn_train_writes_a_bundle_the_page_can_load(tmp_path):
    pytest.importorskip("torch")
    from fairviz.forecast import pipeline as demo
    cfg = tmp_path / "tiny.json"
    cfg.write_text(json.dumps({
        "data": {"fit_systems": 3, "fit_initial": 5, "train_systems": 2, "train_initial": 5, "arch_systems": 2,
                 "arch_initial": 3, "test_systems": 2, "test_initial": 3, "stride": 30},
        "ptn": {"d": 24, "history_heads": 2, "forecast_heads": 2},
        "train": {"epochs": 2, "weight_steps": 2, "arch_steps": 1, "batch": 16}, "fans": 4}))
    assert main(["ptn", "train", "--config", str(cfg), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    bundle = demo.load_bundle(tmp_path / "run" / "lorenz_ptn.npz")
    assert bundle.fans.quantiles.shape == (4, 16, 111)
    assert len(bundle.trained.history) == 2
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["config"]["ptn"]["d"] == 24
    assert np.isfinite(summary["evaluation"]["skill_vs_gaussian_nvar"]["skill_q2"])
