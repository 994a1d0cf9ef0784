"""Benchmark the slice search (issue 26): 20M rows × 6 attributes of 6 values (4,902 slices to depth 3) through
``fairviz slices`` on DuckDB, as a whole process — wall time, CPU time and peak RSS —, beside a brute-force pandas
``groupby`` per attribute combination on the same rows, with the same numbers asserted.

Then the pruned search (SliceLine's score and bound, one query per level): 5M rows × 12 attributes of 8 values
(298 attribute combinations, 116,960 slices to depth 3) by ``fairviz slices … --top-k 20``, and with ``--wide-full``
the full lattice on the same file, with the top slices by SliceLine's score compared.

Run by hand: ``.venv/bin/python benchmarks/bench_slices.py [--rows N] [--brute-rows N] [--wide-rows N] [--wide-full]``.
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


WIDE_ATTRIBUTES = [f"w{i}" for i in range(12)]
WIDE_VALUES = 8
TOP_K = 20


def make_wide_file(rows: int, path: Path, seed: int = 1) -> None:
    """12 attributes of 8 values; the false positive rate is raised where w0 = 0 and w1 = 0 and where w2 = 3
    (slices to find among 116,960)."""
    rng = np.random.default_rng(seed)
    writer = None
    for start in range(0, rows, 1_000_000):
        n = min(1_000_000, rows - start)
        codes = {a: rng.integers(0, WIDE_VALUES, n).astype(np.int8) for a in WIDE_ATTRIBUTES}
        columns = {a: pa.DictionaryArray.from_arrays(pa.array(codes[a]),
                                                     pa.array([f"{a}_{v}" for v in range(WIDE_VALUES)]))
                   for a in WIDE_ATTRIBUTES}
        p = rng.beta(0.7, 1.3, n)
        shift = np.where((codes["w0"] == 0) & (codes["w1"] == 0), 0.3, 0.0) + 0.1 * (codes["w2"] == 3)
        columns["label"] = pa.array(rng.binomial(1, p).astype(np.int8))
        columns["score"] = pa.array(np.clip(p + shift + rng.normal(0, 0.1, n), 0, 1))
        table = pa.table(columns)
        writer = writer or pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    writer.close()


def run_cli(path: Path, out: Path, attributes=None, top_k: int = 0) -> dict:
    """``fairviz slices`` in its own process: wall, CPU (user + system) and peak RSS of that process."""
    command = [sys.executable, "-m", "fairviz.cli", "slices", str(path), "--label", "label", "--score", "score",
               *[x for a in (attributes or ATTRIBUTES) for x in ("--group", a)], "--max-depth", "3",
               "--min-support", str(SUPPORT), "--metric", "fpr", "--threshold", "0.5", "--top-k", str(top_k),
               "--json", str(out)]
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


def top_by_score(result: dict, k: int) -> list[tuple[str, float]]:
    scored = [(s["slice"], s["score"]) for s in result["slices"] if s["score"] is not None and s["score"] > 0]
    return sorted(scored, key=lambda x: (-x[1], x[0]))[:k]


def wide(rows: int, full: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "wide.parquet"
        make_wide_file(rows, path)
        print(f"data: {rows:,} rows × {len(WIDE_ATTRIBUTES)} attributes of {WIDE_VALUES} values "
              f"({path.stat().st_size / 1e6:.0f} MB Parquet)")
        pruned = run_cli(path, Path(tmp) / "pruned.json", WIDE_ATTRIBUTES, TOP_K)
        result = json.loads((Path(tmp) / "pruned.json").read_text())
        search = result["search"]
        print(f"fairviz slices --top-k {TOP_K} (pruned, DuckDB, whole process): {pruned['wall']:.1f} s wall, "
              f"{pruned['cpu']:.1f} s CPU, peak RSS {pruned['rss_mb']:.0f} MB; {search['queries']} queries, "
              f"{search['grouping_sets']} of {search['lattice_grouping_sets']} attribute combinations, "
              f"{search['evaluated']:,} slices evaluated, {search['pruned']:,} pruned; {result['significant']:,} "
              f"significant (family {result['family']:,})")
        if full:
            whole = run_cli(path, Path(tmp) / "full.json", WIDE_ATTRIBUTES, 0)
            every = json.loads((Path(tmp) / "full.json").read_text())
            print(f"fairviz slices, full lattice (one query): {whole['wall']:.1f} s wall, {whole['cpu']:.1f} s CPU, "
                  f"peak RSS {whole['rss_mb']:.0f} MB; {len(every['slices']):,} slices")
            same = [name for name, _ in top_by_score(result, TOP_K)] == [name for name, _ in
                                                                       top_by_score(every, TOP_K)]
            assert same, "the pruned search's top slices differ from the full lattice's"
            print(f"same top {len(top_by_score(every, TOP_K))} slices by SliceLine's score (positive scores)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--brute-rows", type=int, default=None)
    parser.add_argument("--wide-rows", type=int, default=5_000_000)
    parser.add_argument("--wide-full", action="store_true", help="also the full lattice of the 12 attributes (slow)")
    parser.add_argument("--wide-only", action="store_true", help="only the 12-attribute case")
    args = parser.parse_args()
    if not args.wide_only:
        six(args)
    wide(args.wide_rows, args.wide_full)


def six(args) -> None:
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
