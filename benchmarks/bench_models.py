"""Two models against one on the same file (issue 24's target: the whole audit of two models ≤ 2.2× one model's).

Run by hand (not a test): ``OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_models.py [--rows 1000000]``.
Writes a CSV of ``rows`` predictions × 5 groups with two correlated models' scores at full precision, then times,
in this process, wall and CPU time:
- one model: the engine's reduction of the first score + the audit ``fairviz audit`` runs (default settings);
- two models: one reduction of both scores (one scan) + each model's audit + their comparison as ``fairviz audit
  --score a --score b`` runs it (``fairviz.compare.compare_models``, default settings: 1,000 resamples and
  permutations, every difference overall, per group and per pair, BH).
Each is run once to warm imports, then ``--repeat`` times, one model and two models in turn; the fastest of each
(wall and CPU separately: the shared machine only ever adds time) is reported, with the ratios two/one.
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


def write_csv(path: Path, rows: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    codes = rng.choice(len(GROUPS), rows, p=[.4, .25, .15, .12, .08])
    p = rng.beta(0.7, 1.3, rows)
    label = (rng.random(rows) < p).astype(np.int8)
    first = np.clip(p + np.array([0.0, 0.05, -0.05, 0.1, 0.0])[codes], 0, 1)
    second = np.clip(0.7 * first + 0.3 * p + rng.normal(0, 0.03, rows), 0, 1)
    pd.DataFrame({"label": label, "score": first, "score_v2": second, "group": GROUPS[codes]}).to_csv(path, index=False)


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def one_model(path, mapping):
    from fairviz.data.engine import reduce_path
    from fairviz.report.plan import AuditParams, audit as run_audit
    pred = reduce_path(path, mapping).predictions()
    return run_audit(pred, AuditParams())


def two_models(path, mapping, timings: dict):
    from fairviz.compare import compare_models
    from fairviz.data.engine import reduce_path
    from fairviz.report.plan import AuditParams, audit as run_audit
    from fairviz.data.view import View
    wall, cpu, joint = timed(lambda: reduce_path(path, mapping).predictions())
    timings["reduction"] = (wall, cpu)
    wall, cpu, audits = timed(lambda: [run_audit(joint.at(View(model=m)), AuditParams()) for m in joint.model_names])
    timings["two audits"] = (wall, cpu)
    wall, cpu, comparison = timed(lambda: compare_models(joint, "group", 0.5))
    timings["comparison"] = (wall, cpu)
    return audits, comparison, joint


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from fairviz.data import ColumnMapping, ScoreColumn, View

    single = ColumnMapping("label", "score", ("group",))
    double = ColumnMapping("label", "score", ("group",), more_scores=(ScoreColumn("score_v2"),))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "models.csv"
        write_csv(path, args.rows)
        print(f"{args.rows:,} rows, 5 groups, {path.stat().st_size / 1e6:.0f} MB CSV")
        runs = {"one model": lambda timings: one_model(path, single),
                "two models": lambda timings: two_models(path, double, timings)}
        for run in runs.values():
            run({})                                           # warm: imports, DuckDB's first connection
        best, parts, joint = {name: (np.inf, np.inf) for name in runs}, {}, None
        for _ in range(args.repeat):
            for name, run in runs.items():
                timings: dict = {}
                wall, cpu, out = timed(lambda: run(timings))
                print(f"{name:>10}: {wall:6.2f} s wall, {cpu:6.2f} s CPU"
                      + ("" if not timings else "  (" + ", ".join(f"{k} {w:.2f} s wall / {c:.2f} s CPU"
                                                                   for k, (w, c) in timings.items()) + ")"))
                best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
                if timings:
                    joint = out[2]
                    parts = {k: (min(parts.get(k, (np.inf,) * 2)[0], w), min(parts.get(k, (np.inf,) * 2)[1], c))
                             for k, (w, c) in timings.items()}
        print("fastest: " + ", ".join(f"{name} {w:.2f} s wall / {c:.2f} s CPU" for name, (w, c) in best.items()))
        print("  two models' parts, fastest: " + ", ".join(f"{k} {w:.2f} s wall / {c:.2f} s CPU"
                                                          for k, (w, c) in parts.items()))
        print(f"joint cells: {joint.y.size:,}; per model: "
              + ", ".join(f"{m} {joint.at(View(model=m)).y.size:,}" for m in joint.model_names))
        print(f"two models / one model: {best['two models'][0] / best['one model'][0]:.2f}× wall, "
              f"{best['two models'][1] / best['one model'][1]:.2f}× CPU (target ≤ 2.2×)")


if __name__ == "__main__":
    main()
