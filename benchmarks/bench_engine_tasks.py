"""Benchmark the engine's regression and multiclass reductions against the row path (issue 25, item 4).

Run by hand: ``.venv/bin/python benchmarks/bench_engine_tasks.py [--rows N] [--cells K …] [--resamples B]``.
For each task, on N rows (1,000,000 by default; continuous values, three groups): the DuckDB reduction's wall and
CPU seconds and entries at each cell count, and the error table: every point estimate the regression pages
(group parity, calibration in the mean) or the multiclass pages (parity, calibration, and each class read one vs
rest: AUROC and ECE per group) report, reduced minus row path, the largest over groups, classes and bins, against
its scale (the target's standard deviation for estimates in its units, its variance for the MSE, 1 otherwise).
Confidence intervals and p-values are resampled (the draws differ between entries and rows) and left out.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CLASSES = ("cat", "dog", "bird", "fish", "cow")
# intervals and p-values (resampled in parity: the draws differ between entries and rows) are not point estimates
INTERVALS = re.compile(r"(_ci|^ci|^p|^p_bh|_p|_p_bh|_p_adjusted|p_value|^low|^high|ci_low|ci_high|_lo|_hi)$")
COUNTS = re.compile(r"(^n|^n_\w+|_n|count|rows)$")                         # counts: relative to their value
STATISTICS = re.compile(r"(statistic|chi2|^t|^rss|^f_statistic)$")        # test statistics: relative to their value
Y_UNITS = re.compile(r"bias|mae|rmse|mse|w1|wasserstein|quantile|intercept|mean_y|mean_pred|sd_y|lower|upper|"
                     r"loss|median|worst|\.q\d")


def regression_frame(rows: int, seed: int = 0, decimals: int | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    group = rng.choice(np.array(["a", "b", "c"]), rows, p=[.5, .3, .2])
    y = rng.gamma(4.0, 2.5, rows)                         # a skewed, continuous target
    y_hat = y * 0.9 + 1.0 + rng.normal(0, 2.0, rows) + (group == "b") * 0.6
    if decimals is not None:                            # values that repeat: the reduction is exact
        y, y_hat = y.round(decimals), y_hat.round(decimals)
    return pd.DataFrame({"group": group, "target": y, "y_pred": y_hat})


def multiclass_frame(rows: int, seed: int = 0, decimals: int | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    group = rng.choice(np.array(["a", "b", "c"]), rows, p=[.5, .3, .2])
    logits = rng.normal(0, 1.2, (rows, len(CLASSES)))
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    if decimals is not None:                            # probabilities printed with a few decimals
        p = p.round(decimals)
    tilt = np.where(group == "b", 0.7, 1.0)[:, None]     # group b's probabilities are over-confident
    truth = p ** tilt / (p ** tilt).sum(axis=1, keepdims=True)
    u = rng.random(rows)[:, None]
    y = (u > np.cumsum(truth, axis=1)).sum(axis=1).clip(0, len(CLASSES) - 1)
    frame = pd.DataFrame({"group": group, "label": np.array(CLASSES)[y]})
    for k, c in enumerate(CLASSES):
        frame[f"p_{c}"] = p[:, k]
    return frame


def flatten(value, path: str = "") -> dict[str, float]:
    """Every numeric leaf of a JSON-like result, keyed by its path (list items by their index)."""
    out: dict[str, float] = {}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, dict):
        for k, v in value.items():
            out.update(flatten(v, f"{path}.{k}" if path else str(k)))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            out.update(flatten(v, f"{path}[{i}]"))
    elif isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        out[path] = float(value)
    return out


def errors(reduced: dict, rows: dict, sd: float) -> dict[str, tuple[float, float]]:
    """Per estimate (paths with their indices dropped): (largest |reduced − rows|, that over its scale)."""
    a, b = flatten(reduced), flatten(rows)
    table: dict[str, tuple[float, float]] = {}
    for path in a.keys() & b.keys():
        key = re.sub(r"\[\d+\]", "", path)
        leaf = key.rsplit(".", 1)[-1]
        if INTERVALS.search(leaf) or leaf == "seed" or not (np.isfinite(a[path]) and np.isfinite(b[path])):
            continue
        if STATISTICS.search(leaf) or COUNTS.search(leaf):
            scale = max(1.0, abs(b[path]))
        elif "mse" in leaf and "rmse" not in leaf:
            scale = sd ** 2
        else:
            scale = sd if Y_UNITS.search(key) else 1.0
        diff = abs(a[path] - b[path])
        if diff / scale >= table.get(key, (0.0, -1.0))[1]:
            table[key] = (diff, diff / scale)
    return table


def regression_results(pred, resamples: int) -> dict:
    from fairviz.calibration.mincer_zarnowitz import analyse_regression as calibration
    from fairviz.parity.error_parity import RegressionParityParams, analyse_regression as parity
    params = RegressionParityParams(resamples=resamples, permutations=resamples)
    return {"parity": parity(pred, "group", params).to_dict(), "calibration": calibration(pred, "group")}


def multiclass_results(pred, resamples: int) -> dict:
    from sklearn.metrics import roc_auc_score

    from fairviz.calibration.top_label_ece import analyse_multiclass
    from fairviz.core.ece import ece
    from fairviz.parity.one_vs_rest import MulticlassParityParams, multiclass_parity
    from fairviz.data.view import View
    view = pred.attributes["group"]
    parity = multiclass_parity(pred.y, pred.predicted, view.codes, view.names, pred.classes, pred.weight, "group",
                               MulticlassParityParams(resamples=resamples))
    w = np.ones(pred.y.size) if pred.weight is None else pred.weight
    rest = {}
    for name in pred.classes:                       # each class one vs rest, as the binary pages read it
        binary = pred.at(View(class_name=name))
        for g, group in enumerate(view.names):
            mask = view.codes == g
            rest[f"{name}/{group}"] = {
                "auroc": roc_auc_score(binary.y[mask], binary.score[mask], sample_weight=w[mask]),
                "ece": ece(binary.score[mask], binary.y[mask], 15, w[mask]),
                "mean_probability": float(w[mask] @ binary.score[mask] / w[mask].sum())}
    return {"parity": parity.to_dict(), "calibration": analyse_multiclass(pred, "group"),
            "one_vs_rest": rest}


def run(task: str, rows: int, cells: list[int], resamples: int, decimals: int | None = None) -> None:
    from fairviz.data import ColumnMapping
    from fairviz.data.engine import Engine, reduce_path
    from fairviz.data.validation import build_predictions
    frame = (regression_frame if task == "regression" else multiclass_frame)(rows, decimals=decimals)
    if task == "regression":
        mapping = ColumnMapping("target", "y_pred", ("group",), task="regression")
        results, sd = regression_results, float(frame["target"].std())
    else:
        mapping = ColumnMapping("label", "", ("group",), task="multiclass",
                                class_scores=tuple(f"p_{c}" for c in CLASSES))
        results, sd = multiclass_results, 1.0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{task}.parquet"
        frame.to_parquet(path)
        t0 = time.perf_counter()
        truth = results(build_predictions(frame, mapping), resamples)
        rounded = "" if decimals is None else f", {decimals} decimals"
        print(f"\n## {task}: {rows:,} rows{rounded}; row path audit {time.perf_counter() - t0:.1f} s")
        for k in cells:
            wall, cpu = time.perf_counter(), time.process_time()
            stats = reduce_path(path, mapping, Engine(task_cells={task: k}))
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            pred = stats.predictions()
            table = errors(results(pred, resamples), truth, sd)
            worst = max(table.items(), key=lambda kv: kv[1][1])
            print(f"\n### {k:,} cells: {stats.to_dict()['mode']}, {len(stats.table):,} entries; reduction "
                  f"{wall:.2f} s wall, {cpu:.2f} s CPU (this process); worst {worst[0]} {worst[1][1]:.1e} of scale")
            print("| estimate | largest error | of its scale |\n| --- | --- | --- |")
            for key, (diff, rel) in sorted(table.items(), key=lambda kv: -kv[1][1]):
                print(f"| {key} | {diff:.2e} | {rel:.2e} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--tasks", nargs="+", default=["regression", "multiclass"])
    parser.add_argument("--cells", type=int, nargs="+", default=None, help="cells per column (default: the engine's)")
    parser.add_argument("--resamples", type=int, default=50)
    parser.add_argument("--decimals", type=int, default=None, help="round the values (regression) or probabilities")
    args = parser.parse_args()
    from fairviz.data.tasks.multiclass import CLASS_CELLS
    from fairviz.data.tasks.regression import REGRESSION_CELLS
    for task in args.tasks:
        run(task, args.rows, args.cells or [REGRESSION_CELLS if task == "regression" else CLASS_CELLS],
            args.resamples, args.decimals)


if __name__ == "__main__":
    main()
