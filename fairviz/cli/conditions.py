"""``fairviz conditions run``: the retraining sweep of [5] *Systematic Evaluation of Predictive Fairness* (Han et
al., AACL 2022) — train debiasing methods under changed training distributions and report test figures."""
from __future__ import annotations

import sys
from pathlib import Path

from fairviz.cli.common import Parser, emit
from fairviz.conditions import METHOD_NAMES, METHODS, DebiasTrainParams, RetrainingParams, simulate
from fairviz.conditions import data as cdata
from fairviz.core.serialize import clean
from fairviz.data import DataError, read_table
from fairviz.conditions.display import simulation_summary
from fairviz.report.render import to_terminal


def add_parser(commands) -> None:
    cond = commands.add_parser("conditions", help="data conditions: retrain debiasing methods under CB/JB/grid "
                                                  "training distributions (Systematic Evaluation of Predictive Fairness)")
    sub = cond.add_subparsers(dest="conditions_command", required=True, parser_class=Parser)
    r = sub.add_parser("run", help="the sweep: conditions × methods × seeds → JSON (runs, selected, train_cells)")
    r.add_argument("--data", required=True, help="moji-like, bios-like, adult, compas-text, or a CSV/Parquet path")
    r.add_argument("--label", help="class label column (files)")
    r.add_argument("--group", help="protected group column (files)")
    r.add_argument("--features", help="comma-separated feature columns (files; default: every other column)")
    r.add_argument("--text", help="text column to embed with MiniLM-L6 instead of features (files)")
    r.add_argument("--split", help="column holding train/dev/test (files; default: a seeded 70/15/15 split)")
    r.add_argument("--condition", required=True, choices=["cb", "jb", "grid"],
                   help="cb: conditional balance, jb: joint balance (both over α), grid: (p_y, s) for binary data")
    r.add_argument("--alphas", help="comma-separated α values in [0, 2] (default 0,0.25,…,2)")
    r.add_argument("--grid", help="comma-separated p_y and s values in (0, 1) for --condition grid "
                                  "(default 0.1,0.3,0.5,0.7,0.9)")
    r.add_argument("--methods", help=f"comma-separated, from {','.join(METHODS)} (default vanilla,ds,rw,eo_glb)")
    r.add_argument("--seeds", type=int, default=3, help="seeds per (condition, method, setting)")
    r.add_argument("--m", type=int, help="training rows drawn per condition (default: the data's training size; "
                                         "Bios-like: 30,000 scaled like the data)")
    r.add_argument("--grid-size", choices=["small", "wide"], default="small",
                   help="hyperparameter grid: small (one setting per method) or wide (3–6 settings)")
    r.add_argument("--hidden", type=int, default=64, help="width of the two tanh layers")
    r.add_argument("--epochs", type=int, default=20, help="maximum epochs (early stopping on dev, patience 3)")
    r.add_argument("--min-fairness", type=float, help="select the best dev accuracy with dev Fairness ≥ this "
                                                      "instead of the smallest dev DTO")
    r.add_argument("--leakage", action="store_true",
                   help="also probe each model's last hidden layer for the group (linear SVM fit on dev, balanced "
                        "accuracy on test; 0.5 = no linear leakage with two groups)")
    r.add_argument("--json", type=Path, help="write the results as JSON here ('-' for stdout)")
    r.add_argument("--csv", type=Path, help="write one row per (condition, method, setting, seed, split) here")
    r.add_argument("--quiet", action="store_true", help="no progress lines")
    r.set_defaults(handler=run)


def _floats(text: str | None, name: str):
    if text is None:
        return None
    try:
        return tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise DataError(f"--{name} must be comma-separated numbers, got '{text}'.") from None


def _methods(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    lookup = {**{k: k for k in METHODS}, **{v.lower(): k for k, v in METHOD_NAMES.items()}}
    out = []
    for name in (v.strip().lower() for v in text.split(",") if v.strip()):
        if name not in lookup:
            raise DataError(f"Unknown method '{name}'; choose from {', '.join(METHODS)}.")
        out.append(lookup[name])
    return tuple(dict.fromkeys(out))


def load(args) -> cdata.Dataset:
    if args.data in cdata.BUILTIN:
        return cdata.builtin(args.data)
    path = Path(args.data)
    if not path.exists():
        raise DataError(f"--data: '{args.data}' is neither a built-in set ({', '.join(cdata.BUILTIN)}) nor a file.")
    if not args.label or not args.group:
        raise DataError("A data file needs --label and --group (and --features or --text).")
    if args.features and args.text:
        raise DataError("Give either --features or --text, not both.")
    frame, _ = read_table(path)
    features = [c.strip() for c in args.features.split(",")] if args.features else None
    embed = cdata.minilm_embedder() if args.text else None
    return cdata.from_frame(frame, args.label, args.group, features=features, text=args.text, split=args.split,
                            name=path.name, embed=embed)


def settings_from(args) -> RetrainingParams:
    defaults = RetrainingParams()
    if args.hidden < 1 or args.epochs < 1:
        raise DataError("--hidden and --epochs must be at least 1.")
    return RetrainingParams(
        condition=args.condition, alphas=_floats(args.alphas, "alphas") or defaults.alphas,
        grid=_floats(args.grid, "grid") or defaults.grid, methods=_methods(args.methods) or defaults.methods,
        seeds=args.seeds, m=args.m, grid_size=args.grid_size,
        train=DebiasTrainParams(hidden=args.hidden, epochs=args.epochs), min_fairness=args.min_fairness,
        leakage=args.leakage)


def run(args) -> int:
    settings = settings_from(args)
    settings.check()
    dataset = load(args)
    last = [-1]

    def progress(fraction: float, message: str) -> None:
        if not args.quiet and int(fraction * 20) != last[0]:
            last[0] = int(fraction * 20)
            print(f"  {100 * fraction:3.0f}% {message}", file=sys.stderr, flush=True)

    sim = simulate.run(dataset, settings, progress=progress)
    if args.csv:
        simulate.runs_frame(sim).to_csv(args.csv, index=False)
    emit(to_terminal(simulation_summary(sim)), clean(sim.to_dict()), args.json)
    return 0
