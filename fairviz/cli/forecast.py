"""``fairviz forecast evaluate`` (forecast fairness by group) and ``fairviz ptn train`` (the PTN pipeline)."""
from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

from fairviz.cli.common import Parser, emit
from fairviz.data import DataError, read_table
from fairviz.core.serialize import clean
from fairviz.forecast import EvalParams, ForecastMapping, analyse, build, guess_mapping, pipeline, readings
from fairviz.forecast import display as report
from fairviz.report.render import to_terminal


def add_parser(commands) -> None:
    forecast = commands.add_parser("forecast", help="probabilistic (quantile) forecasts")
    forecast_commands = forecast.add_subparsers(dest="forecast_command", required=True, parser_class=Parser)
    ev = forecast_commands.add_parser(
        "evaluate", help="per-group CRPS, pinball loss, band coverage and width of quantile forecasts (JSON)")
    ev.add_argument("path", help="CSV or Parquet: one row per series, step (and model), truth, quantiles, groups")
    ev.add_argument("--series", help="series id column (guessed from the names when omitted)")
    ev.add_argument("--step", help="step / lead-time column")
    ev.add_argument("--truth", help="observed value column")
    ev.add_argument("--group", action="append", help="group column; repeat for more (the first is evaluated)")
    ev.add_argument("--model-column", help="column naming the model when the file holds several")
    ev.add_argument("--point", help="point-forecast column (optional)")
    ev.add_argument("--level", help="long format: the quantile-level column (values in (0, 1))")
    ev.add_argument("--value", help="long format: the quantile-value column")
    ev.add_argument("--model", help="the model to evaluate (default: the first in the file)")
    ev.add_argument("--compare", help="a second model to compare with: a model name in the file, or a path to a "
                                      "second file with the same layout")
    ev.add_argument("--bands", type=float, nargs="+", default=[0.5, 0.8, 0.9, 0.99],
                    help="nominal central coverages, each in (0, 1)")
    ev.add_argument("--resamples", type=int, default=1000, help="cluster-bootstrap resamples (whole series)")
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--json", type=Path, help="write the results as JSON here ('-' for stdout)")
    ev.set_defaults(handler=run_evaluate)
    ptn = commands.add_parser("ptn", help="the Probabilistic Parallel Time Network on Lorenz-63 (needs torch)")
    ptn_commands = ptn.add_subparsers(dest="ptn_command", required=True, parser_class=Parser)
    train = ptn_commands.add_parser("train", help="simulate Lorenz data, fit the NVAR, train a PTN, save it and its fans")
    train.add_argument("--config", type=Path, required=True,
                       help='JSON: {"data": {...}, "ptn": {...}, "train": {...}, "fans": 24}; see scripts/ptn_demo.json')
    train.add_argument("--out", type=Path, required=True, help="output folder (created): lorenz_ptn.npz, summary.json")
    train.add_argument("--quiet", action="store_true", help="no progress lines")
    train.set_defaults(handler=run_ptn_train)


def run_evaluate(args) -> int:
    if args.resamples < 0:
        raise DataError(f"--resamples must be ≥ 0, got {args.resamples}.")
    bad = [b for b in args.bands if not 0 < b < 1]
    if bad:
        raise DataError(f"--bands must lie strictly between 0 and 1; got {', '.join(map(str, bad))}.")
    frame, _ = read_table(args.path)
    guess = guess_mapping(frame)
    mapping = ForecastMapping(
        series=args.series or guess.series, step=args.step or guess.step, truth=args.truth or guess.truth,
        groups=tuple(args.group) if args.group else guess.groups, model=args.model_column or guess.model,
        point=args.point or guess.point, level=args.level or (None if args.value else guess.level),
        value=args.value or (None if args.level else guess.value))
    models = build(frame, mapping, default_model=Path(args.path).stem)
    name = args.model or next(iter(models))
    if name not in models:
        raise DataError(f"No model '{name}' in the file; it has: {', '.join(models)}.")
    compare = None
    if args.compare:
        if args.compare in models:
            compare = models[args.compare]
        else:
            other, _ = read_table(args.compare)
            compare = next(iter(build(other, mapping, default_model=Path(args.compare).stem).values()))
    params = EvalParams(tuple(sorted(set(args.bands))), args.resamples, 0.95, args.seed)
    result = analyse(models[name], None, params, compare)
    source = Path(args.path).name
    data = clean({"source": source, "n_rows": models[name].n, **result.to_dict()})
    emit(to_terminal(report.summary(result, source, models[name].n)), data, args.json)
    return 0


def run_ptn_train(args) -> int:
    try:
        config = pipeline.PipelineParams.from_dict(json.loads(args.config.read_text()))
    except FileNotFoundError:
        raise DataError(f"Config file not found: {args.config}") from None
    except (TypeError, ValueError, AttributeError) as err:
        raise DataError(f"The config {args.config} cannot be used: {err}") from None
    try:
        import torch  # noqa: F401
    except ImportError:
        raise DataError("'fairviz ptn train' needs torch (pip install torch==2.13.0).") from None
    last = [-1]

    def progress(fraction: float, message: str) -> None:
        if not args.quiet and int(fraction * 20) != last[0]:
            last[0] = int(fraction * 20)
            print(f"  {100 * fraction:3.0f}% {message}", file=sys.stderr, flush=True)

    try:
        bundle = pipeline.run_pipeline(config, progress=progress)
    except TypeError as err:                  # a wrongly typed setting (e.g. "d": "big")
        raise DataError(f"The config {args.config} has a setting of the wrong type: {err}") from None
    args.out.mkdir(parents=True, exist_ok=True)
    pipeline.save_bundle(bundle, args.out / "lorenz_ptn.npz")
    summary_data = clean({"config": {"data": asdict(config.data), "ptn": asdict(bundle.trained.config),
                                     "train": asdict(bundle.trained.settings), "fans": config.fans},
                          "evaluation": bundle.evaluation.to_dict(), "meta": bundle.meta,
                          "arch_weights": bundle.trained.arch_weights, "fusion": bundle.trained.fusion,
                          "history": bundle.trained.history})
    (args.out / "summary.json").write_text(json.dumps(summary_data, indent=2))
    print(f"PTN trained in {bundle.trained.seconds:.1f} s on {bundle.trained.device} "
          f"({bundle.trained.seconds_per_epoch:.2f} s/epoch). {readings.trained_skill(bundle.evaluation.skill)} "
          f"Wrote {args.out / 'lorenz_ptn.npz'} and {args.out / 'summary.json'}.")
    return 0
