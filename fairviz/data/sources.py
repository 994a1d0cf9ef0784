"""Sources as the engine sees them: local files, URLs passed untouched, catalog tables, read-only queries, frames.

- ``Files``: a CSV file, a Parquet file, or a folder/glob of Parquet files on this machine (today's resolution);
- ``Location``: a path or URL with a scheme (``s3a://``, ``hdfs://``, ``gs://``, ``abfss://``, ``file://`` …), handed
  to the engine as written so that it reads it with its own configuration (a cluster's credentials, its filesystems);
- ``Table``: a table of the engine's catalog (Spark), of a DuckDB database file, or of a PostgreSQL database;
- ``Query``: the result of a SELECT (a join of predictions with demographics, a date filter), run read-only;
- ``Frame``: data already in memory (an Arrow table from pandas or Polars, or a Spark DataFrame on its own session).

``listed_sources`` reads the operator's ``FAIRVIZ_SOURCES``: named tables and queries the app offers, so that a visitor
picks a name and never types a path, a DSN or SQL.
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from fairviz.data.model import DataError

# The schemes each engine reads natively; a URL with any other scheme is refused before an engine starts.
SCHEMES = {
    "spark": ("file", "hdfs", "viewfs", "webhdfs", "s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs",
              "adl", "oss", "cos", "dbfs", "alluxio"),
    "duckdb": ("file", "s3", "s3a", "gs", "gcs", "r2", "http", "https", "az", "azure", "abfss", "hf"),
    "postgres": (),
}
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_PART = r'(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")'
_TABLE_NAME = re.compile(rf"^{_PART}(?:\.{_PART}){{0,2}}$")
_READING = ("select", "with", "values", "table", "from")
_COMMENTS = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)


def _digest(*parts: str) -> str:
    return hashlib.blake2b("|".join(parts).encode(), digest_size=16).hexdigest()


@dataclass(frozen=True)
class Files:
    """A CSV file, a Parquet file, or a set of Parquet files (a folder or a glob) on this machine."""

    name: str
    format: str                 # "csv" or "parquet"
    files: tuple[str, ...]

    @property
    def fingerprint(self) -> str:
        """Names, sizes and modification times: a cache key that never reads the data."""
        return _digest(*(f"{f}:{os.path.getsize(f)}:{os.path.getmtime(f)}" for f in self.files))


@dataclass(frozen=True)
class Location:
    """A path or URL with a scheme, passed to the engine untouched (CSV when it ends in .csv, else Parquet)."""

    url: str

    @property
    def name(self) -> str:
        return self.url

    @property
    def scheme(self) -> str:
        return scheme_of(self.url) or ""

    @property
    def format(self) -> str:
        return "csv" if self.url.lower().rstrip("/").endswith((".csv", ".csv.gz")) else "parquet"

    @property
    def fingerprint(self) -> str:
        return _digest("url", self.url)


@dataclass(frozen=True)
class Table:
    """A table of the engine's catalog (Spark), of a DuckDB database file or of a PostgreSQL database."""

    table: str
    database: str | None = None          # a DuckDB file; None: the engine's own catalog or the DSN's database

    @property
    def name(self) -> str:
        return self.table

    @property
    def fingerprint(self) -> str:        # the data can change under the same name: a cache key for one run only
        return _digest("table", self.database or "", self.table)


@dataclass(frozen=True)
class Query:
    """The rows of a read-only query (SELECT, WITH or VALUES), on the engine's catalog, a DuckDB file or a database."""

    text: str
    database: str | None = None
    title: str = "query"

    @property
    def name(self) -> str:
        return self.title

    @property
    def fingerprint(self) -> str:
        return _digest("query", self.database or "", self.text)


@dataclass(frozen=True, eq=False)
class Frame:
    """Rows already in memory: an Arrow table (pandas and Polars arrive this way) or a Spark DataFrame."""

    data: object
    name: str = "DataFrame"
    fingerprint: str = field(default="")

    @property
    def is_spark(self) -> bool:
        return is_spark_frame(self.data)


Source = Files | Location | Table | Query | Frame


def is_spark_frame(data) -> bool:
    """A pyspark DataFrame, classic or Spark Connect (checked by module, so pyspark is never imported for it)."""
    return type(data).__name__ == "DataFrame" and type(data).__module__.startswith("pyspark.sql")


def scheme_of(text: str) -> str | None:
    match = _SCHEME.match(str(text))
    return match.group(1).lower() if match else None


def resolve(path: str | Path) -> Files:
    """A local CSV/Parquet file, folder or glob → its files and format (every problem named in one sentence)."""
    text = str(path)
    if scheme_of(text) is not None:       # Path() would fold 'http://host/x' into a local 'http:/host/x' that may exist
        raise DataError(f"'{text}' is a URL, not a file on this machine: give it to the engine as a URL.")
    p = Path(text)
    if any(ch in text for ch in "*?["):
        files = sorted(glob.glob(text, recursive=True))
        if not files:
            raise DataError(f"No file matches '{text}'.")
    elif p.is_dir():
        files = sorted(str(f) for f in p.rglob("*") if f.is_file() and f.suffix.lower() in (".parquet", ".pq"))
        if not files:
            raise DataError(f"The folder '{text}' holds no Parquet files (*.parquet).")
    elif p.exists():
        files = [text]
    else:
        raise DataError(f"File not found: {text}")
    parquet = [f.lower().endswith((".parquet", ".pq")) or _magic(f) == b"PAR1" for f in files]
    if all(parquet):
        fmt = "parquet"
    elif len(files) == 1:
        fmt = "csv"
        if os.path.getsize(files[0]) == 0:
            raise DataError(f"'{p.name}' is empty: there are no rows to analyse.")
        with open(files[0], "rb") as handle:
            head = handle.read(4096)
            if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):    # UTF-16 text has zeros
                raise DataError(f"'{p.name}' looks like a binary file, not CSV or Parquet.")
    else:
        raise DataError(f"'{text}' mixes Parquet with other files; point at Parquet files only (or one CSV).")
    return Files(p.name or text, fmt, tuple(files))


def _magic(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(4)


def locate(path: str | Path, engine: str, local_master: bool = True) -> Files | Location:
    """A path or URL as ``engine`` should read it. A scheme (``s3a://`` …) is passed untouched when the engine reads
    it. A path without one keeps its resolution on this machine for DuckDB and Spark in local mode; Spark on a cluster
    is given it as written, since its executors cannot read the driver's disk: the cluster resolves it on its own
    default filesystem (HDFS, say), and ``file:///…`` names a disk that every node shares."""
    text = str(path)
    scheme = scheme_of(text)
    if scheme is not None:
        known = SCHEMES[engine]
        if scheme not in known:
            readable = f"it reads {', '.join(s + '://' for s in known)}" if known else "it reads --table or --query"
            raise DataError(f"The {engine} engine cannot read '{scheme}://' URLs ({text}); {readable}.")
        return Location(text)
    if engine == "postgres":
        raise DataError("--engine postgres audits a table or a query of the database: give --table NAME or "
                        "--query 'SELECT …' instead of a path.")
    if engine == "spark" and not local_master:
        return Location(text)
    return resolve(text)


def table_name(text: str) -> str:
    """A table name as SQL reads it: up to three dot-separated parts, each a plain identifier or double-quoted."""
    name = str(text).strip()
    if not _TABLE_NAME.match(name):
        raise DataError(f"'{text}' is not a table name: use NAME, SCHEMA.NAME or CATALOG.SCHEMA.NAME (double-quote a "
                        "part that has other characters).")
    return name


def read_only_query(text: str) -> str:
    """The query if it only reads (it starts with SELECT, WITH, VALUES, TABLE or FROM and is one statement); else a
    plain refusal. The engines enforce it too: the query runs as a subquery, in a read-only transaction
    (PostgreSQL) or on a read-only connection (a DuckDB file)."""
    body = _COMMENTS.sub(" ", str(text)).strip().rstrip(";").strip()
    first = re.match(r"[\s(]*([A-Za-z]+)", body)
    if not body:
        raise DataError("--query is empty: give a SELECT that returns one row per prediction.")
    if first is None or first.group(1).lower() not in _READING:
        word = first.group(1).upper() if first else body[:20]
        raise DataError(f"--query runs read-only: a {word} statement is not a query (start it with SELECT or WITH).")
    if ";" in _strip_literals(body):
        raise DataError("--query takes one statement: remove the ';' inside it.")
    return body


def dsn_has_password(dsn: str) -> bool:
    """Whether a libpq connection string (URL or key=value) carries a password."""
    from urllib.parse import parse_qs, urlsplit
    text = str(dsn).strip()
    if re.match(r"^postgres(ql)?://", text, re.IGNORECASE):
        parts = urlsplit(text)
        return parts.password is not None or "password" in parse_qs(parts.query)
    return re.search(r"(^|\s)password\s*=", text, re.IGNORECASE) is not None


def _strip_literals(text: str) -> str:
    return re.sub(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"", "''", text)


# ----------------------------------------------------------------------------------------------- listed sources

@dataclass(frozen=True)
class Listed:
    """A source that the server's operator lists in FAIRVIZ_SOURCES: the app offers it by its name only."""

    name: str
    engine: str                          # "duckdb" (a database file) or "postgres" (a DSN, or the PG* variables)
    source: Table | Query
    dsn: str | None = None
    label: str | None = None
    score: str | None = None
    groups: tuple[str, ...] = ()


def listed_sources(value: str | None = None) -> list[Listed]:
    """The operator's sources: ``FAIRVIZ_SOURCES`` holds JSON (or the path of a JSON file), a list of objects with
    ``name``, one of ``table``/``query``, one of ``database`` (a DuckDB file) / ``dsn`` (PostgreSQL; "" reads the PG*
    variables), and optionally ``label``, ``score``, ``groups``. Unset: none."""
    text = os.environ.get("FAIRVIZ_SOURCES", "") if value is None else value
    if not text.strip():
        return []
    if not text.lstrip().startswith("["):
        try:
            text = Path(text.strip()).read_text(encoding="utf-8")
        except OSError as err:
            raise DataError(f"FAIRVIZ_SOURCES names a file that cannot be read ({err.strerror}).") from None
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as err:
        raise DataError(f"FAIRVIZ_SOURCES is not valid JSON ({err.msg} at line {err.lineno}).") from None
    if not isinstance(entries, list):
        raise DataError("FAIRVIZ_SOURCES must be a JSON list of sources.")
    listed, names = [], set()
    for k, entry in enumerate(entries):
        listed.append(_listed(entry, k))
        if listed[-1].name in names:
            raise DataError(f"FAIRVIZ_SOURCES lists the name '{listed[-1].name}' twice.")
        names.add(listed[-1].name)
    return listed


def _listed(entry, k: int) -> Listed:
    where = f"FAIRVIZ_SOURCES entry {k + 1}"
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"].strip():
        raise DataError(f"{where} needs a 'name'.")
    unknown = set(entry) - {"name", "table", "query", "database", "dsn", "label", "score", "groups"}
    if unknown:
        raise DataError(f"{where} has unknown keys: {', '.join(sorted(unknown))}.")
    if ("table" in entry) == ("query" in entry):
        raise DataError(f"{where} needs exactly one of 'table' and 'query'.")
    if ("database" in entry) == ("dsn" in entry):
        raise DataError(f"{where} needs exactly one of 'database' (a DuckDB file) and 'dsn' (PostgreSQL).")
    database = entry.get("database")
    source = Table(table_name(entry["table"]), database) if "table" in entry else \
        Query(read_only_query(entry["query"]), database, title=entry["name"])
    groups = entry.get("groups", ())
    groups = (groups,) if isinstance(groups, str) else tuple(groups)
    return Listed(entry["name"].strip(), "duckdb" if database else "postgres", source, entry.get("dsn") or None,
                  entry.get("label"), entry.get("score"), groups)
