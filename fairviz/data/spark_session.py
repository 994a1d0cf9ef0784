"""Checks and settings of a Spark session that run before Java starts: the master's form, a remote server's
reachability, the Connect client's packages, the SQL settings every session gets and quieter PySpark loggers.
``fairviz.data.engine`` starts the sessions."""
from __future__ import annotations

import os
import re

from fairviz.data.model import DataError

SPARK_SQL_CONF = {"spark.sql.ansi.enabled": "true", "spark.sql.ansi.doubleQuotedIdentifiers": "true",
                   "spark.sql.shuffle.partitions": "8"}


def quiet_pyspark_loggers() -> None:
    """pyspark logs every failed query to stderr as JSON; the engine says it once, as one sentence (DataError)."""
    import logging
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:
        return
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)


def check_reachable(url: str, what: str = "the Spark Connect server", default_port: int = 15002,
               seconds: float = 10.0) -> None:
    """Refuse at once an endpoint that nothing listens on (the client would retry for minutes)."""
    import socket
    from urllib.parse import urlsplit
    parts = urlsplit(url.split(";", 1)[0] if "://" in url else "//" + url)
    try:
        port = parts.port or default_port
        with socket.create_connection((parts.hostname or "localhost", port), timeout=seconds):
            return
    except (OSError, ValueError) as err:
        raise DataError(f"Could not reach {what} at {parts.hostname}:{parts.port or default_port} "
                        f"({getattr(err, 'strerror', None) or err}).") from None


_LOCAL_MASTER = re.compile(r"^local(\[(\*|[1-9]\d*)(,\s*[1-9]\d*)?\])?$")
_HOSTS_MASTER = re.compile(r"^(spark|mesos)://([^/,:]+:\d+)(,[^/,:]+:\d+)*/?$")


def check_master(master: str) -> None:
    """Refuse at once a master URL that Spark would fail on slowly or with a Java traceback: a malformed one, YARN
    without its configuration, a standalone master that nothing listens on (Spark retries for minutes)."""
    if _LOCAL_MASTER.match(master):
        return
    if master == "yarn":
        if not (os.environ.get("HADOOP_CONF_DIR") or os.environ.get("YARN_CONF_DIR")):
            raise DataError("--spark-master yarn needs the cluster's configuration: set HADOOP_CONF_DIR or "
                            "YARN_CONF_DIR.")
        return
    if master.startswith("k8s://"):
        check_reachable(master[len("k8s://"):], "the Kubernetes API server", 443)
        return
    hosts = _HOSTS_MASTER.match(master)
    if hosts is None:
        raise DataError(f"'{master}' is not a Spark master URL: use local[N], spark://HOST:PORT, yarn, "
                        "k8s://HOST:PORT or sc://HOST:PORT (Spark Connect).")
    for host in master.split("://", 1)[1].rstrip("/").split(","):
        check_reachable(f"spark://{host}", "the Spark master", 7077)


def connect_client_missing() -> list[str]:
    """The Spark Connect client's packages that are not installed (pyspark's own check exits the interpreter when
    it runs outside a script)."""
    import importlib.util
    modules = {"grpcio": "grpc", "grpcio-status": "grpc_status", "googleapis-common-protos": "google.rpc",
               "zstandard": "zstandard"}
    missing = []
    for package, module in modules.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            missing.append(package)
    return missing
