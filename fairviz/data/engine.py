"""One reduction for every classification audit: counts per (group values…, label, score value), on an engine.

Every classification audit (residual distribution, calibration, parity, sample-size significance) depends on the
rows only through how many rows share a (group, label, score) cell, so a file is reduced once to that table and the
audits read the table. The reduction is one SQL text (``reduction_sql``) that both engines run unchanged:

- DuckDB, embedded (the default): reads CSV, Parquet and folders/globs of Parquet out of core (files larger than
  memory), and uploads already in memory as Arrow tables;
- Apache Spark (``pyspark``; ``local[2]`` unless a master URL is given) for data that outgrows one machine — only
  the table travels to the driver: at most (groups × 2 labels × ``DEFAULT_CELLS`` + 1) rows, whatever the input size.

Scores are cut into ``cells`` equal cells of [0, 1] (plus a cell for a score of exactly 1). When every cell of the
table holds a single distinct score (COMPAS's 10 deciles, any few-valued score), the table *is* the exact count per
distinct score and ``resolution`` is 0: the audits then equal the row-level ones (inputs of at most ``EXACT_ROWS``
rows are always reduced exactly, by a second pass with one cell per distinct score). Otherwise each cell carries the
mean of its scores (sums, means and ECE bins stay exact; quantiles move by less than one cell width) and
``resolution`` is the cell width, reported with the results. Values outside [0, 1], NaN and missing values keep
their own cells so that validation names them as the row-level path does.
"""
from __future__ import annotations

import glob
import hashlib
import io
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fairviz.data.limits import GroupLimits
from fairviz.data.model import (
    ColumnMapping,
    DataError,
    Predictions,
    _check_columns,
    _is_parquet,
    _parse,
    build_predictions,
    guess_mapping,
    inspect_table,
    read_table,
)

DEFAULT_CELLS = 300_000         # score cells on [0, 1]: width 3.3e-6 (multiples of 1/10, 1/15, 1/30 are cell edges)
EXACT_ROWS = 200_000            # inputs up to this many rows are always reduced exactly (the table has ≤ that many rows)
ENGINES = ("duckdb", "spark")
DEFAULT_SPARK_MASTER = "local[2]"
COUNT = "__fairviz_n"           # the count column of the table
CELL_KEY = "__fairviz_cell"
PREVIEW_ROWS = 10_000
_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT",
            "FLOAT", "DOUBLE", "REAL", "DECIMAL", "INT", "LONG", "SHORT", "BYTE")


@dataclass(frozen=True)
class SufficientStats:
    """Counts per (group values, label, score cell): everything a classification audit needs from the rows."""

    table: pd.DataFrame         # mapped group columns, label, score (float), COUNT (int64); one row per cell
    mapping: ColumnMapping
    resolution: float           # 0: exact counts per distinct score; else the width of the score cells
    rows: int                   # rows in the input
    source: str
    fingerprint: str
    engine: str = "duckdb"
    cell_key: np.ndarray | None = None   # per table row: its score cell in the query (FLOOR(s·cells), or s itself)
    key_cells: int = DEFAULT_CELLS       # the cells of that query (0: a cell per distinct score)

    @property
    def exact(self) -> bool:
        return self.resolution == 0

    def to_dict(self) -> dict:
        return {"engine": self.engine, "mode": "exact" if self.exact else "binned", "resolution": self.resolution,
                "cells": int(len(self.table)), "rows": int(self.rows)}

    def predictions(self, limits: GroupLimits | None = None) -> Predictions:
        """Validated, weighted predictions: one entry per cell, its count as the weight (messages count rows)."""
        columns = [c for c in dict.fromkeys((*self.mapping.groups, self.mapping.label, self.mapping.score))]
        pred = build_predictions(self.table[columns], _core_mapping(self.mapping), source=self.source,
                                 file_fingerprint=self.fingerprint, weights=self.table[COUNT].to_numpy(),
                                 limits=limits)
        if not self.exact:
            pred = pred.with_note(f"Scores were reduced to cells of width {self.resolution:.2g} ({len(self.table):,} "
                                  f"cells for {self.rows:,} rows); reported numbers move by less than 1e-4.",
                                  resolution=self.resolution)
        return pred


def _core_mapping(mapping: ColumnMapping) -> ColumnMapping:
    """The mapping without the row-level roles (text, features, id): the table does not carry them."""
    return ColumnMapping(label=mapping.label, score=mapping.score, groups=mapping.groups,
                         positive_label=mapping.positive_label, intersect=mapping.intersect)


# ----------------------------------------------------------------------------------------------- the SQL

def _q(name: str) -> str:
    """A quoted identifier. Both engines read double quotes (Spark with spark.sql.ansi.doubleQuotedIdentifiers)."""
    return '"' + str(name).replace('"', '""') + '"'


def reduction_sql(source: str, mapping: ColumnMapping, numeric_score: bool, cells: int = DEFAULT_CELLS) -> str:
    """The reduction, in SQL that DuckDB and Spark SQL both run: one row per (groups, label, score cell).

    Output columns: g0…g{k-1}, y, cell, odd (NaN, ±inf or a non-numeric score as is; −1 / 2 for finite scores
    below 0 / above 1),
    n, lo, hi, total (min, max and sum of the scores in the cell). ``cells`` = 0: one cell per distinct score."""
    keys = [f"{_q(g)} AS g{k}" for k, g in enumerate(mapping.groups)]
    score = f"CAST({_q(mapping.score)} AS DOUBLE)" if numeric_score else _q(mapping.score)
    inner = f"SELECT {', '.join(keys)}, {_q(mapping.label)} AS y, {score} AS s FROM {source}"
    groups = [f"g{k}" for k in range(len(mapping.groups))] + ["y"]
    if not numeric_score:
        return (f"SELECT {', '.join(groups)}, NULL AS cell, s AS odd, COUNT(*) AS n, NULL AS lo, NULL AS hi, "
                f"NULL AS total FROM ({inner}) t GROUP BY {', '.join(groups)}, s")
    inside = "s >= 0 AND s <= 1"
    cell = f"CASE WHEN {inside} THEN FLOOR(s * {int(cells)}) END" if cells else f"CASE WHEN {inside} THEN s END"
    # outside [0, 1]: NaN and ±inf keep their value (≤ 3 cells); finite values below 0 / above 1 share one cell per
    # side (code -1 / 2) with their count, min and max — all that validation reports — so the table stays bounded
    odd = (f"CASE WHEN s IS NULL OR ({inside}) THEN NULL WHEN isnan(s) THEN s WHEN s - s <> 0 THEN s "
           f"WHEN s > 1 THEN 2.0 ELSE -1.0 END")
    return (f"SELECT {', '.join(groups)}, {cell} AS cell, {odd} AS odd, COUNT(*) AS n, "
            f"MIN(s) AS lo, MAX(s) AS hi, SUM(s) AS total "
            f"FROM ({inner}) t GROUP BY {', '.join(groups)}, {cell}, {odd}")


def _single_valued(cells: pd.DataFrame) -> bool:
    """Every score cell inside [0, 1] holds one distinct score."""
    lo, hi = (pd.to_numeric(cells[c], errors="coerce").to_numpy(dtype=float) for c in ("lo", "hi"))
    return bool(np.all((lo == hi)[cells["cell"].notna().to_numpy()]))


def stats_from_cells(cells: pd.DataFrame, mapping: ColumnMapping, source: str, fingerprint: str, engine: str,
                     numeric: bool = True, resolution_cells: int = DEFAULT_CELLS,
                     key_cells: int = DEFAULT_CELLS) -> SufficientStats:
    """The engine's output (see ``reduction_sql``) → the table, exact when every cell holds one distinct score."""
    cells = cells.reset_index(drop=True)
    n = cells["n"].to_numpy(dtype=np.int64)
    rows = int(n.sum())
    if rows == 0:
        raise DataError(f"'{source}' is empty: there are no rows to analyse.")
    exact = True
    if numeric:
        lo, hi, total = (pd.to_numeric(cells[c], errors="coerce").to_numpy(dtype=float) for c in ("lo", "hi", "total"))
        odd = pd.to_numeric(cells["odd"], errors="coerce").to_numpy(dtype=float)
        in_range = cells["cell"].notna().to_numpy()
        single = lo == hi
        exact = bool(single[in_range].all())
        with np.errstate(invalid="ignore", divide="ignore"):
            value = np.where(single, lo, total / n)        # one distinct score: itself; else the cell's mean
        outside = np.isin(odd, (-1.0, 2.0))                # finite scores outside [0, 1]: their min and max
        value = np.where(in_range, value, np.where(outside, lo, odd))
        split = outside & (n > 1) & ~single                # two entries: (min, n − 1 rows) and (max, 1 row)
        if split.any():
            extra = cells[split].copy()
            cells, value, n = pd.concat([cells, extra], ignore_index=True), np.concatenate([value, hi[split]]), \
                np.concatenate([np.where(split, n - 1, n), np.ones(int(split.sum()), dtype=np.int64)])
        score = pd.Series(value, dtype=float)
    else:
        score = cells["odd"]                              # validation names the non-numeric values
    table = pd.DataFrame({g: cells[f"g{k}"] for k, g in enumerate(mapping.groups)})
    table[mapping.label] = cells["y"]
    table[mapping.score] = score
    table[COUNT] = n
    table[CELL_KEY] = pd.to_numeric(cells["cell"], errors="coerce").to_numpy(dtype=float)
    keys = [*mapping.groups, mapping.label, mapping.score]
    table = table.sort_values(keys, kind="stable", na_position="last",
                              key=lambda s: s.astype(str) if s.dtype == object else s).reset_index(drop=True)
    cell_key = table.pop(CELL_KEY).to_numpy()
    return SufficientStats(table, mapping, 0.0 if exact else 1.0 / resolution_cells, rows, source, fingerprint,
                           engine, cell_key, key_cells)


# ----------------------------------------------------------------------------------------------- sources

@dataclass(frozen=True)
class Source:
    """A CSV file, a Parquet file, or a set of Parquet files (a folder or a glob)."""

    name: str
    format: str                 # "csv" or "parquet"
    files: tuple[str, ...]

    @property
    def fingerprint(self) -> str:
        """Names, sizes and modification times: a cache key that never reads the data."""
        parts = [f"{f}:{os.path.getsize(f)}:{os.path.getmtime(f)}" for f in self.files]
        return hashlib.blake2b("|".join(parts).encode(), digest_size=16).hexdigest()


def resolve(path: str | Path) -> Source:
    text = str(path)
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
            if b"\x00" in handle.read(4096):
                raise DataError(f"'{p.name}' looks like a binary file, not CSV or Parquet.")
    else:
        raise DataError(f"'{text}' mixes Parquet with other files; point at Parquet files only (or one CSV).")
    return Source(p.name or text, fmt, tuple(files))


def _magic(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(4)


# ----------------------------------------------------------------------------------------------- engines

class Engine:
    """Runs the reduction. ``kind`` is 'duckdb' (embedded; ``memory_limit`` such as '200MB' spills beyond it) or
    'spark' (``master`` defaults to local[2])."""

    def __init__(self, kind: str = "duckdb", master: str | None = None, memory_limit: str | None = None,
                 threads: int | None = None, cells: int = DEFAULT_CELLS):
        if kind not in ENGINES:
            raise DataError(f"Unknown engine '{kind}': choose one of {', '.join(ENGINES)}.")
        self.kind, self.master, self.memory_limit, self.threads, self.cells = kind, master, memory_limit, threads, cells
        self._con = None
        self._spark = None

    # --- the two engines' plumbing: register a source as the view "src", list its columns, run SQL → pandas
    def _duckdb(self):
        if self._con is None:
            import duckdb
            config = {}
            if self.memory_limit:
                config["memory_limit"] = self.memory_limit
            if self.threads:
                config["threads"] = int(self.threads)
            self._con = duckdb.connect(config=config)
            self._con.execute("SET enable_progress_bar = false")   # long reductions would draw into the CLI's output
        return self._con

    def spark(self):
        if self._spark is None:
            try:
                from pyspark.sql import SparkSession
            except ImportError:
                raise DataError("--engine spark needs pyspark (pip install pyspark==4.3.0) and Java 17.") from None
            import shutil
            if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
                raise DataError("--engine spark needs Java (Debian: apt-get install openjdk-17-jre-headless).")
            builder = (SparkSession.builder.master(self.master or DEFAULT_SPARK_MASTER).appName("fairviz")
                       .config("spark.sql.ansi.enabled", "true")
                       .config("spark.sql.ansi.doubleQuotedIdentifiers", "true")
                       .config("spark.sql.execution.arrow.pyspark.enabled", "true")
                       .config("spark.ui.enabled", "false")
                       .config("spark.ui.showConsoleProgress", "false")
                       .config("spark.sql.shuffle.partitions", "8"))
            self._spark = builder.getOrCreate()
            self._spark.sparkContext.setLogLevel("ERROR")
        return self._spark

    def _register(self, source: Source | object) -> None:
        if self.kind == "duckdb":
            con = self._duckdb()
            if isinstance(source, Source):
                files = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in source.files) + "]"
                reader = f"read_parquet({files})" if source.format == "parquet" else \
                    f"read_csv({files}, header = true, auto_type_candidates = ['BIGINT', 'DOUBLE', 'VARCHAR'])"
                con.execute(f"CREATE OR REPLACE VIEW src AS SELECT * FROM {reader}")
            else:
                con.register("src_arrow", source)
                con.execute("CREATE OR REPLACE VIEW src AS SELECT * FROM src_arrow")
        else:
            spark = self.spark()
            if isinstance(source, Source):
                reader = spark.read.parquet(*source.files) if source.format == "parquet" else \
                    spark.read.csv(list(source.files), header=True, inferSchema=True)
            else:
                reader = spark.createDataFrame(source.to_pandas())
            reader.createOrReplaceTempView("src")

    def _columns(self) -> dict[str, str]:
        """Column name → type name (upper case) of the view "src"."""
        if self.kind == "duckdb":
            rows = self._duckdb().execute("DESCRIBE SELECT * FROM src").fetchall()
            return {r[0]: str(r[1]).upper() for r in rows}
        return {f.name: f.dataType.simpleString().upper() for f in self.spark().table("src").schema.fields}

    def sql(self, text: str) -> pd.DataFrame:
        try:
            if self.kind == "duckdb":
                return self._duckdb().execute(text).df()
            return self.spark().sql(text).toArrow().to_pandas()      # the table only: a few MB at most
        except DataError:
            raise
        except Exception as err:  # noqa: BLE001 - engines raise their own error types for bad files
            first = str(err).strip().splitlines()[0][:200] if str(err).strip() else type(err).__name__
            raise DataError(f"The {self.kind} engine could not read the data: {first}") from None

    # --- public
    def preview(self, source: Source, rows: int = PREVIEW_ROWS) -> pd.DataFrame:
        """The first rows, every column: enough to guess the column roles."""
        self._register(source)
        frame = self.sql(f"SELECT * FROM src LIMIT {int(rows)}")
        frame.columns = [str(c).strip() for c in frame.columns]
        if frame.empty:
            raise DataError(f"'{source.name}' has a header but no data rows.")
        return frame

    def reduce(self, source: Source | bytes, mapping: ColumnMapping, name: str | None = None) -> SufficientStats:
        """The sufficient statistics of ``source`` (a resolved file set, or an upload's bytes) under ``mapping``."""
        if isinstance(source, (bytes, bytearray)):
            table, name, fingerprint = arrow_upload(bytes(source), name or "upload", mapping)
            self._register(table)
        else:
            name, fingerprint = name or source.name, source.fingerprint
            self._register(source)
        types = self._columns()
        _check_columns(pd.DataFrame(columns=list(types)), _core_mapping(mapping))
        score_type = types[mapping.score]
        numeric = score_type.startswith(_NUMERIC) and not score_type.startswith("BOOL")
        key_cells = self.cells
        cells = self.sql(reduction_sql("src", mapping, numeric, key_cells))
        if numeric and int(cells["n"].sum()) <= EXACT_ROWS and not _single_valued(cells):
            key_cells = 0
            cells = self.sql(reduction_sql("src", mapping, numeric, 0))          # small input: exact, always
        digest = hashlib.blake2b(f"{fingerprint}|{self.cells}".encode(), digest_size=16).hexdigest()
        return stats_from_cells(cells, mapping, name, digest, self.kind, numeric, self.cells, key_cells)

    def rows_of_entries(self, source: Source | bytes, stats: SufficientStats, picks: pd.DataFrame) -> pd.DataFrame:
        """The input rows behind chosen rows (entries) of ``stats.table``, with every column of the file.

        ``picks``: ``entry`` (a row of the table), ``skip`` and ``take`` (which of the entry's rows, in score order),
        and any columns to attach to those rows. A row-level need of a reduced audit (the diagnostic set D* with the
        file's own columns) is this one filtered query on the same engine: a file set is read by the engine, out of
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
            self._register(source)
        columns = list(self._columns())
        self._register_frame("picks", wanted)
        score = f"CAST({_q(mapping.score)} AS DOUBLE)"
        cell = f"FLOOR({score} * {int(stats.key_cells)})" if stats.key_cells else score
        partition = ", ".join([_q(c) for c in keys] + [cell])
        order = ", ".join([score] + [_q(c) for c in columns if c != mapping.score])   # ties: any fixed order
        ranked = (f"SELECT *, {cell} AS __fv_cell, ROW_NUMBER() OVER (PARTITION BY {partition} ORDER BY {order}) "
                  f"AS __fv_rank FROM src")
        join = " AND ".join([f"r.{_q(c)} = p.k{i}" for i, c in enumerate(keys)] + ["r.__fv_cell = p.cell"])
        picked = ", ".join([f"r.{_q(c)}" for c in columns] + [f"p.x{i} AS {_q(c)}" for i, c in enumerate(extra)])
        return self.sql(f"SELECT {picked} FROM ({ranked}) r JOIN picks p ON {join} "
                        f"WHERE r.__fv_rank > p.skip AND r.__fv_rank <= p.skip + p.take")

    def _register_frame(self, name: str, frame: pd.DataFrame) -> None:
        if self.kind == "duckdb":
            self._duckdb().register(name, frame)
        else:
            self.spark().createDataFrame(frame).createOrReplaceTempView(name)

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None


def arrow_upload(raw: bytes, name: str, mapping: ColumnMapping):
    """An upload's bytes → an Arrow table of the mapped columns only (size checked from metadata first)."""
    import pyarrow as pa
    info = inspect_table(raw, name)
    wanted = [c for c in dict.fromkeys((*mapping.groups, mapping.label, mapping.score)) if c in info.columns]
    info.check(wanted)
    fingerprint = hashlib.blake2b(raw, digest_size=16).hexdigest()
    if _is_parquet(raw, name):
        import pyarrow.parquet as pq
        try:
            return pq.read_table(io.BytesIO(raw), columns=wanted), name, fingerprint
        except Exception as err:  # noqa: BLE001
            raise DataError(f"'{name}' could not be read as Parquet ({type(err).__name__}).") from None
    frame = _parse(raw, name, info, wanted)
    frame.columns = [str(c).strip() for c in frame.columns]
    return pa.Table.from_pandas(frame, preserve_index=False), name, fingerprint


def reduce_path(path: str | Path, mapping: ColumnMapping | None = None, engine: Engine | None = None,
                **mapping_kwargs) -> SufficientStats:
    """Resolve, guess the mapping when none is given, and reduce: the CLI's and the tests' entry point."""
    engine = engine or Engine()
    source = resolve(path)
    if mapping is None:
        mapping = guess_mapping(engine.preview(source))
        if mapping_kwargs:
            mapping = ColumnMapping(**{**mapping.__dict__, **mapping_kwargs})
    return engine.reduce(source, mapping)
