"""Home's Summary after a large upload, and after a τ change, in process (issue 23).

Run by hand (not a test): ``OMP_NUM_THREADS=1 python benchmarks/bench_summary.py [--rows 1000000] [--rounded]``.
Writes a CSV of ``rows`` predictions × 5 groups (label, score, group; scores at full precision, so the engine keeps
~700k (group, label, score) cells, or rounded to 4 decimals with ``--rounded``: ~100k cells), reduces it with the
engine as Home does, then times the Summary's quick audit as it was (every section, no resampling) and as it is
(``summary_sections``: the sections whose exact tests the Summary reads), each at τ = 0.5 and again at τ = 0.51
(what a τ change recomputes: Home's Summary), and the parity-only audit the pages read their default pair from
(``_ui.FOCUS_PARAMS``), at both τ. Wall and CPU time of each step; the
targets: the Summary ≤ 1.5 s after the upload (reduction + quick audit), a τ change ≤ 300 ms.
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

GROUPS = ("g1", "g2", "g3", "g4", "g5")


def write_csv(path: Path, rows: int, rounded: bool, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    codes = rng.choice(len(GROUPS), rows, p=[.4, .25, .15, .12, .08])
    p = rng.beta(0.7, 1.3, rows)
    label = (rng.random(rows) < p).astype(np.int8)
    score = np.clip(p + np.array([0.0, 0.05, -0.05, 0.1, 0.0])[codes], 0, 1)
    pd.DataFrame({"label": label, "score": score.round(4) if rounded else score,
                  "group": np.array(GROUPS)[codes]}).to_csv(path, index=False)


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounded", action="store_true", help="scores rounded to 4 decimals (fewer cells)")
    args = parser.parse_args()

    from fairviz.calibration import CalibrationParams
    from fairviz.data import ColumnMapping
    from fairviz.data.engine import Engine, resolve
    from fairviz.report.audit import AuditParams, run_audit
    from fairviz.residuals import RDFParams
    from app_pages._ui import FOCUS_PARAMS, SUMMARY_PARAMS
    from fairviz.findings.display import summary_sections

    before = dict(rdf=RDFParams(resamples=0, knee_resamples=0), calibration=CalibrationParams(resamples=0))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "upload.csv"
        write_csv(path, args.rows, args.rounded)
        wall, cpu, stats = timed(lambda: Engine().reduce(resolve(path), ColumnMapping("label", "score", ("group",))))
        w2, c2, pred = timed(stats.predictions)
        wall, cpu = wall + w2, cpu + c2
        print(f"{args.rows:,} rows × 5 groups → {pred.y.size:,} cells; reduction {wall:.2f} s wall, {cpu:.2f} s CPU "
              f"on {os.cpu_count()} cores")
        run_audit(pred, AuditParams(attribute="group", **SUMMARY_PARAMS))          # imports, once
        home = dict(sections=summary_sections(pred, "group"))        # what Home runs for these groups
        runs = (("quick audit before (every section, no resampling)", before),
                ("quick audit with MATCH (SUMMARY_PARAMS: a group under the floor)", SUMMARY_PARAMS),
                (f"quick audit now (sections {', '.join(home['sections'])}: no group under the floor)", home),
                ("pages' top group (FOCUS_PARAMS)", FOCUS_PARAMS))
        for name, quick in runs:
            first = None
            for tau in (0.5, 0.51):
                w, c, audit = timed(lambda: run_audit(pred, AuditParams(attribute="group", threshold=tau, **quick)))
                first = first or (w, c)
                top = audit.findings.top[0].candidate if audit.findings.top else None
                print(f"  {name}, τ = {tau:.2f}: {w:.2f} s wall, {c:.2f} s CPU; top finding "
                      f"{(top.kind, top.group, round(top.effect, 4)) if top else None}")
            if quick is home:
                print(f"  the Summary after the upload (reduction + quick audit): {wall + first[0]:.2f} s wall, "
                      f"{cpu + first[1]:.2f} s CPU (target ≤ 1.5 s)")


if __name__ == "__main__":
    main()
