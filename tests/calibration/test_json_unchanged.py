"""`fairviz audit --json` writes the same calibration keys and values as before the section moved to a display
list: the golden files were written by the CLI on main before the move (same arguments as below), then updated
only where a value was approximate before "exact is exact" (issue 28): the logistic tests on more than 4,096
distinct scores (no longer snapped to a grid: Adult, synthetic; their grid note is gone) and the smooth ECE, its
intervals and gaps on groups with at most 2,048 distinct scores (masses at the scores: COMPAS, default); then the
smooth ECE's values again when its search returned the end of its bracket nearest the root (issue 34: they moved by
at most 2.4e-7 on equal cells, 2e-13 at the distinct scores)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairviz.cli.main import main
from tests.conftest import ROOT

GOLDEN = Path(__file__).parent / "golden"
RUNS = {
    "compas": ["assets/compas.csv"],
    "adult": ["assets/adult.csv"],
    "default": ["assets/default.csv"],
    "synthetic": ["assets/synthetic.csv"],
    "compas_x": ["assets/compas.csv", "--intersect", "--group", "race", "--group", "sex", "--bins", "8",
                 "--bin-strategy", "quantile"],
}
RESAMPLES = {"compas_x": "50"}


def _same(new, old, path="") -> None:
    if isinstance(old, dict):
        assert list(new) == list(old), f"{path}: keys {list(new)} != {list(old)}"
        for key in old:
            _same(new[key], old[key], f"{path}.{key}")
    elif isinstance(old, list):
        assert isinstance(new, list) and len(new) == len(old), path
        for k, (a, b) in enumerate(zip(new, old)):
            _same(a, b, f"{path}[{k}]")
    elif isinstance(old, float):
        assert new == pytest.approx(old, rel=1e-12, abs=1e-15), path
    else:
        assert new == old, path


@pytest.mark.slow
@pytest.mark.parametrize("sample", list(RUNS))
def test_calibration_json_is_unchanged(sample, tmp_path):
    out = tmp_path / "audit.json"
    args = [str(ROOT / RUNS[sample][0]), *RUNS[sample][1:], "--resamples", RESAMPLES.get(sample, "100"),
            "--knee-resamples", "0", "--json", str(out)]
    assert main(["audit", *args]) == 0
    new = json.loads(out.read_text())
    old = json.loads((GOLDEN / f"{sample}.json").read_text())
    _same({k: new[k] for k in old}, old)
