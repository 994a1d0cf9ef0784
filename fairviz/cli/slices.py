"""``fairviz slices PATH``: every slice of up to k group attributes, ranked by how far its metric is from the rest's
among the significant ones (one query on the engine; the rows never reach Python)."""
from __future__ import annotations

from pathlib import Path

from fairviz.cli.common import emit
from fairviz.cli.outputs import check_input, check_outputs, write_atomically
from fairviz.core.serialize import clean
from fairviz.data import DataError
from fairviz.data.engine import Engine
from fairviz.data.task_spec import DEFAULT_TASK
from fairviz.data.tasks import task_names
from fairviz.data.sources import locate
from fairviz.data.tasks import spec_of
from fairviz.report.render import to_terminal
from fairviz.slices import SliceParams, find_slices, method_of
from fairviz.slices.counts import FULL_LATTICE, MAX_DEPTH, PRUNED_TOP_K, default_top_k
from fairviz.slices.display import slices_display
from fairviz.slices.metrics import ALL_METRICS, check_metric
from fairviz.slices.sql import engine_slice_counts


def add_parser(commands) -> None:
    p = commands.add_parser("slices", help="worst-slice discovery: every slice of up to --max-depth group attributes "
                                           "against the rest, with an exact test and a false-discovery correction")
    p.add_argument("path", type=Path, help="CSV or Parquet file (or a Parquet folder)")
    p.add_argument("--label", required=True, help="the 0/1 label column (regression: the target; multiclass: the "
                                                   "class)")
    p.add_argument("--score", help="the score column, probability of 1 in [0, 1] (regression: the prediction; "
                                   "multiclass, optional: the predicted class's confidence)")
    p.add_argument("--predicted", metavar="COL", help="multiclass: the predicted-class column")
    p.add_argument("--task", choices=task_names(), default=DEFAULT_TASK,
                   help="binary (default), regression (metrics: mean_residual = prediction − target, mae) or "
                        "multiclass (error_rate: predicted class ≠ label, Fisher's test)")
    p.add_argument("--group", action="append", required=True, help="a group attribute (repeat for each)")
    p.add_argument("--max-depth", type=int, default=MAX_DEPTH, help=f"attributes per slice, 1…{MAX_DEPTH}")
    p.add_argument("--min-support", type=float, default=100, help="rows a slice needs to be tested (default 100)")
    p.add_argument("--metric", choices=list(ALL_METRICS), default=None,
                   help="the metric compared (binary: error_rate, fpr, fnr, selection_rate, default fpr; regression: "
                        "mean_residual, mae, default mean_residual)")
    p.add_argument("--top-k", type=int, default=None,
                   help="prune the lattice as SliceLine does: expand only slices whose score bound can beat the k-th "
                        f"best (one query per level; 0: every slice, one query; default: 0 up to {FULL_LATTICE} "
                        f"attribute combinations, six attributes to depth 3, else {PRUNED_TOP_K})")
    p.add_argument("--threshold", type=float, default=0.5, help="τ: a score ≥ τ predicts 1")
    p.add_argument("--alpha", type=float, default=0.05, help="the false discovery rate")
    p.add_argument("--correction", choices=["by", "bh"], default="by",
                   help="by: Benjamini–Yekutieli (any dependence; default), bh: Benjamini–Hochberg")
    p.add_argument("--test", choices=["fisher", "match"], default="fisher",
                   help="binary: 'fisher' (Fisher's exact test, slice vs rest; default) or 'match' (MATCH, The Art of "
                        "Fairness §4.5: the slice drawn from the rest's cells as if they were known; anti-conservative "
                        "for a slice holding much of the data)")
    p.add_argument("--engine", choices=["duckdb", "spark"], default="duckdb")
    p.add_argument("--json", type=Path, help="write every slice as JSON here ('-' for stdout)")
    p.set_defaults(handler=run)


def run(args) -> int:
    if not 0 <= args.threshold <= 1:
        raise DataError(f"--threshold must lie in [0, 1] (got {args.threshold}).")
    check_input(args.path)
    check_outputs([args.path], {"--json": args.json})
    spec, method = spec_of(args.task), method_of(args.task)
    if method.reads_predicted and not args.predicted:
        raise DataError(f"--task {args.task} reads the predicted class: name its column with --predicted.")
    if method.reads_score and not args.score:
        raise DataError(f"--task {args.task} reads a score column: name it with --score.")
    metric = args.metric or spec.error_metric
    check_metric(metric, args.task)
    if args.test == "match" and not spec.thresholded:
        raise DataError("--test match reads a binary confusion matrix: a regression takes Welch's t-test, a "
                        "multiclass error rate Fisher's exact test.")
    params = SliceParams(metric=metric, alpha=args.alpha, correction=args.correction, test=args.test)
    top_k = default_top_k(len(set(args.group)), args.max_depth) if args.top_k is None else args.top_k
    engine = Engine(args.engine)
    try:
        counts = engine_slice_counts(engine, locate(args.path, engine.kind, engine.local), args.label, args.score,
                                     args.group, args.max_depth, args.min_support, args.threshold, task=args.task,
                                     metric=metric, top_k=top_k, predicted=args.predicted)
    finally:
        engine.close()
    result = find_slices(counts, params)
    emit(to_terminal(slices_display(result, figure=False)), clean(result.to_dict()), args.json, write_atomically)
    return 0
