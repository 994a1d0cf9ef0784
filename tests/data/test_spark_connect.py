"""Spark where the data lives: a Spark Connect server and a standalone master + worker, started here on 127.0.0.1 from
the classes that ship with pyspark, give DuckDB's audit (every shared number to 1e-9) for a Parquet folder read as a
file:// URL, a catalog table and a query; a Spark DataFrame is reduced on its own (Connect) session."""
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

from fairviz.cli.main import main
from tests.data.servers import LOOPBACK, spark_connect_server, spark_standalone

from tests.data.test_engine import numbers_differ  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java (make test installs Debian's "
                                                                      "openjdk-17-jre-headless when run as root)")]
FAST = ["--resamples", "50", "--knee-resamples", "0"]
ROLES = ["--label", "label", "--score", "score", "--group", "group"]


def _connect_client() -> bool:
    from fairviz.data.engine import connect_client_missing
    return not connect_client_missing()


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """Four Parquet parts, 240,000 rows with continuous scores: above the exact limit, so 1/300,000-wide cells."""
    rng = np.random.default_rng(11)
    n = 240_000
    p = rng.beta(2, 3, n)
    frame = pd.DataFrame({"label": rng.binomial(1, p), "score": p, "group": rng.choice(["a", "b", "c"], n),
                          "id": np.arange(n)})
    path = tmp_path_factory.mktemp("scored") / "parts"
    path.mkdir()
    for k in range(4):
        frame.iloc[k * n // 4:(k + 1) * n // 4].to_parquet(path / f"part-{k}.parquet")
    return path


def _duckdb_audit(capsys, folder: Path) -> dict:
    assert main(["audit", str(folder), *ROLES, *FAST, "--json", "-"]) == 0
    return json.loads(capsys.readouterr().out)


def _cli(*args: str) -> dict:
    """`fairviz audit` in its own process (its own JVM, bound to 127.0.0.1), as a user runs it."""
    env = {**os.environ, "SPARK_LOCAL_IP": LOOPBACK, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-m", "fairviz.cli", "audit", *args, *ROLES, *FAST, "--json", "-"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _same(duck: dict, other: dict, engine: str) -> None:
    assert other["engine"] == duck["engine"] | {"engine": engine}
    shared = lambda a: {k: v for k, v in a.items() if k not in ("source", "engine")}  # noqa: E731
    assert numbers_differ(shared(duck), shared(other), 1e-9) == []


def test_standalone_master_and_worker_give_the_duckdb_audit(folder, capsys, tmp_path):
    duck = _duckdb_audit(capsys, folder)
    with spark_standalone(tmp_path / "standalone") as master:
        by_url = _cli(folder.resolve().as_uri(), "--engine", "spark", "--spark-master", master)
        by_query = _cli("--engine", "spark", "--spark-master", master, "--query",
                        f"SELECT * FROM parquet.`{folder.resolve()}` WHERE id >= 0")
    assert by_url["source"] == folder.resolve().as_uri() and by_query["source"] == "query"
    _same(duck, by_url, "spark")
    _same(duck, by_query, "spark")


@pytest.mark.skipif(not _connect_client(), reason="the Spark Connect client needs pip install 'pyspark[connect]' "
                                                  "(grpcio, grpcio-status, googleapis-common-protos, zstandard)")
def test_spark_connect_gives_the_duckdb_audit_for_a_url_a_table_and_a_dataframe(folder, capsys, tmp_path):
    import fairviz
    from pyspark.sql import SparkSession
    duck = _duckdb_audit(capsys, folder)
    with spark_connect_server(tmp_path / "connect") as remote:
        by_url = _cli(folder.resolve().as_uri(), "--engine", "spark", "--spark-remote", remote)
        active = SparkSession.getActiveSession()      # a classic session of an earlier test module blocks
        if active is not None:                        # a remote one in this process
            active.stop()
        spark = SparkSession.builder.remote(remote).getOrCreate()
        try:
            spark.read.parquet(folder.resolve().as_uri()).write.saveAsTable("scored_batch")
            by_table = _cli("--engine", "spark", "--spark-master", remote, "--table", "default.scored_batch")
            missing = subprocess.run([sys.executable, "-m", "fairviz.cli", "audit", "--engine", "spark",
                                      "--spark-remote", remote, "--table", "nowhere"], cwd=ROOT, capture_output=True,
                                     text=True, timeout=300, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                         [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])})
            frame = spark.read.parquet(folder.resolve().as_uri())
            in_python = fairviz.audit(frame, label="label", score="score", group="group", resamples=50,
                                      knee_resamples=0).to_dict()
        finally:
            spark.stop()
    _same(duck, by_url, "spark")
    _same(duck, by_table, "spark")
    _same(duck, in_python, "spark")
    assert missing.returncode == 2 and missing.stderr.strip() == \
        "fairviz: error: The table 'nowhere' does not exist in the Spark catalog."


def test_an_unreachable_connect_server_is_one_sentence(tmp_path, capsys):
    if not _connect_client():
        pytest.skip("the Spark Connect client needs pip install 'pyspark[connect]'")
    from tests.data.servers import free_port
    assert main(["audit", "--engine", "spark", "--spark-remote", f"sc://{LOOPBACK}:{free_port()}", "--table", "t",
                 "--json", str(tmp_path / "a.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and list(tmp_path.iterdir()) == []
