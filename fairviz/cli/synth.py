"""``fairviz synth train``: a Conditional HydraGAN with diversity quotas ([3] §3.5)."""
from __future__ import annotations

import sys
from pathlib import Path

from fairviz.cli.common import Parser, emit
from fairviz.data import DataError
from fairviz.core.markup import csv_bytes
from fairviz.synth import display as report
from fairviz.report.render import to_terminal
from fairviz.synth import SynthParams, load, run


def add_parser(commands) -> None:
    synth = commands.add_parser("synth", help="synthetic training data with diversity quotas (Conditional HydraGAN)")
    synth_commands = synth.add_subparsers(dest="synth_command", required=True, parser_class=Parser)
    train = synth_commands.add_parser(
        "train", help="train a Conditional HydraGAN, write the synthetic table, judge it as the thesis does (§3.5)")
    train.add_argument("source", help="'adult', 'compas' (bundled samples) or a CSV/Parquet path")
    train.add_argument("--label", help="binary label column (default for the samples: their label)")
    train.add_argument("--group", action="append", help="group column; give it twice for the intersection of two")
    train.add_argument("--positive", help="the label value that is the benefit (default: guessed; COMPAS: 0)")
    train.add_argument("--group-target", default="uniform",
                       help="'uniform' or G=SHARE,… over the groups (a hard quota, exact to the row)")
    train.add_argument("--label-target", default="uniform",
                       help="'uniform' or V=SHARE,… over the label values (a soft quota, the diversity head)")
    train.add_argument("--rows", type=int, help="synthetic rows (default: as many as the real training rows)")
    train.add_argument("--epochs", type=int, default=SynthParams.epochs)
    train.add_argument("--trials", type=int, default=SynthParams.trials,
                       help="repeated classifier trials for the boxplots (Fig. 3.4)")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--device", default="auto", help="'auto' (CUDA when available), 'cpu' or 'cuda'")
    train.add_argument("--out", type=Path, required=True, help="where to write the synthetic CSV")
    train.add_argument("--json", type=Path, help="write the results as JSON here ('-' for stdout)")
    train.add_argument("--quiet", action="store_true", help="no progress lines")
    train.set_defaults(handler=run_train)


def settings_from(args) -> SynthParams:
    return SynthParams(group_target=args.group_target, label_target=args.label_target, rows=args.rows,
                         epochs=args.epochs, seed=args.seed, trials=args.trials, device=args.device).check()


def run_train(args) -> int:
    settings = settings_from(args)
    try:
        import torch  # noqa: F401
    except ImportError:
        raise DataError("'fairviz synth train' needs torch (pip install torch==2.13.0).") from None
    table = load(args.source, args.label, args.group, args.positive)
    last = [-1]

    def progress(fraction: float, message: str) -> None:
        if not args.quiet and int(fraction * 10) != last[0]:
            last[0] = int(fraction * 10)
            print(f"  {100 * fraction:3.0f}% {message}", file=sys.stderr, flush=True)

    result = run(table, settings, progress)
    args.out.write_bytes(csv_bytes(result.synthetic, lineterminator="\n", float_format="%.6f"))
    summary = to_terminal(report.summary(result, table.source, args.out))
    emit(summary, result.to_dict(), args.json)
    return 0
