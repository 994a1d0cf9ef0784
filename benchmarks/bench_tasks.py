"""Regression and multiclass audits against a binary one, each of 1M rows through the engine (issue 25's target: a
regression or multiclass audit ≤ 2× a binary audit of as many rows).

Run by hand (not a test): ``OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_tasks.py [--rows 1000000]``.
Writes three CSVs of ``rows`` rows × 5 groups at full precision (every score, prediction and class probability
distinct: the engine's tables then hold about one entry per row, its worst case) and times, in this process, the
engine's reduction and ``fairviz audit``'s audit (``run_audit`` with the task's sections, default settings), wall
and CPU, after a warm-up run of each; prints the parts and the ratios to the binary audit.
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

GROUPS = np.array(["g1", "g2", "g3", "g4", "g5"])
CLASSES = np.array(["a", "b", "c", "d"])


def write(folder: Path, rows: int, seed: int = 0) -> dict[str, Path]:
    rng = np.random.default_rng(seed)
    group = GROUPS[rng.choice(len(GROUPS), rows, p=[.4, .25, .15, .12, .08])]
    shift = (group == "g2") * 0.05
    p = np.clip(rng.beta(0.7, 1.3, rows) + shift, 0, 1)
    paths = {k: folder / f"{k}.csv" for k in ("binary", "regression", "multiclass")}
    pd.DataFrame({"label": (rng.random(rows) < p).astype(np.int8), "score": p, "group": group}).to_csv(
        paths["binary"], index=False)
    target = rng.normal(50, 10, rows)
    pd.DataFrame({"target": target, "prediction": target + rng.normal(0, 5, rows) + 20 * shift,
                  "group": group}).to_csv(paths["regression"], index=False)
    probabilities = rng.dirichlet([2, 2, 2, 2], rows)
    label = (probabilities.cumsum(1) < rng.random((rows, 1))).sum(1)        # each row's class drawn from its own
    frame = pd.DataFrame({"label": CLASSES[np.minimum(label, 3)], "group": group})
    for k, name in enumerate(CLASSES):
        frame[f"p_{name}"] = probabilities[:, k]
    frame.to_csv(paths["multiclass"], index=False)
    return paths


def mappings():
    from fairviz.data import ColumnMapping
    return {"binary": ColumnMapping("label", "score", ("group",)),
            "regression": ColumnMapping("target", "prediction", ("group",), task="regression"),
            "multiclass": ColumnMapping("label", "", ("group",), task="multiclass",
                                        class_scores=tuple(f"p_{c}" for c in CLASSES))}


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    from fairviz.data.engine import reduce_path
    from fairviz.report.plan import AuditParams, audit as run_audit
    with tempfile.TemporaryDirectory() as tmp:
        paths = write(Path(tmp), args.rows)
        print(f"{args.rows:,} rows × 5 groups per task")
        results = {}
        for task, mapping in mappings().items():
            def run():
                wall, cpu, pred = timed(lambda: reduce_path(paths[task], mapping).predictions())
                audit_wall, audit_cpu, audit = timed(lambda: run_audit(pred, AuditParams(attribute="group")))
                return (wall, cpu), (audit_wall, audit_cpu), pred, audit
            run()                                                  # warm: imports, DuckDB's first connection
            (rw, rc), (aw, ac), pred, audit = run()
            results[task] = (rw + aw, rc + ac)
            errors = ", ".join(e["section"] for e in audit.data.get("errors", [])) or "none"
            print(f"{task:>10}: reduction {rw:6.2f} s wall / {rc:6.2f} s CPU ({pred.y.size:,} entries), audit "
                  f"{aw:6.2f} s wall / {ac:6.2f} s CPU; sections failed: {errors}")
        wall, cpu = results["binary"]
        for task in ("regression", "multiclass"):
            print(f"{task} / binary: {results[task][0] / wall:.2f}× wall, {results[task][1] / cpu:.2f}× CPU "
                  "(target ≤ 2×)")


if __name__ == "__main__":
    main()
