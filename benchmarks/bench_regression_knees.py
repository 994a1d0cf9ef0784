"""Regression knees, F_h and F_v: the row path against the engine's binned table read from a folder of Parquet files
(issue 34 item 3), and the residual section's time on each.

Run by hand: ``.venv/bin/python benchmarks/bench_regression_knees.py [ROWS] [price|gamma]`` (1,000,000 rows of
prices 100–200 with cents and a N(0, 5) error in two groups by default; ``gamma``: bench_engine_tasks.py's data).
Prints each pair's F_h, F_v and pooled knees and each group's knees for both paths, and the pooled knees' distance
in grid points (1/20,000).
"""
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fairviz.data import ColumnMapping  # noqa: E402
from fairviz.data.engine import Engine, reduce_path  # noqa: E402
from fairviz.data.validation import build_predictions  # noqa: E402
from fairviz.residuals import RDFParams  # noqa: E402
from fairviz.residuals.analysis import analyse  # noqa: E402

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
kind = sys.argv[2] if len(sys.argv) > 2 else "price"
rng = np.random.default_rng(0)
if kind == "price":
    price = np.round(rng.uniform(100, 200, rows), 2)
    grp = rng.choice(np.array(["a", "b"]), rows)
    model_a = price + rng.normal(0, 5, rows)
    frame = pd.DataFrame({"grp": grp, "price": price, "model_a": model_a})
else:
    group = rng.choice(np.array(["a", "b", "c"]), rows, p=[.5, .3, .2])
    y = rng.gamma(4.0, 2.5, rows)
    frame = pd.DataFrame({"grp": group, "price": y,
                          "model_a": y * 0.9 + 1.0 + rng.normal(0, 2.0, rows) + (group == "b") * 0.6})
mapping = ColumnMapping("price", "model_a", ("grp",), task="regression")
params = RDFParams(resamples=0)

def summary(audit):
    out = {}
    for p in audit.pairs:
        out[(p.group_i, p.group_j)] = dict(f_h=p.f_h, f_v=p.f_v, f_dist=p.f_dist, f_pattern=p.f_pattern,
                                           pooled=[(k.percentile, k.residual) for k in p.pooled_knees])
    for g in audit.groups:
        out[g.name] = [(k.percentile, k.residual) if k else None for k in (g.left_knee, g.right_knee)]
    return out

with tempfile.TemporaryDirectory() as tmp:
    folder = Path(tmp) / "parts"; folder.mkdir()
    half = rows // 2
    frame.iloc[:half].to_parquet(folder / "a.parquet"); frame.iloc[half:].to_parquet(folder / "b.parquet")
    pred_rows = build_predictions(frame, mapping)
    w, c = time.perf_counter(), time.process_time()
    a_rows = analyse(pred_rows, "grp", params)
    print(f"rows: residual section {time.perf_counter()-w:.2f} s wall, {time.process_time()-c:.2f} s CPU")
    w, c = time.perf_counter(), time.process_time()
    stats = reduce_path(folder, mapping, Engine())
    print(f"engine reduction {time.perf_counter()-w:.2f} s wall, {time.process_time()-c:.2f} s CPU; "
          f"entries {len(stats.table):,}; resolution {stats.resolution}")
    pred = stats.predictions()
    w, c = time.perf_counter(), time.process_time()
    a_eng = analyse(pred, "grp", params)
    print(f"engine: residual section {time.perf_counter()-w:.2f} s wall, {time.process_time()-c:.2f} s CPU")
    r, e = summary(a_rows), summary(a_eng)
    for k in r:
        print(k, "\n  rows  ", r[k], "\n  engine", e[k])
    grid = 20_000
    for k in r:
        if isinstance(k, tuple):
            print(k, "F_v %.4f vs %.4f (%.1f%%)" % (e[k]["f_v"], r[k]["f_v"], 100 * (e[k]["f_v"] / r[k]["f_v"] - 1)),
                  "F_h %.4f vs %.4f (%.1f%%)" % (e[k]["f_h"], r[k]["f_h"], 100 * (e[k]["f_h"] / r[k]["f_h"] - 1)),
                  "pooled knee steps", [round((a[0] - b[0]) * grid) for a, b in zip(e[k]["pooled"], r[k]["pooled"])])
