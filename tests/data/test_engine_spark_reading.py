"""Spark reads like DuckDB: hostile column names audited correctly with nothing from the environment or a file in
the output (the names never enter Spark SQL), group codes kept as written, CSV encodings and decimal commas."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairviz.data.engine import Engine, reduce_path
from tests.data.servers import LOOPBACK
from tests.data.test_engine_reading import CANARY, FAST, _frame, _hostile_names, _table, _variants

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java (make test installs Debian's "
                                                                      "openjdk-17-jre-headless when run as root)")]
ROLES = dict(label="label", score="score", groups=("group",))


def test_hostile_names_on_spark_leak_nothing_and_audit_like_duckdb(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(CANARY)
    names = _hostile_names(secret)
    path = tmp_path / "hostile.parquet"
    _frame().rename(columns=names).to_parquet(path)
    env = {**os.environ, "FAIRVIZ_CANARY": CANARY, "SPARK_LOCAL_IP": LOOPBACK, "PYTHONPATH": str(ROOT)}
    outputs = {}
    for engine in ("duckdb", "spark"):
        done = subprocess.run([sys.executable, "-m", "fairviz.cli", "audit", str(path), "--engine", engine,
                               "--label", names["label"], "--score", names["score"], "--group", names["group"],
                               *FAST, "--json", str(tmp_path / f"{engine}.json"),
                               "--html", str(tmp_path / f"{engine}.html")],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        text = done.stdout + done.stderr + (tmp_path / f"{engine}.json").read_text() + \
            (tmp_path / f"{engine}.html").read_text()
        assert CANARY not in text
        outputs[engine] = json.loads((tmp_path / f"{engine}.json").read_text())
    assert outputs["spark"]["groups"] == outputs["duckdb"]["groups"]
    assert sorted(outputs["spark"]["groups"]) == ["Frauen", "Männer", "divers"]


def test_spark_reads_csv_variants_and_group_codes_as_duckdb_does(tmp_path, monkeypatch):
    texts = []
    sql = Engine.sql
    monkeypatch.setattr(Engine, "sql", lambda self, text, params=None:
                        (texts.append(text) if self.kind == "spark" else None) or sql(self, text, params))
    frame = _frame()
    frame["group"] = np.resize(["01", "1", "1.0", "Männer"], len(frame))
    variants = _variants(frame)
    spark = Engine("spark", master="local[2]")
    for variant in ("latin-1", "utf-16", "semicolon, decimal comma", "tab"):
        path = tmp_path / f"{variant.replace(' ', '_').replace(',', '')}.csv"
        path.write_bytes(variants[variant])
        expected = reduce_path(path, **ROLES)
        stats = reduce_path(path, engine=spark, **ROLES)
        pd.testing.assert_frame_equal(_table(expected), _table(stats), check_dtype=False)   # Spark: int32 labels
        assert sorted(stats.predictions().groups("group").names) == ["01", "1", "1.0", "Männer"], variant
    quoted = tmp_path / "quoted.csv"
    quoted.write_bytes(variants["quoted header"])
    stats = reduce_path(quoted, engine=spark, label="label, y", score='score "p"', groups=("group, g",))
    assert stats.rows == len(frame)
    assert texts and not [t for t in texts if "label" in t or "score" in t or "group" in t]
