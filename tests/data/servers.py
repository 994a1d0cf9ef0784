"""Throwaway servers for the engine tests and benchmarks, listening on 127.0.0.1 only, each in its own folder.

PostgreSQL: Debian's server binaries (``make test`` installs the ``postgresql`` package when missing); as root the
server runs as the ``postgres`` user, since initdb refuses root. Spark: the standalone master and worker and the
Spark Connect server, whose classes ship with pyspark (``spark-class``, ``spark-submit``)."""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, seconds: float, process: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server exited with status {process.returncode}")
        with socket.socket() as s:
            if s.connect_ex((LOOPBACK, port)) == 0:
                return
        time.sleep(0.5)
    raise RuntimeError(f"nothing listens on {LOOPBACK}:{port} after {seconds:.0f} s")


def postgres_bin() -> Path | None:
    """The folder of initdb and pg_ctl: on PATH, or Debian's /usr/lib/postgresql/<version>/bin."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(os.path.realpath(found)).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    return Path(versions[-1]).parent if versions else None


@contextmanager
def postgres_server():
    """A PostgreSQL server on 127.0.0.1 (trust authentication, C collation, database "fairviz"); yields its DSN. Its folder is
    a fresh one under the system's temporary folder, which the postgres user can reach (pytest's tmp_path is not)."""
    binaries = postgres_bin()
    if binaries is None:
        raise RuntimeError("no PostgreSQL server binaries")
    folder = Path(tempfile.mkdtemp(prefix="fairviz-pg-"))
    data, port = folder / "pgdata", free_port()
    as_user = []
    if os.geteuid() == 0:                           # initdb and postgres refuse to run as root
        shutil.chown(folder, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    run = lambda *cmd: subprocess.run([*as_user, *cmd], check=True, capture_output=True, timeout=120)  # noqa: E731
    run(str(binaries / "initdb"), "-D", str(data), "-U", "fairviz", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync")
    options = f"-c listen_addresses={LOOPBACK} -c port={port} -c unix_socket_directories='{folder}' -c fsync=off"
    run(str(binaries / "pg_ctl"), "-D", str(data), "-l", str(folder / "log"), "-o", options, "-w", "start")
    try:
        run(str(binaries / "createdb"), "-h", LOOPBACK, "-p", str(port), "-U", "fairviz", "fairviz")
        yield f"postgresql://fairviz@{LOOPBACK}:{port}/fairviz"
    finally:
        run(str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(folder, ignore_errors=True)


def load_frame(dsn: str, table: str, frame) -> None:
    """Create ``table`` from a pandas frame through COPY (a few seconds for millions of rows)."""
    import io

    import psycopg
    types = {"i": "bigint", "u": "bigint", "f": "double precision", "b": "boolean"}
    columns = ", ".join(f'"{c}" {types.get(frame[c].dtype.kind, "text")}' for c in frame.columns)
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute(f'DROP TABLE IF EXISTS {table}')
        con.execute(f"CREATE TABLE {table} ({columns})")
        with con.cursor().copy(f"COPY {table} FROM STDIN WITH (FORMAT csv)") as copy:
            for start in range(0, len(frame), 500_000):
                buffer = io.StringIO()
                frame.iloc[start:start + 500_000].to_csv(buffer, header=False, index=False, float_format="%.17g")
                copy.write(buffer.getvalue())
        con.execute(f"ANALYZE {table}")


def spark_home() -> Path:
    import pyspark
    return Path(pyspark.__file__).parent


def _spark_env(folder: Path) -> dict:
    env = {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": LOOPBACK,
           "SPARK_LOG_DIR": str(folder), "SPARK_WORKER_DIR": str(folder / "work")}
    return env


@contextmanager
def spark_standalone(folder: Path):
    """A standalone master and one worker (1 core, 1 GB) on 127.0.0.1; yields the master URL."""
    folder.mkdir(parents=True, exist_ok=True)
    env, port = _spark_env(folder), free_port()
    spark_class = str(spark_home() / "bin" / "spark-class")
    logs = [open(folder / name, "wb") for name in ("master.log", "worker.log")]
    master = subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host", LOOPBACK, "--port",
                               str(port), "--webui-port", str(free_port())], env=env, stdout=logs[0], stderr=logs[0],
                              cwd=folder)
    worker = None
    try:
        _wait_for_port(port, 90, master)
        url = f"spark://{LOOPBACK}:{port}"
        worker = subprocess.Popen([spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", LOOPBACK,
                                   "--cores", "1", "--memory", "1g", "--webui-port", str(free_port()),
                                   "--work-dir", str(folder / "work")], env=env, stdout=logs[1], stderr=logs[1],
                                  cwd=folder)
        deadline = time.monotonic() + 90
        while b"Successfully registered with master" not in (folder / "worker.log").read_bytes():
            if time.monotonic() > deadline or worker.poll() is not None:
                raise RuntimeError("the Spark worker did not register with the master")
            time.sleep(0.5)
        yield url
    finally:
        for process in (worker, master):
            if process is not None:
                process.terminate()
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
        for log in logs:
            log.close()


@contextmanager
def spark_connect_server(folder: Path):
    """A Spark Connect server (local[2]) on 127.0.0.1; yields its sc:// URL."""
    folder.mkdir(parents=True, exist_ok=True)
    env, port = _spark_env(folder), free_port()
    log = open(folder / "connect.log", "wb")
    server = subprocess.Popen(
        [str(spark_home() / "bin" / "spark-submit"), "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
         "--master", "local[2]", "--conf", f"spark.connect.grpc.binding.port={port}",
         "--conf", f"spark.connect.grpc.binding.address={LOOPBACK}", "--conf", "spark.ui.enabled=false",
         "--conf", f"spark.driver.host={LOOPBACK}", "--conf", f"spark.driver.bindAddress={LOOPBACK}",
         "--conf", f"spark.sql.warehouse.dir={folder / 'warehouse'}",        # its tables stay in its own folder
         "spark-internal"], env=env, stdout=log, stderr=log, cwd=folder)
    try:
        _wait_for_port(port, 120, server)
        yield f"sc://{LOOPBACK}:{port}"
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
