"""The architecture as a test: import-linter's contracts (pyproject.toml) hold on every run."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_are_kept():
    """cli → report → independent concepts → core, and no Streamlit inside fairviz."""
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "BROKEN" not in done.stdout and "KEPT" in done.stdout


def test_a_broken_layer_would_be_caught(tmp_path):
    """The contract is live: a concept that imports the report layer breaks it (checked on a copy)."""
    import shutil
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "fairviz", copy / "fairviz", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    bad = copy / "fairviz" / "parity" / "analysis.py"
    bad.write_text(bad.read_text() + "\nfrom fairviz.report import html as _upward  # noqa\n")
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--no-cache"], cwd=copy, capture_output=True, text=True,
                          env={"PYTHONPATH": str(copy), "PATH": ""})
    assert done.returncode != 0
    assert "fairviz.parity is not allowed to import fairviz.report" in done.stdout
