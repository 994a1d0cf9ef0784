"""Command line: ``fairviz audit PATH --label COL --score COL --group COL [...]`` and ``fairviz explain [...]``.

Bad input prints one line to stderr and exits with status 2; never a traceback.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .data import ColumnMapping, DataError, build_predictions, guess_mapping, read_table

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):            # one line, not argparse's usage block
        print(f"fairviz: error: {message} (see '{self.prog} --help')", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fairviz", description="Visual fairness exploration of model predictions.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    audit = commands.add_parser("audit", help="audit a predictions file (CSV or Parquet) and write JSON/HTML")
    audit.add_argument("path", help="CSV or Parquet file with one row per prediction")
    audit.add_argument("--label", help="label column (binary); guessed from the names when omitted")
    audit.add_argument("--score", help="score column: predicted probability of the positive class, in [0, 1]")
    audit.add_argument("--group", action="append", help="group column; repeat for more attributes "
                                                       "(the first one is audited)")
    audit.add_argument("--intersect", action="store_true", help="audit the intersection of the first two --group columns")
    audit.add_argument("--positive-label", help="the label value that means positive (when labels are not 0/1)")
    audit.add_argument("--threshold", type=float, default=0.5, help="decision threshold: positive when score ≥ it")
    audit.add_argument("--json", type=Path, help="write the audit JSON here ('-' for stdout)")
    audit.add_argument("--html", type=Path, help="write a self-contained HTML report here")
    audit.add_argument("--resamples", type=int, default=1000, help="bootstrap and permutation resamples")
    audit.add_argument("--knee-resamples", type=int, default=200,
                       help="resamples for the F_h/F_v intervals (knees re-detected in each; 0 to skip)")
    audit.add_argument("--bins", type=int, default=10, help="reliability-diagram bins (2–100)")
    audit.add_argument("--bin-strategy", choices=["uniform", "quantile"], default="uniform",
                       help="equal-width or equal-count reliability bins")
    audit.add_argument("--seed", type=int, default=0)
    audit.add_argument("--benefit", choices=["positive", "negative"], default="positive",
                       help="which prediction is the benefit for OFI/DI/MATCH: 'positive' (score >= threshold) or "
                            "'negative' (e.g. COMPAS, where a low risk score is the benefit)")
    audit.add_argument("--match-reference", default="complement",
                       help="MATCH/CPS reference: 'complement' (all other rows), 'population', or a group name")
    audit.add_argument("--cps-lambda", type=float, default=5.0, help="Cross-Prior Smoothing prior scale λ (>= 0)")
    audit.add_argument("--text", help="text column (guessed from the names when omitted)")
    audit.add_argument("--explain", action="store_true",
                       help="add explanation disparity: train a tiny BERT on the text column and compare its "
                            "explanations between the two largest groups (minutes)")
    audit.add_argument("--explain-pairs", type=int, default=20, help="test sentences explained with --explain")
    audit.set_defaults(handler=_audit)
    _forecast_parsers(commands)
    _explain_parser(commands)
    return parser


def _forecast_parsers(commands) -> None:
    forecast = commands.add_parser("forecast", help="probabilistic (quantile) forecasts")
    forecast_commands = forecast.add_subparsers(dest="forecast_command", required=True, parser_class=_Parser)
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
    ev.set_defaults(handler=_forecast_evaluate)
    ptn = commands.add_parser("ptn", help="the Probabilistic Parallel Time Network on Lorenz-63 (needs torch)")
    ptn_commands = ptn.add_subparsers(dest="ptn_command", required=True, parser_class=_Parser)
    train = ptn_commands.add_parser("train", help="simulate Lorenz data, fit the NVAR, train a PTN, save it and its fans")
    train.add_argument("--config", type=Path, required=True,
                       help='JSON: {"data": {...}, "ptn": {...}, "train": {...}, "fans": 24}; see scripts/ptn_demo.json')
    train.add_argument("--out", type=Path, required=True, help="output folder (created): lorenz_ptn.npz, summary.json")
    train.add_argument("--quiet", action="store_true", help="no progress lines")
    train.set_defaults(handler=_ptn_train)


def _explain_parser(commands) -> None:
    from .explain.cli import add_arguments, run_explain
    explain = commands.add_parser("explain", help="explanation disparity: train a text classifier, explain it with "
                                                  "six methods, score seven metrics, test the two groups")
    add_arguments(explain)
    explain.set_defaults(handler=run_explain)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except DataError as err:
        print(f"fairviz: error: {' '.join(err.problems)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (OSError, ValueError) as err:
        print(f"fairviz: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT


def emit(summary_text: str, payload: dict, json_target: Path | None) -> None:
    """Print the summary and write the JSON; with '--json -' the summary goes to stderr so stdout stays pure JSON."""
    to_stdout = json_target is not None and str(json_target) == "-"
    print(summary_text, file=sys.stderr if to_stdout else sys.stdout)
    if json_target is None:
        return
    text = json.dumps(payload, indent=2) + "\n"
    if to_stdout:
        sys.stdout.write(text)
    else:
        json_target.write_text(text)


def _audit(args) -> int:
    from .audit import AuditOptions, run_audit
    from .calibration import CalibrationParams
    from .residuals import RDFParams
    from .significance import MatchParams

    if not 0 <= args.threshold <= 1:
        raise DataError(f"--threshold must be in [0, 1], got {args.threshold}.")
    if args.cps_lambda < 0:
        raise DataError(f"--cps-lambda must be >= 0, got {args.cps_lambda}.")
    frame, digest = read_table(args.path)
    guess = guess_mapping(frame)
    mapping = ColumnMapping(label=args.label or guess.label, score=args.score or guess.score,
                            groups=tuple(args.group) if args.group else guess.groups,
                            positive_label=args.positive_label,
                            text=args.text or (guess.text if guess.text in frame else None),
                            row_id=guess.row_id, intersect=args.intersect)
    pred = build_predictions(frame, mapping, source=Path(args.path).name, file_fingerprint=digest)
    attribute = pred.attribute_names[-1] if args.intersect else pred.attribute_names[0]
    params = RDFParams(resamples=args.resamples, knee_resamples=args.knee_resamples, seed=args.seed,
                       threshold=args.threshold)
    if args.match_reference not in ("complement", "population") and \
            args.match_reference not in pred.groups(attribute).names:
        raise DataError(f"--match-reference '{args.match_reference}' is neither 'complement', 'population' nor a "
                        f"group of '{attribute}' ({', '.join(pred.groups(attribute).names)}).")
    if not 2 <= args.bins <= 100:
        raise DataError(f"--bins must be between 2 and 100, got {args.bins}.")
    match = MatchParams(reference=args.match_reference, seed=args.seed)
    calibration = CalibrationParams(n_bins=args.bins, strategy=args.bin_strategy, resamples=args.resamples,
                                    seed=args.seed)
    explain = None
    if args.explain:
        from .explain.audit import ExplainAuditOptions
        from .explain.run import ExplainSettings
        explain = ExplainAuditOptions(settings=ExplainSettings(n_pairs=args.explain_pairs, seed=args.seed))
    audit = run_audit(pred, AuditOptions(attribute=attribute, threshold=args.threshold, rdf=params,
                                         calibration=calibration, benefit=args.benefit, match=match,
                                         cps_lambda=args.cps_lambda, explain=explain))
    emit(summary(audit.data), audit.data, args.json)
    if args.html:
        args.html.write_text(audit.to_html(), encoding="utf-8")
    return 0


def _forecast_evaluate(args) -> int:
    from .audit import clean
    from .forecast import evaluate as ev

    if args.resamples < 0:
        raise DataError(f"--resamples must be ≥ 0, got {args.resamples}.")
    bad = [b for b in args.bands if not 0 < b < 1]
    if bad:
        raise DataError(f"--bands must lie strictly between 0 and 1; got {', '.join(map(str, bad))}.")
    frame, _ = read_table(args.path)
    guess = ev.guess_mapping(frame)
    mapping = ev.ForecastMapping(
        series=args.series or guess.series, step=args.step or guess.step, truth=args.truth or guess.truth,
        groups=tuple(args.group) if args.group else guess.groups, model=args.model_column or guess.model,
        point=args.point or guess.point, level=args.level or (None if args.value else guess.level),
        value=args.value or (None if args.level else guess.value))
    models = ev.build(frame, mapping, default_model=Path(args.path).stem)
    name = args.model or next(iter(models))
    if name not in models:
        raise DataError(f"No model '{name}' in the file; it has: {', '.join(models)}.")
    compare = None
    if args.compare:
        if args.compare in models:
            compare = models[args.compare]
        else:
            other, _ = read_table(args.compare)
            compare = next(iter(ev.build(other, mapping, default_model=Path(args.compare).stem).values()))
    params = ev.EvalParams(tuple(sorted(set(args.bands))), args.resamples, 0.95, args.seed)
    result = ev.analyse(models[name], None, params, compare)
    data = clean({"source": Path(args.path).name, "n_rows": models[name].n, **result.to_dict()})
    emit(forecast_summary(data), data, args.json)
    return 0


def forecast_summary(data: dict) -> str:
    from .figures.theme import fmt

    lines = [f"{data['source']}: model '{data['model']}', {data['n_rows']:,} rows, attribute '{data['attribute']}'"]
    for w in data.get("warnings", []):
        lines.append(f"  note: {w}")
    for name, g in [*data["groups"].items(), ("all", data["overall"])]:
        cover = ", ".join(f"{100 * float(b):g}% {fmt(v)}" for b, v in g["coverage"].items())
        lines.append(f"  {name}: {g['n_series']:,} series, CRPS {fmt(g['crps'])}, pinball {fmt(g['pinball'])}, "
                     f"coverage {cover}")
    comparison = data.get("comparison")
    if comparison:
        for name, s in [*comparison["groups"].items(), ("all", comparison["overall"])]:
            lines.append(f"  skill of '{comparison['model_a']}' over '{comparison['model_b']}' on {name}: "
                         f"{fmt(s['skill'])} (95% CI {fmt(s['ci'][0])} to {fmt(s['ci'][1])})")
    return "\n".join(lines)


def _ptn_train(args) -> int:
    from .forecast import demo

    try:
        config = demo.PipelineConfig.from_dict(json.loads(args.config.read_text()))
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
        bundle = demo.run_pipeline(config, progress=progress)
    except TypeError as err:                  # a wrongly typed setting (e.g. "d": "big")
        raise DataError(f"The config {args.config} has a setting of the wrong type: {err}") from None
    args.out.mkdir(parents=True, exist_ok=True)
    demo.save_bundle(bundle, args.out / "lorenz_ptn.npz")
    from dataclasses import asdict
    from .audit import clean
    summary_data = clean({"config": {"data": asdict(config.data), "ptn": asdict(bundle.trained.config),
                                     "train": asdict(bundle.trained.settings), "fans": config.fans},
                          "evaluation": bundle.evaluation.to_dict(), "meta": bundle.meta,
                          "arch_weights": bundle.trained.arch_weights, "fusion": bundle.trained.fusion,
                          "history": bundle.trained.history})
    (args.out / "summary.json").write_text(json.dumps(summary_data, indent=2))
    s = bundle.evaluation.skill
    print(f"PTN trained in {bundle.trained.seconds:.1f} s on {bundle.trained.device} "
          f"({bundle.trained.seconds_per_epoch:.2f} s/epoch); skill vs Gaussian-NVAR at the CRPS quartiles "
          f"{', '.join(f'{v:.3f}' for v in s.quartiles)}; {100 * s.outperformed:.1f}% of {s.n:,} test forecasts "
          f"outperformed. Wrote {args.out / 'lorenz_ptn.npz'} and {args.out / 'summary.json'}.")
    return 0


def summary(data: dict) -> str:
    """A few lines a person reads in a terminal or a CI log."""
    from .figures.theme import fmt, fmt_p

    lines = [f"{data['source']}: {data['n_rows']:,} rows, attribute '{data['attribute']}', threshold {data['threshold']}"]
    for note in data.get("notes", []):
        lines.append(f"  note: {note}")
    for name, g in data["groups"].items():
        lines.append(f"  {name}: n={g['n']:,} base rate {fmt(g['base_rate'])} positive rate {fmt(g['ppr'])} "
                     f"TPR {fmt(g['tpr'])} FPR {fmt(g['fpr'])} median residual {fmt(g['median_residual'])} "
                     f"ECE {fmt(g['ece'])} ({g['ece_regime']})")
    for p in data["pairs"]:
        lines.append(f"  {p['group_i']} vs {p['group_j']}: F_pattern {fmt(p['f_pattern'])} "
                     f"(p {fmt_p(p['p_value_median'])}), F_dist {fmt(p['f_dist'])} (p {fmt_p(p['p_value_dist'])}), "
                     f"DP gap {fmt(p['dp_diff'])}")
    lines += _parity_summary(data)
    c = data["knee_concentration"]
    lines.append(f"  knee error concentration: ratio {fmt(c['ratio'], 2)}, Mann-Whitney p {fmt_p(c['p_value'])}, "
                 f"ECE {fmt(c['ece'])} ({c['regime']}) -> {c['verdict']}{' (borderline)' if c['borderline'] else ''}")
    for name, g in data.get("calibration", {}).items():
        status = data["calibration_details"]["groups"][name]["status"]
        test = (f"intercept {fmt(g['intercept'])} (p {fmt_p(g['intercept_p'])}) slope {fmt(g['slope'])} "
                f"(p {fmt_p(g['slope_p'])}) joint LR p {fmt_p(g['lr_p_value'])}") if status is None else status
        lines.append(f"  calibration {name}: ECE {fmt(g['ece'])} smooth ECE {fmt(g['smooth_ece'])}; {test}")
    diff = data.get("calibration_details", {}).get("group_difference")
    if diff and diff["p_value"] is not None:
        lines.append(f"  calibration differs by group? LR chi2({diff['df']}) = {fmt(diff['lr_statistic'], 2)}, "
                     f"p {fmt_p(diff['p_value'])}")
    return "\n".join(lines)


def _parity_summary(data: dict) -> list[str]:
    from .figures.theme import fmt, fmt_p

    settings = data.get("parity_settings")
    if not settings:
        return []
    benefit = "score < threshold" if settings["benefit"] == "negative" else "score >= threshold"
    lines = [f"  parity (benefit = {benefit}):"]
    for p in data["pairs"]:
        if "ofi" in p:
            lines.append(f"    {p['group_i']} vs {p['group_j']}: OFI {fmt(p['ofi'])} (p {fmt_p(p['ofi_p_value'])}), "
                         f"DI {fmt(p['di'])} (four-fifths: {p['four_fifths']}) -> {p['parity_reading']}")
    match = data.get("match", {})
    tested = [r for metrics in match.values() for r in metrics.values() if r.get("p_value") is not None]
    alpha = settings.get("alpha", 0.05)
    flagged = [(g, m, r) for g, metrics in match.items() for m, r in metrics.items()
               if r.get("p_adjusted") is not None and r["p_adjusted"] < alpha]
    lines.append(f"  MATCH vs {settings['match_reference']}: {len(flagged)} of {len(tested)} group x metric scores "
                 f"differ beyond sampling noise (BH-adjusted p < {alpha:g})")
    for g, m, r in sorted(flagged, key=lambda t: t[2]["p_adjusted"])[:8]:
        lines.append(f"    {g} {m} = {fmt(r['score'])} at n = {r['n']:,} (adjusted p {fmt_p(r['p_adjusted'])})")
    return lines


if __name__ == "__main__":
    sys.exit(main())
