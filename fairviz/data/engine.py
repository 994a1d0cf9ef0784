"""One reduction for every audit: counts per (group values…, label, prediction cell), on an engine.

Every audit (residual distribution, calibration, parity, sample-size significance) depends on the rows only through
how many rows share a (group, label, prediction) cell, so a file is reduced once to that table and the audits read
the table. Each task's reduction is its spec's SQL (``fairviz.data.tasks``: ``TaskSpec.reduction``; binary: counts
per score cell of [0, 1], ``fairviz.data.tasks.binary.reduction_sql``; regression: cells of the target and
predictions over their ranges; multiclass: cells of each class probability on [0, 1]), run by every engine where
the data lives, the few dialect differences kept in ``fairviz.data.dialects``; the sources it reads are
``fairviz.data.sources``:

- DuckDB, embedded (the default): reads CSV, Parquet and folders/globs of Parquet out of core (files larger than
  memory), tables and queries of a DuckDB database file (read-only), and frames already in memory as Arrow tables;
- Apache Spark (``pyspark``; ``local[2]`` unless a master URL is given; ``sc://`` through Spark Connect) for data
  that outgrows one machine: storage URLs, catalog tables and queries read with the cluster's own configuration;
- PostgreSQL (``psycopg``): tables and queries run inside the database, in a read-only transaction.

Only the table travels back, bounded whatever the input size (binary: at most groups × 2 labels ×
``DEFAULT_CELLS`` + 1 rows). Several models are reduced in the same scan, grouped by every model's cell; each
model's audit merges the table to its own cells (``Predictions.at``) and the paired comparisons read the
joint cells. When every cell of the table holds a single distinct value (COMPAS's 10 deciles, any few-valued score),
the table *is* the exact count per distinct value and ``resolution`` is 0: the audits then equal the row-level ones
(inputs of at most ``EXACT_ROWS`` rows are always reduced exactly). Otherwise each cell carries the mean of its
values and ``resolution`` is the cell width, reported with the results (what stays exact: each task module's
docstring and docs/engines.md). Values that validation must name (outside [0, 1], NaN, missing) keep their own
entries so that validation names them as the row-level path does.
"""
from __future__ import annotations

import dataclasses

import hashlib
import io
import os
from pathlib import Path

import numpy as np
import pandas as pd

from fairviz.data.dialects import DIALECTS, is_nested
from fairviz.data.preview import (PREVIEW_CELLS, PREVIEW_CHARS, PREVIEW_MIN_CHARS, PREVIEW_ROWS,  # noqa: F401
                                  PREVIEW_TEXT_BYTES, arrow_nested, arrow_text, check_plain, first_line,
                                  parquet_preview, preview_chars)
from fairviz.data.spark_session import (SPARK_SQL_CONF, check_master, check_reachable,  # noqa: F401
                                        connect_client_missing, quiet_pyspark_loggers)  # (re-exported)
from fairviz.data.model import ColumnMapping, DataError, ScoreColumn
from fairviz.data.reading import decode_table, inspect_table, is_parquet, read_table
from fairviz.data.scales import probability_sql
from fairviz.data.reduction import (CELL_KEY, COUNT, EXACT_ROWS, SufficientStats,  # noqa: F401
                                    core_mapping, stats_of)            # (re-exported: the engine's face)
from fairviz.data.tasks import guess_mapping, spec_of
from fairviz.data.tasks.binary import DEFAULT_CELLS
from fairviz.data.validation import check_columns
from fairviz.data.sources import (Files, Frame, Location, Query, Table, locate,  # noqa: F401 (resolve: re-exported)
                                  resolve, scheme_of)

from fairviz.data.duckdb_runner import DuckDBRunner, _duckdb_csv_options, _header_names, _sniffed  # noqa: F401
from fairviz.data.postgres_runner import PostgresRunner, _arrow_type  # noqa: F401
from fairviz.data.spark_runner import DEFAULT_SPARK_MASTER, SparkRunner

Source = Files        # the name this module used for a local file set

ENGINES = ("duckdb", "spark", "postgres")


# ----------------------------------------------------------------------------------------------- engines

class Engine(DuckDBRunner, SparkRunner, PostgresRunner):
    """Runs the reduction where the data lives. ``kind``:

    - 'duckdb' (embedded): ``memory_limit`` such as '200MB' spills beyond it; ``database`` a DuckDB file opened
      read-only for ``Table`` and ``Query`` sources;
    - 'spark': ``master`` defaults to local[2]; ``sc://host:port`` uses the Spark Connect client; ``session`` an
      existing SparkSession (a Spark DataFrame is reduced on its own);
    - 'postgres': ``dsn`` a libpq connection string or URL (None: the PG* environment variables); every query runs in a
      read-only transaction and only the reduced table comes back."""

    def __init__(self, kind: str = "duckdb", master: str | None = None, memory_limit: str | None = None,
                 threads: int | None = None, cells: int = DEFAULT_CELLS, *, dsn: str | None = None,
                 database: str | None = None, session=None, task_cells: dict[str, int] | None = None):
        if kind not in ENGINES:
            raise DataError(f"Unknown engine '{kind}': choose one of {', '.join(ENGINES)}.")
        self.kind, self.master, self.memory_limit, self.threads, self.cells = kind, master, memory_limit, threads, cells
        self.dsn, self.database = dsn, database
        self.task_cell_counts = dict(task_cells or {})   # task name → cells per column (binary: ``cells``)
        self.dialect = DIALECTS[kind]
        self.fetched_rows = 0           # rows that came back from the engine, all queries together
        self._con = None
        self._spark = session
        self._own_session = session is None      # (a session of the caller's may be a cluster's)
        self._source = None
        self._scratch: str | None = None       # transcoded copies of Windows-1252 CSVs (removed by close)
        self._relation = "src"
        self._names: list[str] = []      # the registered source's column names, by position (SQL reads c0, c1, …)
        self._types: list[str] = []

    @property
    def connect(self) -> bool:
        """Spark through the Spark Connect client (``sc://`` master)."""
        return self.kind == "spark" and str(self.master or "").startswith("sc://")

    @property
    def local(self) -> bool:
        """The engine reads this machine's files (DuckDB, Spark in local mode)."""
        return self.kind == "duckdb" or (self.kind == "spark" and self._own_session and
                                         str(self.master or DEFAULT_SPARK_MASTER).startswith("local"))

    # --- the engines' plumbing: a source as a relation, its columns, SQL → pandas


    def _register(self, source, text: tuple[str, ...] = ()) -> None:
        """Make ``source`` the relation that the SQL reads (``self._relation``), its columns renamed by position
        (c0, c1, …): no name from a file or a database ever enters SQL text, and no name of ours can meet one of
        theirs. ``self._names`` keeps the source's own names, in order, for what is shown and returned. ``text``:
        columns read as text (group columns: codes '01' and '1' stay two groups), where the format has no types of
        its own (CSV)."""
        self._source = source                   # named in the engine's errors
        if self.kind == "postgres":
            self._relation = self._postgres_relation(source)
        elif self.kind == "duckdb":
            self._relation = self._duckdb_relation(source, text)
        else:
            if isinstance(source, Frame) and source.is_spark:
                self._spark = source.data.sparkSession          # a Spark DataFrame is reduced on its own session
            self._relation = "__fairviz_src"
            frame = self._spark_frame(source, text)
            self._run(lambda: frame.createOrReplaceTempView(self._relation))

    def located_columns(self, source, columns, text: tuple[str, ...] = ()) -> tuple[str, dict[str, str]]:
        """Register ``source`` and return the relation a caller's SQL reads and each of ``columns``' positional alias
        (c0, c1, …), so that a query built outside the engine names no column of the source in its text. ``text``:
        columns read as text, as for the reduction."""
        self._register(source, tuple(text))
        return self._relation, {name: self._at(name) for name in columns}

    def _positional(self, base: str, names: list[str], types: list[str]) -> str:
        """``base`` with its columns renamed c0, c1, … by a column alias list (DuckDB and PostgreSQL)."""
        self._set_columns(names, types)
        return f"(SELECT * FROM {base}) AS __fv_t({', '.join(self._aliases())})"

    def _set_columns(self, names, types) -> None:
        self._names = [str(n).lstrip("\ufeff").strip() for n in names]   # as the preview shows them
        self._types = [str(t).upper() for t in types]

    def _aliases(self) -> list[str]:
        return [f"c{i}" for i in range(len(self._names))]

    def _at(self, name: str) -> str:
        """The positional alias of a column of the source, by its name (the preview's names are stripped)."""
        if name not in self._names:
            raise DataError(f"'{name}' is not a column of '{getattr(self._source, 'name', 'the data')}'.")
        return f"c{self._names.index(name)}"

    def _text_aliases(self, text: tuple[str, ...]) -> set[str]:
        """The aliases of the columns to read as text (names that are not columns are left to the mapping checks)."""
        return {self._at(name) for name in text if name in self._names}

    def _positions(self, mapping: ColumnMapping) -> ColumnMapping:
        """The mapping in positional names: what the SQL reads (every other field, the score's scale and direction
        among them, kept)."""
        return dataclasses.replace(core_mapping(mapping), label=self._at(mapping.label),
                                   score=self._at(mapping.score) if mapping.score else mapping.score,
                                   groups=tuple(self._at(g) for g in mapping.groups),
                                   class_scores=tuple(self._at(c) for c in mapping.class_scores),
                                   predicted=self._at(mapping.predicted) if mapping.predicted else None,
                                   more_scores=tuple(self._model_positions(m) for m in mapping.more_scores))

    def _model_positions(self, model: ScoreColumn) -> ScoreColumn:
        """Another model's columns in positional names."""
        return dataclasses.replace(model, column=self._at(model.column) if model.column else model.column,
                                   class_scores=tuple(self._at(c) for c in model.class_scores),
                                   predicted=self._at(model.predicted) if model.predicted else None)


    def _columns(self) -> dict[str, str]:
        """Column name (the source's own) → type name (upper case) of the registered relation."""
        return dict(zip(self._names, self._types))


    def sql(self, text: str, params=None) -> pd.DataFrame:
        def run():
            if self.kind == "duckdb":
                return self._duckdb().execute(text).df()
            if self.kind == "spark":
                return self.spark().sql(text).toArrow().to_pandas()      # the table only: a few MB at most
            return self._postgres_sql(text, params)
        frame = self._run(run)
        self.fetched_rows += len(frame)
        return frame

    def _run(self, step):
        try:
            return step()
        except DataError:
            raise
        except Exception as err:  # noqa: BLE001 - engines raise their own error types for bad files and queries
            if self.kind == "postgres":
                self._con.rollback() if self._con is not None and not self._con.closed else None
            raise self._read_error(err) from None

    def _read_error(self, err: BaseException) -> DataError:
        """One plain sentence for what the engine said: a table that is not there, a query that failed, a file."""
        first = first_line(err)
        lowered = first.lower()
        source = self._source
        if isinstance(source, Table) and any(s in lowered for s in ("does not exist", "not found", "not exist",
                                                                    "table_or_view_not_found", "cannot be found")):
            where = f"in '{self.database}'" if self.database else "in the Spark catalog" if self.kind == "spark" \
                else "in the database"
            return DataError(f"The table '{source.table}' does not exist {where}.")
        if "read-only" in lowered or "read only" in lowered:
            return DataError(f"--query runs read-only and the {self.kind} engine refused a write: {first}")
        if isinstance(source, Query):
            return DataError(f"The query failed on {self.kind}: {first}")
        if isinstance(source, Files) and source.format == "parquet" and any(
                s in lowered for s in ("magic bytes", "footer", "too small to be a parquet", "parquet")):
            return DataError(f"'{source.name}' could not be read as Parquet: it is truncated, damaged or not a "
                             f"Parquet file ({first}).")
        if isinstance(source, Files) and source.format != "parquet" and "sniffing" in lowered:
            try:
                self._strict_csv_read(source)        # names the row DuckDB's sniffer stumbled on
            except DataError as named:
                return named
        if isinstance(source, Files) and source.format != "parquet" and any(
                s in lowered for s in ("csv error", "sniffing", "encoded", "columns")):
            return DataError(f"'{source.name}' could not be read as CSV ({first}).")
        if isinstance(source, Location) and self.kind == "duckdb" and ("httpfs" in lowered or "extension" in lowered):
            return DataError("DuckDB reads URLs through its httpfs extension, which is not installed: install it "
                             "once (see docs/engines.md) or use --engine spark.")
        return DataError(f"The {self.kind} engine could not read the data: {first}")

    # --- public
    def preview(self, source, rows: int = PREVIEW_ROWS) -> pd.DataFrame:
        """The first rows, bounded in rows and bytes: enough to guess the column roles. Only plain columns are read
        (numbers, text, dates; lists, structs, maps and binary values are named in ``frame.attrs['unread']``, never
        decoded), text cut to its first characters, and fewer rows for a wide file. Local Parquet is read by Arrow
        with text columns as dictionaries (one huge value repeated on every row stays one value)."""
        self._register(source)
        if isinstance(source, Files) and source.format == "parquet":
            frame, unread = parquet_preview(source.files[0], source.name, rows)
        else:
            frame, unread = self._sql_preview(rows)
        frame.attrs["unread"] = unread
        if frame.empty and self.kind == "duckdb" and isinstance(source, Files) and source.format != "parquet":
            self._strict_csv_read(source)       # DuckDB's sniffer reads a file with one bad row as no rows at all
        if frame.empty:
            raise DataError(f"'{source.name}' has a header but no data rows." if isinstance(source, (Files, Location))
                            else f"'{source.name}' has no rows.")
        return frame

    def _as_utf8(self, files, encoding: str) -> list[str]:
        """Files in an encoding an engine cannot decode (Windows-1252; UTF-16 big-endian on DuckDB) transcoded to
        UTF-8 in the engine's scratch folder, in blocks (memory stays bounded); the folder goes with ``close``."""
        import codecs
        import tempfile
        if self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix="fairviz-")
        copies = []
        for k, path in enumerate(files):
            copy = os.path.join(self._scratch, f"utf8-{k}.csv")
            decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
            with open(path, "rb") as src, open(copy, "w", encoding="utf-8", newline="") as dst:
                while block := src.read(1 << 24):
                    dst.write(decoder.decode(block))
                dst.write(decoder.decode(b"", final=True))
            copies.append(copy)
        return copies

    def _strict_csv_read(self, source: Files) -> None:
        """Read the CSV without DuckDB's sniffer (every column as text, the options sniffed by the row path's rules),
        so a row with more or fewer fields than the header is named instead of the file reading as empty."""
        sniffed = _sniffed(source)
        if sniffed is None:
            return
        listed = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in source.files) + "]"
        columns = "{" + ", ".join(f"'c{k}': 'VARCHAR'" for k in range(len(sniffed.names))) + "}"
        try:
            self._duckdb().sql(f"SELECT COUNT(*) FROM read_csv({listed}, header = true, auto_detect = false, "
                               f"delim = '{sniffed.delimiter}', quote = '\"', escape = '\"', "
                               f"encoding = '{sniffed.encoding}', columns = {columns})").fetchall()
        except Exception as err:    # noqa: BLE001 - DuckDB's parse errors have no common class
            raise DataError(f"'{source.name}' could not be read as CSV: {first_line(err)} (rows must have the "
                            f"{len(sniffed.names)} fields of the header).") from None

    def _sql_preview(self, rows: int) -> tuple[pd.DataFrame, list[str]]:
        plain = [k for k, t in enumerate(self._types) if not is_nested(t)]
        unread = [self._names[k] for k in range(len(self._names)) if k not in plain]
        check_plain(plain, unread, getattr(self._source, "name", "the data"))
        rows = max(1, min(int(rows), PREVIEW_CELLS // len(plain)))
        texts = [k for k in plain if self.dialect.is_text(self._types[k])]
        chars = preview_chars(rows, len(texts))
        select = ", ".join(f"{self.dialect.prefix(f'c{k}', chars)} AS c{k}" if k in texts else f"c{k}"
                           for k in plain)
        frame = self.sql(f"SELECT {select} FROM {self._relation} LIMIT {rows}")
        frame.columns = [self._names[k] for k in plain]
        return frame, unread

    def reduce(self, source, mapping: ColumnMapping, name: str | None = None) -> SufficientStats:
        """The sufficient statistics of ``source`` (a source of ``fairviz.data.sources``, or an upload's bytes)."""
        if isinstance(source, (bytes, bytearray)):
            table, name, fingerprint = arrow_upload(bytes(source), name or "upload", mapping)
            self._register(table)
        else:
            name = name or source.name
            fingerprint = source.fingerprint or hashlib.blake2b(str(id(source)).encode(), digest_size=16).hexdigest()
            self._register(source, mapping.groups)
        check_columns(pd.DataFrame(columns=list(dict.fromkeys(self._names))), core_mapping(mapping))
        spec = spec_of(mapping)
        if spec.reduction is None:
            raise DataError(f"{spec.title.capitalize()} predictions are read row by row only: no engine reduces them.")
        reduced = spec.reduction.reduce(self, self._positions(mapping), mapping)
        digest = hashlib.blake2b(f"{fingerprint}|{reduced.salt}".encode(), digest_size=16).hexdigest()
        return stats_of(reduced, mapping, name, digest, self.kind)

    # --- what a task's reduction (``TaskSpec.reduction.reduce``) reads of the engine

    @property
    def relation(self) -> str:
        """The relation the reduction SQL reads (the registered source, columns c0, c1, …)."""
        return self._relation

    @property
    def exact_rows(self) -> int:
        """Inputs of at most this many rows are reduced exactly (``fairviz.data.reduction.EXACT_ROWS``)."""
        return EXACT_ROWS

    def is_numeric(self, column: str) -> bool:
        """Whether the engine reads a column of the registered source (its positional name) as numbers."""
        return self.dialect.is_numeric(self._types[int(column[1:])])

    def task_cells(self, task: str) -> int:
        """Cells per column of a task's reduction (``task_cells`` given to the engine, or the spec's default)."""
        own = self.task_cell_counts.get(task)
        return int(own) if own else spec_of(task).reduction.cells

    def rows_of_entries(self, source, stats: SufficientStats, picks: pd.DataFrame) -> pd.DataFrame:
        """The input rows behind chosen rows (entries) of ``stats.table``, with every column of the source.

        ``picks``: ``entry`` (a row of the table), ``skip`` and ``take`` (which of the entry's rows, in score order),
        and any columns to attach to those rows. A row-level need of a reduced audit (the diagnostic set D* with the
        source's own columns) is this one filtered query on the same engine: the engine reads the source, out of
        core, and only the chosen rows reach Python; an upload's bytes (already in memory) are decoded whole, their
        size checked first as for the reduction."""
        if stats.cell_key is None or picks.empty:
            return pd.DataFrame()
        mapping = stats.mapping
        keys = [*mapping.groups, mapping.label]
        chosen = stats.table.iloc[picks["entry"].to_numpy()]
        wanted = pd.DataFrame({f"k{i}": chosen[c].to_numpy() for i, c in enumerate(keys)})
        wanted["cell"] = stats.cell_key[picks["entry"].to_numpy()]
        wanted["skip"], wanted["take"] = picks["skip"].to_numpy(np.int64), picks["take"].to_numpy(np.int64)
        extra = [c for c in picks.columns if c not in ("entry", "skip", "take")]
        for i, c in enumerate(extra):
            wanted[f"x{i}"] = picks[c].to_numpy()
        if isinstance(source, (bytes, bytearray)):
            import pyarrow as pa
            frame, _ = read_table(bytes(source), stats.source)
            self._register(pa.Table.from_pandas(frame, preserve_index=False))
        else:
            self._register(source, mapping.groups)
        columns = self._aliases()
        at = [self._at(c) for c in keys]
        d = self.dialect
        picked_rel, params = self._picks_relation(wanted, [self._types[int(a[1:])] for a in at])
        score = probability_sql(d.as_double(self._at(mapping.score)), mapping.score_scale, mapping.score_direction,
                                d.is_nan)
        cell = f"FLOOR({score} * {int(stats.key_cells)})" if stats.key_cells else score
        partition = ", ".join(at + [cell])
        order = ", ".join([score] + [c for c in columns if c != self._at(mapping.score)])   # ties: any fixed order
        ranked = (f"SELECT *, {cell} AS __fv_cell, ROW_NUMBER() OVER (PARTITION BY {partition} ORDER BY {order}) "
                  f"AS __fv_rank FROM {self._relation}")
        join = " AND ".join([f"r.{a} = p.k{i}" for i, a in enumerate(at)] + ["r.__fv_cell = p.cell"])
        picked = ", ".join([f"r.{c}" for c in columns] + [f"p.x{i}" for i in range(len(extra))])
        rows = self.sql(f"SELECT {picked} FROM ({ranked}) r JOIN {picked_rel} ON {join} "
                        f"WHERE r.__fv_rank > p.skip AND r.__fv_rank <= p.skip + p.take", params)
        rows.columns = [*self._names, *extra]
        return rows

    def _picks_relation(self, wanted: pd.DataFrame, key_types: list[str]) -> tuple[str, list | None]:
        """The chosen entries as a relation ``p``: a registered frame, or (PostgreSQL, read-only) arrays unnested
        in the query, each key cast to its column's own type."""
        if self.kind == "duckdb":
            self._duckdb().register("__fairviz_picks", wanted)
            return "__fairviz_picks p", None
        if self.kind == "spark":
            self.spark().createDataFrame(wanted).createOrReplaceTempView("__fairviz_picks")
            return "__fairviz_picks p", None
        arrays, unnested, selects = [], [], []
        for name in wanted.columns:
            values = wanted[name].to_numpy()
            if name.startswith("k"):
                whole = key_types[int(name[1:])].lower() in ("smallint", "integer", "bigint")
                arrays.append([None if pd.isna(v) else _key_text(v, whole) for v in values])
                unnested.append("%s::text[]")
                selects.append(f"CAST(u.{name} AS {key_types[int(name[1:])]}) AS {name}")
                continue
            kind = {"f": "float8", "i": "int8", "u": "int8", "b": "bool"}.get(values.dtype.kind, "text")
            arrays.append([None if pd.isna(v) else str(v) if kind == "text" else v.item() for v in values])
            unnested.append(f"%s::{kind}[]")
            selects.append(f"u.{name}")
        names = ", ".join(wanted.columns)
        return f"(SELECT {', '.join(selects)} FROM unnest({', '.join(unnested)}) AS u({names})) p", arrays

    def close(self) -> None:
        if self._scratch is not None:
            import shutil
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
        if self._con is not None:
            self._con.close()
            self._con = None


def _key_text(value, whole: bool) -> str:
    """A table key as text that PostgreSQL casts back to the column's type (an integer column read as float: '3')."""
    value = value.item() if hasattr(value, "item") else value
    if whole and isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def arrow_upload(raw: bytes, name: str, mapping: ColumnMapping):
    """An upload's bytes → an Arrow table of the mapped columns only (size checked from metadata first)."""
    import pyarrow as pa
    info = inspect_table(raw, name)
    mapped = spec_of(mapping).reduction.columns(mapping)
    wanted = [c for c in dict.fromkeys(mapped) if c in info.columns]
    info.check(wanted)
    fingerprint = hashlib.blake2b(raw, digest_size=16).hexdigest()
    if is_parquet(raw, name):
        import pyarrow.parquet as pq
        try:
            return pq.read_table(io.BytesIO(raw), columns=wanted), name, fingerprint
        except Exception as err:  # noqa: BLE001
            raise DataError(f"'{name}' could not be read as Parquet ({type(err).__name__}).") from None
    frame = decode_table(raw, name, info, wanted)
    frame.columns = [str(c).strip() for c in frame.columns]
    return pa.Table.from_pandas(frame, preserve_index=False), name, fingerprint


def reduce_path(path: str | Path, mapping: ColumnMapping | None = None, engine: Engine | None = None,
                **mapping_kwargs) -> SufficientStats:
    """Locate, guess the mapping when none is given, and reduce: the tests' entry point."""
    engine = engine or Engine()
    source = locate(path, engine.kind, engine.local)
    if mapping is None:
        mapping = guess_mapping(engine.preview(source))
        if mapping_kwargs:
            mapping = ColumnMapping(**{**mapping.__dict__, **mapping_kwargs})
    return engine.reduce(source, mapping)
