"""Benchmark the audit on 1M rows × 5 groups, against a raw pyarrow read and fairlearn's MetricFrame.

Run by hand: ``make bench`` (or ``.venv/bin/python benchmarks/bench_audit.py [--rows N]``). Prints timings and the
ratios the foundation issue sets as targets:
  per-group confusion counts + selection rates: ≥ 10× faster than fairlearn MetricFrame
  full audit (default settings): ≤ 3× the raw read of the file with pyarrow
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault("OMP_NUM_THREADS", "1")


def make_file(rows: int, path: Path, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    groups = np.array(["g1", "g2", "g3", "g4", "g5"])[rng.choice(5, rows, p=[.4, .25, .15, .12, .08])]
    shift = pd.Series(groups).map({"g1": 0.0, "g2": 0.05, "g3": -0.05, "g4": 0.1, "g5": 0.0}).to_numpy()
    p = rng.beta(0.7, 1.3, rows)
    y = rng.binomial(1, p)
    score = np.clip(p + shift, 0, 1).round(6)
    pd.DataFrame({"y": y, "score": score, "group": groups}).to_csv(path, index=False)


def timed(fn, repeat: int = 3):
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()

    import pyarrow.csv as pacsv
    from fairlearn.metrics import MetricFrame, selection_rate

    from fairviz.report.plan import AuditParams, audit as run_audit, sections_for
    from fairviz.calibration.results import CalibrationParams
    from fairviz.core.counts import confusion_by_group, decisions
    from fairviz.data import ColumnMapping, build_predictions, read_table
    from fairviz.residuals import RDFParams

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "preds.csv"
        make_file(args.rows, path)
        size_mb = path.stat().st_size / 1e6
        t_arrow, _ = timed(lambda: pacsv.read_csv(path))
        t_load, pred = timed(lambda: build_predictions(read_table(path)[0], ColumnMapping("y", "score", ("group",))),
                             repeat=1)

    view = pred.groups()
    y_pred = decisions(pred.score, 0.5)
    t_counts, ours = timed(lambda: confusion_by_group(pred.y, decisions(pred.score, 0.5), view.codes,
                                                      len(view.names)), repeat=5)
    group_labels = np.array(view.names)[view.codes]

    def cell(t, p):
        return lambda y_true, y_hat: int(np.sum((y_true == t) & (y_hat == p)))

    metrics = {"tp": cell(1, 1), "fp": cell(0, 1), "tn": cell(0, 0), "fn": cell(1, 0), "selection_rate": selection_rate}
    t_fairlearn, frame = timed(lambda: MetricFrame(metrics=metrics, y_true=pred.y, y_pred=y_pred,
                                                   sensitive_features=group_labels).by_group, repeat=3)
    for g, name in enumerate(view.names):            # same numbers, or the timing means nothing
        assert frame.loc[name, "tp"] == ours[g].tp and frame.loc[name, "fn"] == ours[g].fn
        assert abs(frame.loc[name, "selection_rate"] - ours[g].ppr()) < 1e-12

    point = AuditParams(rdf=RDFParams(resamples=0, knee_resamples=0), calibration=CalibrationParams(resamples=0))
    t_sections = {s.name: timed(lambda s=s: s.run(pred, point), repeat=1)[0] for s in sections_for("binary") if s.name != "explanations"}
    t_core, _ = timed(lambda: run_audit(pred, point), repeat=1)
    t_full, _ = timed(lambda: run_audit(pred, AuditParams()), repeat=1)

    print(f"rows: {pred.n:,} · groups: {len(view.names)} · file {size_mb:.0f} MB · OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS')}")
    print(f"raw read, pyarrow.csv.read_csv             {t_arrow:8.3f} s")
    print(f"fairviz load + validate (pandas)           {t_load:8.3f} s   ({t_load / t_arrow:.1f}× raw read)")
    print(f"per-group counts + selection rate, fairviz {t_counts * 1e3:8.1f} ms")
    print(f"same with fairlearn MetricFrame            {t_fairlearn * 1e3:8.1f} ms   "
          f"→ fairviz is {t_fairlearn / t_counts:.0f}× faster (target ≥ 10×)")
    for name, seconds in t_sections.items():
        print(f"  section {name:<34} {seconds:8.3f} s   ({seconds / t_arrow:.1f}× raw read)")
    print(f"audit, point estimates (no resampling)     {t_core:8.3f} s   ({t_core / t_arrow:.1f}× raw read, "
          "target ≤ 3×)")
    print(f"audit, default (1,000 resamples; 200 knee) {t_full:8.3f} s   ({t_full / t_arrow:.1f}× raw read)")


if __name__ == "__main__":
    main()
