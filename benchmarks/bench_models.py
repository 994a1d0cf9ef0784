"""Two models against one on the same file (issue 24's target: the whole audit of two models ≤ 2.2× one model's).

Run by hand (not a test): ``OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_models.py [--rows 1000000]``.
Writes a CSV of ``rows`` predictions × 5 groups with two correlated models' scores at full precision, then times,
in this process, wall and CPU time:
- one model: the engine's reduction of the first score + the audit ``fairviz audit`` runs (default settings);
- two models: one reduction of both scores (one scan) + each model's audit + the paired comparison of the two
  (``fairviz.compare.paired_differences``, 1,000 resamples and permutations, on the joint cells).
Each is run twice (the first warms imports); the second is reported, with the ratio two/one.
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
    from fairviz.report.audit import AuditParams, run_audit
    pred = reduce_path(path, mapping).predictions()
    return run_audit(pred, AuditParams())


def two_models(path, mapping):
    from fairviz.compare import paired_differences
    from fairviz.data.engine import reduce_path
    from fairviz.report.audit import AuditParams, run_audit
    joint = reduce_path(path, mapping).predictions()
    audits = [run_audit(joint.with_model(m), AuditParams()) for m in joint.model_names]
    a, b = joint.model_names
    comparison = paired_differences(joint.y, joint.scores[a], joint.scores[b], joint.weight)
    return audits, comparison, joint


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    from fairviz.data import ColumnMapping, ScoreColumn

    single = ColumnMapping("label", "score", ("group",))
    double = ColumnMapping("label", "score", ("group",), more_scores=(ScoreColumn("score_v2"),))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "models.csv"
        write_csv(path, args.rows)
        print(f"{args.rows:,} rows, 5 groups, {path.stat().st_size / 1e6:.0f} MB CSV")
        results = {}
        for name, run in (("one model", lambda: one_model(path, single)),
                          ("two models", lambda: two_models(path, double))):
            run()                                             # warm: imports, DuckDB's first connection
            results[name] = timed(run)
            wall, cpu, _ = results[name]
            print(f"{name:>10}: {wall:6.2f} s wall, {cpu:6.2f} s CPU")
        joint = results["two models"][2][2]
        print(f"joint cells: {joint.y.size:,}; per model: "
              + ", ".join(f"{m} {joint.with_model(m).y.size:,}" for m in joint.model_names))
        ratio = results["two models"][0] / results["one model"][0]
        print(f"two models / one model: {ratio:.2f}× wall, "
              f"{results['two models'][1] / results['one model'][1]:.2f}× CPU (target ≤ 2.2×)")


if __name__ == "__main__":
    main()
