"""Benchmark of the calibration analysis on 1M rows × 5 groups (run by hand; prints timings and ratios).

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_calibration.py [--rows 1000000] [--repeat 3]

Reference: scikit-learn's ``calibration_curve`` on the same data (per group and overall, equal-width and
quantile bins), in the same process. Reported:
- reliability tables only (what calibration_curve computes, plus counts and Beta intervals) vs calibration_curve;
- all diagrams + tests (reliability tables, smooth curves, ECE, smooth ECE, linear and spline tests, group test,
  AUROC/log-loss/Brier) without bootstrap intervals — the issue's ≤ 2 s target;
- the same with the default 1,000 bootstrap resamples (intervals of ECE, smooth ECE, gaps and performance).
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sklearn.calibration import calibration_curve  # noqa: E402

from fairviz.calibration.results import CalibrationParams
from fairviz.calibration.analysis import analyse
from fairviz.calibration.reliability import reliability_table  # noqa: E402
from fairviz.data import ColumnMapping, build_predictions  # noqa: E402
from fairviz.core.synthetic import make_predictions  # noqa: E402


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    groups = {"A": 0.35, "B": 0.25, "C": 0.2, "D": 0.12, "E": 0.08}
    frame = make_predictions(n=args.rows, groups=groups,
                             base_rates={"A": 0.3, "B": 0.3, "C": 0.4, "D": 0.2, "E": 0.35},
                             shift={"B": 0.4, "E": -0.3}, temperature={"C": 1.5, "D": 0.7}, seed=1)
    pred = build_predictions(frame, ColumnMapping(label="y", score="score", groups=("group",)), source="bench")
    view = pred.groups()
    masks = [view.codes == g for g in range(len(view.names))] + [np.ones(pred.n, bool)]
    print(f"{pred.n:,} rows × {len(view.names)} groups; {np.unique(pred.score).size:,} distinct scores; "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")

    def sklearn_curves():
        for mask in masks:
            for strategy in ("uniform", "quantile"):
                calibration_curve(pred.y[mask], pred.score[mask], n_bins=10, strategy=strategy)

    def ours_tables():
        for mask in masks:
            for strategy in ("uniform", "quantile"):
                reliability_table(pred.y[mask], pred.score[mask], 10, strategy)

    t_sklearn = best_of(sklearn_curves, args.repeat)
    t_tables = best_of(ours_tables, args.repeat)
    t_no_ci = best_of(lambda: analyse(pred, "group", CalibrationParams(resamples=0)), args.repeat)
    t_full = best_of(lambda: analyse(pred, "group", CalibrationParams()), args.repeat)
    print(f"sklearn calibration_curve (6 sets × 2 strategies):        {t_sklearn:7.3f} s")
    print(f"fairviz reliability_table (same, + counts and intervals):  {t_tables:7.3f} s   ratio {t_tables / t_sklearn:5.2f}×")
    print(f"fairviz analyse, all diagrams + tests, no resampling:      {t_no_ci:7.3f} s   ratio {t_no_ci / t_sklearn:5.2f}×"
          f"   target ≤ 2 s: {'met' if t_no_ci <= 2 else 'MISSED'}")
    print(f"fairviz analyse with 1,000 bootstrap resamples (all CIs):  {t_full:7.3f} s   ratio {t_full / t_sklearn:5.2f}×")


if __name__ == "__main__":
    main()
