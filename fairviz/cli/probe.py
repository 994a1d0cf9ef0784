"""``fairviz probe`` and ``fairviz augment``: counterfactual probing of knee regions and RDF-guided augmentation
([1] Residual Distribution Fairness §7–8, App. D, E, O) on the explanation page's text models.

    fairviz probe --data neutral-biased --model tiny --n 150 --json probe.json
    fairviz probe --data reviews.csv --text-column review --label-column stars --group-column gender --json -
    fairviz augment --data neutral-biased --model tiny --k 100,500 --seeds 3 --json -
    fairviz probe --shipped --json -          # the shipped demo results (no model library needed)

Bad input prints one line on stderr and exits with status 2 (handled by ``fairviz.cli.main``).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairviz.cli.common import emit
from fairviz.core.serialize import clean
from fairviz.data import DataError
from fairviz.probing import (AUGMENT_STRATEGIES, DATA_SETS, DEFAULT_DATA, DEFAULT_GENERATE, SEEDS, AugmentParams,
                             ProbeParams, RunProtocol, augment_summary, load_dataset, load_shipped, model_spec,
                             probe_summary, run_augment, run_probe)


def add_parser(commands) -> None:
    probe = commands.add_parser("probe", help="counterfactual probing: are knee-region examples more sensitive to "
                                              "demographic swaps and identity-term removal?")
    _common(probe)
    probe.add_argument("--n", type=int, default=150, help="examples per region, knee and non-knee (default 150)")
    probe.add_argument("--n-strategy", type=int, default=100, help="examples per selection strategy (default 100)")
    probe.add_argument("--mode", choices=["percentile", "residual"], default="percentile",
                       help="knee region: |percentile − q| ≤ ε (§7.1, default) or |D − r| < ε (Algorithm 1)")
    probe.add_argument("--pool-share", type=float, default=0.5, help="share of the data held out and probed")
    probe.add_argument("--clear-threshold", type=float, default=0.1, help="Δd that counts as a clear pattern")
    probe.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples for the ratio CI")
    probe.set_defaults(handler=run_probe_command)

    augment = commands.add_parser("augment", help="RDF-guided augmentation (Algorithm 1): fine-tune on counterfactual "
                                                  "copies of selected examples and measure ΔF on a held-out test set")
    _common(augment)
    augment.add_argument("--k", default="100,500", help="examples selected per strategy, comma-separated")
    augment.add_argument("--seeds", type=int, default=3, help="seeds (42, 123, 456, then more); default 3")
    augment.add_argument("--strategies", default=",".join(AUGMENT_STRATEGIES),
                         help=f"comma-separated subset of {','.join(AUGMENT_STRATEGIES)}")
    augment.add_argument("--mode", choices=["residual", "percentile"], default="residual",
                         help="D*: |D − r| < ε (Algorithm 1, default) or |percentile − q| ≤ ε")
    augment.add_argument("--fine-tune-epochs", type=int, default=1)
    augment.add_argument("--lr", type=float, help="fine-tuning learning rate (default: the model's own)")
    augment.add_argument("--no-control", action="store_true", help="skip the fine-tune on T alone")
    augment.set_defaults(handler=run_augment_command)


def _common(parser: argparse.ArgumentParser) -> None:
    src = parser.add_argument_group("data")
    src.add_argument("--data", default=DEFAULT_DATA,
                     help=f"a built-in set ({', '.join(DATA_SETS)}) or a CSV/Parquet path (default: {DEFAULT_DATA})")
    src.add_argument("--shipped", action="store_true", help="print the shipped demo results instead of computing")
    src.add_argument("--text-column", default="text")
    src.add_argument("--label-column", default="label")
    src.add_argument("--group-column", default="group")
    src.add_argument("--positive-label", help="label value that means positive (guessed when omitted)")
    src.add_argument("--groups", help="the two groups compared, 'A,B' (default: the two largest)")
    src.add_argument("--generate", type=int, default=DEFAULT_GENERATE, help="pairs generated for a built-in set")
    mdl = parser.add_argument_group("model")
    mdl.add_argument("--model", default="tiny", help="tiny, minilm, or the path of a local Hugging Face folder")
    mdl.add_argument("--epochs", type=int, help="training epochs (default: tiny 5–30 by data set, 2 pre-trained)")
    mdl.add_argument("--device", choices=["cpu", "cuda"], help="default: cuda when available, else cpu")
    out = parser.add_argument_group("settings and output")
    out.add_argument("--eps", type=float, default=0.05, help="knee-region half-width ε (default 0.05)")
    out.add_argument("--seed", type=int, default=0)
    out.add_argument("--json", type=Path, help="write the result as JSON here ('-' for stdout)")


def _progress():
    last = [-1]

    def update(fraction: float, message: str = "") -> None:
        step = int(fraction * 20)
        if step != last[0]:
            last[0] = step
            print(f"  {100 * fraction:5.1f}%  {message}", file=sys.stderr, flush=True)
    return update


def _dataset(args):
    if args.generate < 10:
        raise DataError(f"--generate must be at least 10 pairs, got {args.generate}.")
    groups = None
    if args.groups:
        groups = tuple(g.strip() for g in args.groups.split(","))
        if len(groups) != 2:
            raise DataError("--groups needs exactly two names, 'A,B'.")
    return load_dataset(args.data, args.generate, args.seed, args.text_column, args.label_column, args.group_column,
                        groups, args.positive_label)


def _check_eps(eps: float) -> None:
    if not 0 < eps < 0.5:
        raise DataError(f"--eps must be between 0 and 0.5, got {eps}.")


def run_probe_command(args) -> int:
    if args.shipped:
        payload = load_shipped("probe")
    else:
        _check_eps(args.eps)
        if args.n < 5 or args.n_strategy < 5:
            raise DataError("--n and --n-strategy must be at least 5.")
        if not 0.1 <= args.pool_share <= 0.9:
            raise DataError(f"--pool-share must be between 0.1 and 0.9, got {args.pool_share}.")
        if args.resamples < 0:
            raise DataError("--resamples must be 0 or more.")
        dataset = _dataset(args)
        settings = ProbeParams(n=args.n, n_strategy=args.n_strategy, region_eps=args.eps, region_mode=args.mode,
                                 clear_threshold=args.clear_threshold, resamples=args.resamples, seed=args.seed)
        result = run_probe(dataset, model_spec(args.model, dataset.key, args.epochs, args.seed), settings,
                           RunProtocol(pool_share=args.pool_share, split_seed=args.seed), _progress(), args.device)
        payload = clean(result.to_dict())
    emit(probe_summary(payload), payload, args.json)
    return 0


def run_augment_command(args) -> int:
    if args.shipped:
        payload = load_shipped("augment")
    else:
        _check_eps(args.eps)
        try:
            ks = tuple(int(k) for k in args.k.split(",") if k.strip())
        except ValueError:
            raise DataError(f"--k must be comma-separated whole numbers, got {args.k!r}.") from None
        if not ks or min(ks) < 1:
            raise DataError("--k needs at least one value ≥ 1.")
        if args.seeds < 1:
            raise DataError("--seeds must be at least 1.")
        strategies = tuple(s.strip() for s in args.strategies.split(",") if s.strip())
        unknown = [s for s in strategies if s not in AUGMENT_STRATEGIES]
        if unknown or not strategies:
            raise DataError(f"Unknown strategy {', '.join(unknown) or '(none)'}; choose from "
                            f"{', '.join(AUGMENT_STRATEGIES)}.")
        if args.fine_tune_epochs < 1:
            raise DataError("--fine-tune-epochs must be at least 1.")
        seeds = SEEDS[:args.seeds] + tuple(range(1000, 1000 + max(0, args.seeds - len(SEEDS))))
        dataset = _dataset(args)
        settings = AugmentParams(strategies=strategies, ks=ks, seeds=seeds, region_eps=args.eps,
                                   region_mode=args.mode, control=not args.no_control)
        protocol = RunProtocol(fine_tune_epochs=args.fine_tune_epochs, fine_tune_lr=args.lr, split_seed=args.seed)
        result = run_augment(dataset, model_spec(args.model, dataset.key, args.epochs, args.seed), settings, protocol,
                             _progress(), args.device)
        payload = clean(result.to_dict())
    emit(augment_summary(payload), payload, args.json)
    return 0
