"""Benchmark the slice search (issue 26): 20M rows × 6 attributes of 6 values (4,902 slices to depth 3) through
``fairviz slices`` on DuckDB, as a whole process — wall time, CPU time and peak RSS —, beside a brute-force pandas
``groupby`` per attribute combination on the same rows, with the same numbers asserted.

Run by hand: ``.venv/bin/python benchmarks/bench_slices.py [--rows N] [--brute-rows N]``.
Targets: whole process ≤ 15 s on 2 cores (run it under ``taskset -c 0,1`` on a larger machine), peak RSS ≤ 2 GB. ``--brute-rows`` (default: all rows) runs the brute
force (and a second ``fairviz slices`` to compare with) on the first N rows only, when all of them would take too
long in pandas.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
ATTRIBUTES = [f"a{i}" for i in range(6)]
VALUES = 6
SUPPORT = 100


def make_file(rows: int, path: Path, seed: int = 0) -> None:
    """Written in row groups of 2M so the generator never holds all rows twice."""
    rng = np.random.default_rng(seed)
    writer = None
    for start in range(0, rows, 2_000_000):
        n = min(2_000_000, rows - start)
        columns = {a: pa.DictionaryArray.from_arrays(pa.array(rng.integers(0, VALUES, n).astype(np.int8)),
                                                     pa.array([f"{a}_{v}" for v in range(VALUES)]))
                   for a in ATTRIBUTES}
        p = rng.beta(0.7, 1.3, n)
        columns["label"] = pa.array(rng.binomial(1, p).astype(np.int8))
        columns["score"] = pa.array(np.clip(p + rng.normal(0, 0.1, n), 0, 1))
        table = pa.table(columns)
        writer = writer or pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    writer.close()


def run_cli(path: Path, out: Path) -> dict:
    """``fairviz slices`` in its own process: wall, CPU (user + system) and peak RSS of that process."""
    command = [sys.executable, "-m", "fairviz.cli", "slices", str(path), "--label", "label", "--score", "score",
               *[x for a in ATTRIBUTES for x in ("--group", a)], "--max-depth", "3", "--min-support", str(SUPPORT),
               "--metric", "fpr", "--threshold", "0.5", "--json", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"fairviz slices failed: {process.stderr.read().decode()}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}


def brute_force(path: Path, rows: int) -> pd.DataFrame:
    """Every slice's counts by a pandas groupby over the rows, one per attribute combination."""
    frame = pq.read_table(path).slice(0, rows).to_pandas()
    decision = frame["score"].to_numpy() >= 0.5
    y = frame["label"].to_numpy() == 1
    counts = pd.DataFrame({a: frame[a] for a in ATTRIBUTES})
    counts["n"] = 1
    counts["fp"], counts["tn"] = (~y & decision).astype(int), (~y & ~decision).astype(int)
    counts["fn"], counts["tp"] = (y & ~decision).astype(int), (y & decision).astype(int)
    parts = []
    for depth in (1, 2, 3):
        for combo in combinations(ATTRIBUTES, depth):
            grouped = counts.groupby(list(combo), observed=True)[["n", "tp", "fp", "fn", "tn"]].sum().reset_index()
            if depth > 1:
                grouped = grouped[grouped["n"] >= SUPPORT]
            grouped["slice"] = grouped[list(combo)].apply(
                lambda r: " ∧ ".join(f"{a}={r[a]}" for a in combo), axis=1)
            parts.append(grouped[["slice", "n", "tp", "fp", "fn", "tn"]])
    return pd.concat(parts, ignore_index=True).set_index("slice")


def check(result: dict, brute: pd.DataFrame) -> None:
    ours = pd.DataFrame(result["slices"]).set_index("slice").sort_index()
    brute = brute.sort_index()
    assert list(ours.index) == list(brute.index), "the slices differ"
    assert (ours["n"].to_numpy() == brute["n"].to_numpy()).all(), "sizes differ"
    for name, expected in (("fpr", brute["fp"] / (brute["fp"] + brute["tn"])),
                           ("fnr", brute["fn"] / (brute["fn"] + brute["tp"])),
                           ("error_rate", (brute["fp"] + brute["fn"]) / brute["n"]),
                           ("selection_rate", (brute["tp"] + brute["fp"]) / brute["n"])):
        np.testing.assert_allclose(ours[name].to_numpy(float), expected.to_numpy(float), rtol=0, atol=1e-12)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--brute-rows", type=int, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "slices.parquet"
        start = time.perf_counter()
        make_file(args.rows, path)
        print(f"data: {args.rows:,} rows × {len(ATTRIBUTES)} attributes of {VALUES} values "
              f"({path.stat().st_size / 1e6:.0f} MB Parquet, written in {time.perf_counter() - start:.1f} s)")
        ours = run_cli(path, Path(tmp) / "out.json")
        result = json.loads((Path(tmp) / "out.json").read_text())
        print(f"fairviz slices (DuckDB, whole process): {ours['wall']:.1f} s wall, {ours['cpu']:.1f} s CPU, "
              f"peak RSS {ours['rss_mb']:.0f} MB; {len(result['slices']):,} slices, {result['tested']:,} tested, "
              f"{result['significant']:,} significant")
        brute_rows = min(args.brute_rows or args.rows, args.rows)
        if brute_rows < args.rows:
            small = Path(tmp) / "first.parquet"
            pq.write_table(pq.read_table(path).slice(0, brute_rows), small)
            run_cli(small, Path(tmp) / "first.json")
            result = json.loads((Path(tmp) / "first.json").read_text())
        before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        brute = brute_force(path, brute_rows)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        print(f"brute-force pandas groupby per attribute combination on {brute_rows:,} rows: {wall:.1f} s wall, "
              f"{cpu:.1f} s CPU")
        check(result, brute)
        print(f"same numbers: {len(brute):,} slices' sizes equal, FPR, FNR, error and selection rates within 1e-12")
        print(f"targets: whole process ≤ 15 s ({'met' if ours['wall'] <= 15 else 'MISSED'}), peak RSS ≤ 2 GB "
              f"({'met' if ours['rss_mb'] <= 2048 else 'MISSED'})")


if __name__ == "__main__":
    main()
