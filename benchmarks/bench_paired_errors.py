"""Two regression models compared on the same rows (``fairviz.compare.paired_errors``) against one model's Group
parity analysis of the same data (the reference, in this process): the comparison is one pass of paired t-tests,
the parity analysis resamples.

Run by hand (not a test): ``OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_paired_errors.py [--rows N]``.
Prints wall and CPU time of each, fastest of three, and the ratio.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from fairviz.compare import compare_errors  # noqa: E402
from fairviz.data import ColumnMapping, build_predictions  # noqa: E402
from fairviz.data.model import ScoreColumn  # noqa: E402
from fairviz.parity.error_parity import RegressionParityParams, analyse_regression  # noqa: E402
from fairviz.data.view import View  # noqa: E402


def data(rows: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    group = rng.choice(["g1", "g2", "g3", "g4", "g5"], rows, p=[.4, .25, .15, .12, .08])
    target = rng.normal(50, 10, rows)
    frame = pd.DataFrame({"target": target, "a": target + rng.normal(0, 5, rows) + (group == "g2") * 1.0,
                          "b": target + rng.normal(0, 4, rows), "group": group})
    mapping = ColumnMapping("target", "a", ("group",), task="regression", more_scores=(ScoreColumn("b"),))
    return build_predictions(frame, mapping)


def fastest(fn, runs: int = 3) -> tuple[float, float]:
    best = (float("inf"), float("inf"))
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        best = min(best, (time.perf_counter() - wall, time.process_time() - cpu))
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    pred = data(args.rows)
    compare = fastest(lambda: compare_errors(pred, "group"))
    parity = fastest(lambda: analyse_regression(pred.at(View(model="a")), "group", RegressionParityParams()))
    print(f"{args.rows:,} rows × 5 groups, two models")
    print(f"compare_errors (paired t-tests):           {compare[0]:6.2f} s wall / {compare[1]:6.2f} s CPU")
    print(f"one model's Group parity (the reference):  {parity[0]:6.2f} s wall / {parity[1]:6.2f} s CPU")
    print(f"comparison / parity: {compare[0] / parity[0]:.2f}× wall, {compare[1] / parity[1]:.2f}× CPU")


if __name__ == "__main__":
    main()
