"""Hostile input to `fairviz audit`: too many groups exit 2 with one line (fast); the caps are adjustable; names
that are markup or formulas stay inert in the HTML report."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd

from fairviz.cli.main import main
from tests.conftest import ROOT


def _groups_file(path, n_groups: int, per_group: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    n = n_groups * per_group
    score = rng.random(n).round(4)
    pd.DataFrame({"label": (rng.random(n) < score).astype(int), "score": score,
                  "group": np.repeat([f"g{i}" for i in range(n_groups)], per_group)}).to_csv(path, index=False)
    return path


def test_twenty_thousand_groups_exit_2_with_one_line(tmp_path):
    path = _groups_file(tmp_path / "many.csv", 20_000, 2)          # the 613 KB file
    done = subprocess.run([sys.executable, "-m", "fairviz.cli.main", "audit", str(path)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert "'group' has 20,000 groups; the limit is 200" in lines[0] and "--max-groups" in lines[0]
    assert done.stdout == ""


def test_the_caps_are_adjustable_in_the_cli(tmp_path, capsys):
    path = _groups_file(tmp_path / "some.csv", 6, 40)
    assert main(["audit", str(path), "--max-groups", "5"]) == 2
    assert "'group' has 6 groups; the limit is 5" in capsys.readouterr().err
    out = tmp_path / "a.json"
    assert main(["audit", str(path), "--max-pair-groups", "3", "--resamples", "50", "--knee-resamples", "0",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert len(data["groups"]) == 6
    assert {(p["group_i"], p["group_j"]) for p in data["pairs"]} == {("g0", "g1"), ("g0", "g2"), ("g1", "g2")}
    assert all("f_pattern" in p for p in data["pairs"])
    assert [(p["group_i"], p["group_j"]) for p in data["parity"]["pairs"]] == \
        [(p["group_i"], p["group_j"]) for p in data["pairs"]]
    assert len(data["calibration"]["pairs"]) == 3
    assert len(data["threshold_invariance"]["pairs"]) == 3       # every pair table covers the same pairs
    for notes in (data["warnings"], data["parity"]["warnings"], data["calibration"]["notes"]):
        assert any("15 pairs" in w and "3 largest groups" in w for w in notes)
    assert main(["audit", str(path), "--max-pair-groups", "1"]) == 2


def test_markup_and_formulas_in_names_stay_inert_in_the_html_report(tmp_path):
    rng = np.random.default_rng(2)
    n = 600
    score = rng.uniform(0.05, 0.95, n)
    names = ["<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "=HYPERLINK(\"http://evil\")"]
    path = tmp_path / "evil.csv"
    pd.DataFrame({"y": rng.binomial(1, score), "score": score, "group": np.repeat(names, n // 3)}).to_csv(path, index=False)
    html_path = tmp_path / "r.html"
    assert main(["audit", str(path), "--label", "y", "--score", "score", "--group", "group", "--resamples", "50",
                 "--knee-resamples", "0", "--html", str(html_path)]) == 0
    text = html_path.read_text()
    assert "<script>alert(1)</script>" not in text and "<img src=x onerror" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
