"""Benchmark the reduction inside PostgreSQL against DuckDB on the same rows: only the table crosses the wire.

Run by hand (needs Debian's PostgreSQL server binaries and psycopg):
``PYTHONPATH=. .venv/bin/python benchmarks/bench_postgres.py [--rows 10000000]``.
Starts a throwaway server on 127.0.0.1, loads N rows (three groups, continuous scores: the largest table the
reduction can return, up to 3 × 2 × 300,001 cells) with COPY, writes the same rows to Parquet, then in a fresh child
process each reduces them and builds the weighted predictions, printing wall time, the client's CPU time (DuckDB's
work is all in the client), the server's CPU time (PostgreSQL's work), the client's peak RSS and the rows fetched; the fetched rows are asserted to equal the table's cells (nothing else came back), and the
two tables are asserted equal.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.data.servers import postgres_server  # noqa: E402

CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
from fairviz.data import ColumnMapping
from fairviz.data.engine import Engine
from fairviz.data.sources import Files, Table
mapping = ColumnMapping("y", "score", ("group",))
start, cpu = time.perf_counter(), time.process_time()
engine = Engine({kind!r}, dsn={dsn!r}) if {kind!r} == "postgres" else Engine()
source = Table("scored") if {kind!r} == "postgres" else Files("scored.parquet", "parquet", ({parquet!r},))
stats = engine.reduce(source, mapping)
pred = stats.predictions()
wall, cpu = time.perf_counter() - start, time.process_time() - cpu
stats.table.to_parquet({out!r})
print(json.dumps({{"wall": wall, "cpu": cpu, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "fetched": engine.fetched_rows, "cells": len(stats.table), "rows": stats.rows,
                  "exact": stats.exact}}))
"""


def make_table(rows: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    codes = rng.choice(3, rows, p=[0.5, 0.3, 0.2])
    p = rng.beta(2, 3, rows)
    y = rng.binomial(1, np.clip(p + (codes == 1) * 0.05, 0, 1)).astype(np.int64)
    group = pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(["a", "b", "c"]))
    return pa.table({"y": y, "score": p, "group": group.cast(pa.string())})


def load(dsn: str, table: pa.Table, chunk: int = 1_000_000) -> None:
    import psycopg
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute('CREATE TABLE scored (y bigint, score double precision, "group" text)')
        with con.cursor().copy("COPY scored FROM STDIN WITH (FORMAT csv)") as copy:
            for start in range(0, table.num_rows, chunk):
                buffer = io.BytesIO()
                pacsv.write_csv(table.slice(start, chunk), buffer, pacsv.WriteOptions(include_header=False))
                copy.write(buffer.getvalue())
        con.execute("ANALYZE scored")


def server_cpu_seconds(dsn: str) -> float:
    """CPU time of the server so far: the postmaster's own and that of its exited children (the backends and parallel
    workers that ran the reduction), read from /proc (the server runs on this machine)."""
    import psycopg
    with psycopg.connect(dsn) as con:
        pid = con.execute("SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'").fetchone()[0]
    postmaster = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
    fields = Path(f"/proc/{postmaster}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def child(kind: str, dsn: str, parquet: str, out: str) -> dict:
    code = CHILD.format(root=str(ROOT), kind=kind, dsn=dsn, parquet=parquet, out=out)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=3600)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    args = parser.parse_args()
    if args.rows <= 200_000:                # EXACT_ROWS: smaller inputs take a second, exact pass (two tables fetched)
        parser.error("--rows must exceed 200,000, where the reduction is one pass")
    folder = Path(tempfile.mkdtemp(prefix="fairviz-bench-pg-"))
    table = make_table(args.rows)
    parquet = str(folder / "scored.parquet")
    pq.write_table(table, parquet, row_group_size=1_000_000)
    with postgres_server() as dsn:
        start = time.perf_counter()
        load(dsn, table)
        print(f"loaded {args.rows:,} rows into PostgreSQL in {time.perf_counter() - start:.1f} s "
              f"(Parquet {os.path.getsize(parquet) / 1e6:.0f} MB)")
        del table
        before = server_cpu_seconds(dsn)
        results = {"postgres": child("postgres", dsn, parquet, str(folder / "postgres.parquet"))}
        results["postgres"]["server_cpu"] = server_cpu_seconds(dsn) - before
        results["duckdb"] = child("duckdb", dsn, parquet, str(folder / "duckdb.parquet"))
        results["duckdb"]["server_cpu"] = None
    print(f"{'engine':<10} {'wall s':>8} {'client CPU s':>13} {'server CPU s':>13} {'client peak RSS MB':>19} "
          f"{'rows fetched':>13} {'cells':>9}")
    for kind, r in results.items():
        server = "—" if r["server_cpu"] is None else f"{r['server_cpu']:.1f}"
        print(f"{kind:<10} {r['wall']:>8.1f} {r['cpu']:>13.1f} {server:>13} {r['rss_mb']:>19.0f} {r['fetched']:>13,} "
              f"{r['cells']:>9,}")
        assert r["rows"] == args.rows
    pg = results["postgres"]
    assert pg["fetched"] == pg["cells"], "only the reduced table may cross the wire"
    import pandas as pd
    a, b = (pd.read_parquet(folder / f"{kind}.parquet") for kind in ("postgres", "duckdb"))
    pd.testing.assert_frame_equal(a, b, check_dtype=False, rtol=1e-12)
    shutil.rmtree(folder, ignore_errors=True)
    print("the two tables are equal; PostgreSQL sent only its table's rows "
          f"({pg['fetched']:,} of {args.rows:,}: {pg['fetched'] / args.rows:.1%})")


if __name__ == "__main__":
    main()
