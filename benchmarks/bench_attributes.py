"""Every attribute in one audit (issue 26): what one, then three attributes cost, and Home's "Other attributes".

Run by hand (not a test): ``OMP_NUM_THREADS=1 python benchmarks/bench_attributes.py [--rows 1000000]``. Writes a
Parquet file of ``rows`` predictions (race: 5 groups, sex: 2, age: 4; scores to 6 decimals, so the engine keeps
~920k entries at 1M rows), then times in process:
  - ``fairviz audit --group race`` and ``--group race --group sex --group age`` (the full audit, default settings;
    wall time; peak RSS is the process's, so run ``/usr/bin/time -v`` on the CLI for each alone to compare it);
  - Home's "Other attributes": the parity-only quick audit of one other attribute, at τ = 0.5 and 0.51;
  - Home's top slices: the slice search at depth 2 over the three attributes, at τ = 0.5 and 0.51.
Measured on the 2-core machine (1M rows, CLI, each alone): one attribute 12.8–13.1 s and 1.07–1.09 GB, three
attributes 36.6 s (34.9 s with all rows' calibration reused, which main does not do) and 1.50 GB; quick audit 0.024–0.031 s an attribute; slice search 0.27–0.38 s.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def write_file(path: Path, rows: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    race = np.array(["White", "Black", "Hispanic", "Asian", "Other"])[rng.choice(5, rows, p=[.5, .2, .15, .1, .05])]
    sex = np.array(["F", "M"])[rng.choice(2, rows)]
    age = np.array(["18-25", "26-40", "41-60", "60+"])[rng.choice(4, rows, p=[.2, .35, .3, .15])]
    p = rng.beta(0.7, 1.3, rows)
    y = rng.binomial(1, p)
    score = np.clip(p + np.where((race == "Black") & (sex == "M"), 0.08, 0.0), 0, 1).round(6)
    pd.DataFrame({"y": y, "score": score, "race": race, "sex": sex, "age": age}).to_parquet(path, index=False)


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    from fairviz.cli.main import main as cli
    from fairviz.data import ColumnMapping
    from fairviz.data.engine import Engine
    from fairviz.data.sources import locate
    from fairviz.report.attributes import slice_search
    from fairviz.report.plan import AuditParams, audit as run_audit

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "preds.parquet"
        write_file(path, args.rows)
        common = ["audit", str(path), "--label", "y", "--score", "score", "--json", str(Path(tmp) / "a.json")]
        one, _ = timed(lambda: cli([*common, "--group", "race"]))
        three, _ = timed(lambda: cli([*common, "--group", "race", "--group", "sex", "--group", "age"]))
        engine = Engine("duckdb")
        stats = engine.reduce(locate(str(path), "duckdb", engine.local), ColumnMapping("y", "score",
                                                                                        ("race", "sex", "age")))
        pred = stats.predictions()
        rows = []
        for tau in (0.5, 0.51):
            quick, _ = timed(lambda: run_audit(pred, AuditParams(attribute="sex", threshold=tau,
                                                                 sections=("parity",))))
            search, _ = timed(lambda: slice_search(pred, 2, 100, tau))
            rows.append((tau, quick, search))
    print(f"{args.rows:,} rows, {len(stats.table):,} engine entries")
    print(f"fairviz audit, one attribute:    {one:6.2f} s")
    print(f"fairviz audit, three attributes: {three:6.2f} s ({three / one:.2f}×)")
    for tau, quick, search in rows:
        print(f"τ = {tau}: other attribute's quick audit {quick * 1000:6.1f} ms, slice search (depth 2) "
              f"{search * 1000:6.1f} ms")


if __name__ == "__main__":
    main()
