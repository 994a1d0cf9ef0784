"""``fairviz explain``: the page's computation from a terminal, with a JSON of the tests and a per-sentence CSV.

    fairviz explain --data geco-all --model tiny --pairs 20 --json out.json --csv scores.csv
    fairviz explain --data reviews.csv --text-column review --label-column stars --group-column gender \\
                    --model /models/my-bert --methods igxi,lime --metrics soft_comp,gini --json -
    fairviz explain --shipped neutral --json -            # analyse the shipped results, no model library needed

Bad input prints one line on stderr and exits with status 2 (handled by ``fairviz.cli.main``).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairviz.cli.common import emit
from fairviz.core.wording import fmt, fmt_p
from fairviz.data import DataError
from fairviz.explain import (METHOD_NAMES, METHODS, METRICS, RANDOM, AttributionParams, ExplainParams, ModelParams,
                             SensitivityParams, compare, default_epochs, disparity_json, model_warnings, run)
from fairviz.explain import data as xdata
from fairviz.explain import results as xresults


def add_parser(commands) -> None:
    explain = commands.add_parser("explain", help="explanation disparity: train a text classifier, explain it with "
                                                  "six methods, score seven metrics, test the two groups")
    add_arguments(explain)
    explain.set_defaults(handler=run_explain)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    src = parser.add_argument_group("data")
    src.add_argument("--data", default="neutral",
                     help=f"a built-in set ({', '.join(xdata.BUILT_IN)}) or a CSV/Parquet path (default: neutral)")
    src.add_argument("--shipped", metavar="KEY", help="analyse the shipped results assets/explain/KEY instead")
    src.add_argument("--load", type=Path, metavar="DIR", help="analyse a result folder written by --save")
    src.add_argument("--text-column", default="text")
    src.add_argument("--label-column", default="label")
    src.add_argument("--group-column", default="gender")
    src.add_argument("--pair-column", help="twin id column (optional)")
    src.add_argument("--positive-label", help="label value that means positive (guessed when omitted)")
    src.add_argument("--groups", help="the two groups compared, 'A,B' (default: the two largest)")
    src.add_argument("--generate", type=int, default=400, help="pairs generated for the built-in synthetic sets")
    mdl = parser.add_argument_group("model")
    mdl.add_argument("--model", default="tiny", help="tiny, minilm, or the path of a local Hugging Face directory")
    mdl.add_argument("--epochs", type=int, help="training epochs (default: tiny 5–30 by data set, 2 pre-trained)")
    mdl.add_argument("--no-fine-tune", action="store_true", help="use a local model with a 2-way head as loaded")
    mdl.add_argument("--device", choices=["cpu", "cuda"], help="default: cuda when available, else cpu")
    exp = parser.add_argument_group("explanations")
    exp.add_argument("--methods", default=",".join(list(METHODS) + [RANDOM]),
                     help=f"comma-separated subset of {','.join(list(METHODS) + [RANDOM])}")
    exp.add_argument("--metrics", default=",".join(METRICS), help=f"comma-separated subset of {','.join(METRICS)}")
    exp.add_argument("--pairs", type=int, default=20, help="test pairs explained (unpaired data: sentences)")
    exp.add_argument("--runs", type=int, default=1, help="repetitions (split, initialisation and seeds re-drawn)")
    exp.add_argument("--seed", type=int, default=0)
    exp.add_argument("--shap-evals", type=int, default=500)
    exp.add_argument("--ig-steps", type=int, default=50)
    exp.add_argument("--lime-samples", type=int, default=5000, help="cap on LIME's n² samples")
    exp.add_argument("--eps", type=float, default=0.05, help="sensitivity radius as a share of ‖E‖")
    tst = parser.add_argument_group("tests and output")
    tst.add_argument("--alpha", type=float, default=0.05)
    tst.add_argument("--correction", choices=["none", "bh"], default="none",
                     help="bh: Benjamini–Hochberg decides significance (p_adjusted is always written)")
    tst.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples for the CI of Cohen's d")
    tst.add_argument("--json", type=Path, help="write the tests as JSON here ('-' for stdout)")
    tst.add_argument("--csv", type=Path, help="write the per-sentence scores as CSV here")
    tst.add_argument("--save", type=Path, metavar="DIR", help="write the full result folder (reload with --load)")


def run_explain(args) -> int:

    methods = _choices(args.methods, list(METHODS) + [RANDOM], "method")
    metrics = _choices(args.metrics, list(METRICS), "metric")
    if not 0 < args.alpha < 1:
        raise DataError(f"--alpha must be between 0 and 1, got {args.alpha}.")
    if args.shipped:
        if args.shipped not in xresults.shipped():
            raise DataError(f"No shipped result '{args.shipped}'; choose one of {', '.join(xresults.shipped())}.")
        result = xresults.load_shipped(args.shipped)
    elif args.load:
        result = xresults.load(args.load)
    else:
        result = _compute(args, methods, metrics)
    methods = [m for m in methods if m in result.methods]
    metrics = [m for m in metrics if m in result.metrics]
    if not methods or not metrics:
        raise DataError("None of the requested methods/metrics is in these results.")
    report = compare(result, methods, metrics, args.alpha, args.correction, args.resamples, args.seed)
    warnings = [text for _, text in model_warnings(result)]
    emit(summary(result, report, warnings), disparity_json(result, report, warnings), args.json)
    if args.csv:
        args.csv.write_text(result.per_sentence_csv())
    if args.save:
        result.save(args.save)
    return 0


def _choices(text: str, allowed: list[str], what: str) -> list[str]:
    chosen = [t.strip().lower() for t in text.split(",") if t.strip()]
    unknown = [c for c in chosen if c not in allowed]
    if unknown or not chosen:
        raise DataError(f"Unknown {what}(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(allowed)}.")
    return chosen


def _compute(args, methods, metrics):

    if args.data in xdata.BUILT_IN:
        dataset = xdata.load_builtin(args.data, args.generate, args.seed)
    else:
        path = Path(args.data)
        if not path.exists():
            raise DataError(f"'{args.data}' is neither a built-in data set ({', '.join(xdata.BUILT_IN)}) nor a file.")
        groups = tuple(g.strip() for g in args.groups.split(",")) if args.groups else None
        if groups is not None and len(groups) != 2:
            raise DataError("--groups needs exactly two names, 'A,B'.")
        dataset = xdata.from_file(path, path.name, args.text_column, args.label_column, args.group_column,
                                  positive_label=args.positive_label, groups=groups, pair=args.pair_column)
    kind, path = (args.model, None) if args.model in ("tiny", "minilm") else ("local", args.model)
    epochs = args.epochs if args.epochs is not None else default_epochs(kind, args.data)
    spec = ModelParams(kind=kind, path=path, epochs=epochs, seed=args.seed, fine_tune=not args.no_fine_tune)
    settings = ExplainParams(methods=tuple(methods), metrics=tuple(metrics), n_pairs=args.pairs, seed=args.seed,
                               attribution=AttributionParams(ig_steps=args.ig_steps, shap_max_evals=args.shap_evals,
                                                               lime_max_samples=args.lime_samples),
                               sensitivity=SensitivityParams(eps=args.eps))
    last = [-1]

    def progress(fraction: float, message: str) -> None:
        step = int(fraction * 20)
        if step != last[0]:
            last[0] = step
            print(f"  {100 * fraction:5.1f}%  {message}", file=sys.stderr, flush=True)

    return run(dataset, spec, settings, runs=args.runs, progress=progress, device=args.device)


def summary(result, report, warnings: list[str]) -> str:
    gi, gj = report.groups
    meta = result.meta
    lines = [f"{meta['dataset']['title']} · {meta['model']['description']} · {len(result.instances):,} sentences "
             f"explained, {gi} vs {gj}, alpha {report.alpha}{' (BH)' if report.correction == 'bh' else ''}"]
    lines += [f"  warning: {w}" for w in warnings]
    for cell in report.cells:
        flag = "**" if cell.considerable else ("* " if cell.significant else "  ")
        lines.append(f"  {flag}{METHOD_NAMES[cell.method]:<6} {METRICS[cell.metric].label:<24} median {fmt(cell.median_i)} vs "
                     f"{fmt(cell.median_j)}  p {fmt_p(cell.p_value):>7}  d {fmt(cell.cohens_d, 2):>6}")
    lines.append("  (* p ≤ alpha, ** and |d| ≥ 0.2)")
    return "\n".join(lines)
