"""`fairviz audit` with two models on a multiclass file (issue 35): --predicted (each with the --score in its
position) or --class-scores repeated, named by --model-name in order (else by their pattern). The first model is
audited as alone, and the second is compared with it by paired error rates; a mismatch of the options is one plain
line and exit 2."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from fairviz.cli.main import main
from tests.data.compare import shared
from tests.data.test_engine import numbers_differ
from tests.data.test_engine_multiclass_models import two_models

FAST = ["--resamples", "20", "--knee-resamples", "0", "--task", "multiclass", "--label", "label", "--group", "grp"]
PREDICTED = ["--predicted", "pred_a", "--score", "conf_a", "--predicted", "pred_b", "--score", "conf_b"]


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "classes.csv"
    two_models().to_csv(path, index=False)
    return path


def audit(capsys, *args) -> tuple[int, dict | None, str]:
    code = main(["audit", *map(str, args), *FAST, "--json", "-"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


def test_two_predicted_classes_are_audited_and_compared(path, capsys):
    code, both, _ = audit(capsys, path, *PREDICTED)
    assert code == 0 and "errors" not in both
    assert [(m["name"], m["predicted"]) for m in both["mapping"]["models"]] == [("conf_a", "pred_a"),
                                                                                  ("conf_b", "pred_b")]
    _, alone, _ = audit(capsys, path, *PREDICTED[:4])
    drop = ("mapping", "comparison", "fingerprint")
    assert numbers_differ(shared(alone, drop), shared(both, drop), 1e-12) == []     # the first model as alone
    (name, comparison), = both["comparison"].items()
    assert name == "conf_a_vs_conf_b" and comparison["task"] == "multiclass"
    frame = pd.read_csv(path)
    for key, group in (("error_rate", None), ("error_rate|b", "b")):
        rows = frame if group is None else frame[frame.grp == group]
        d = comparison["differences"][key]
        assert (d["value_a"], d["value_b"], d["n"]) == (pytest.approx(np.mean(rows.pred_a != rows.label), rel=1e-12),
                                                        pytest.approx(np.mean(rows.pred_b != rows.label), rel=1e-12),
                                                        len(rows))
    gap = comparison["differences"]["error_rate_gap|b vs a"]
    assert gap["value_a"] == pytest.approx(comparison["differences"]["error_rate|b"]["value_a"]
                                           - comparison["differences"]["error_rate|a"]["value_a"], rel=1e-12)


def test_class_scores_repeat_one_model_each_named_in_order(path, capsys):
    code, named, _ = audit(capsys, path, "--class-scores", "a_*", "--class-scores", "b_bird,b_cat,b_dog",
                           "--model-name", "A", "--model-name", "B")
    assert code == 0 and list(named["comparison"]) == ["A_vs_B"]
    assert named["mapping"]["models"][1]["class_scores"] == ["b_bird", "b_cat", "b_dog"]
    assert named["mapping"]["classes"] == ["cat", "dog", "bird"]
    code, unnamed, _ = audit(capsys, path, "--class-scores", "a_*", "--class-scores", "b_*")
    assert code == 0 and list(unnamed["comparison"]) == ["a_*_vs_b_*"]                 # named by their patterns
    assert numbers_differ(named["comparison"]["A_vs_B"]["differences"],
                          unnamed["comparison"]["a_*_vs_b_*"]["differences"], 1e-12) == []


@pytest.mark.parametrize("args, message", [
    (["--predicted", "pred_a", "--score", "conf_a", "--score", "conf_b"], "2 --score for 1 --predicted"),
    (["--predicted", "pred_a", "--predicted", "pred_b", "--score", "conf_a"],
     "1 --score for 2 --predicted: give each predicted-class column its confidence"),
    (["--class-scores", "a_*", "--class-scores", "b_*", "--model-name", "A", "--model-name", "B", "--model-name",
      "C"], "3 --model-name for 2 --class-scores"),
    (["--class-scores", "a_*", "--predicted", "pred_b"], "not both"),
])
def test_a_mismatch_of_the_model_options_is_one_plain_line(path, capsys, args, message):
    code, _, err = audit(capsys, path, *args)
    assert code == 2 and message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
