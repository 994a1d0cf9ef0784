"""``fairviz audit PATH ...``: every classification section of the audit as JSON, HTML and a terminal summary."""
from __future__ import annotations

from pathlib import Path

from fairviz.calibration import CalibrationParams
from fairviz.cli.common import emit
from fairviz.core.limits import MAX_GROUPS, MAX_PAIR_GROUPS, GroupLimits
from fairviz.core.data import ColumnMapping, DataError, build_predictions, guess_mapping, read_table
from fairviz.explain.run import ExplainSettings
from fairviz.report.audit import AuditOptions, run_audit
from fairviz.report.explain import ExplainAuditOptions
from fairviz.report.summary import summary
from fairviz.residuals import RDFParams
from fairviz.sample_size.analysis import MatchParams


def add_parser(commands) -> None:
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
    audit.add_argument("--max-groups", type=int, default=MAX_GROUPS,
                       help=f"refuse a group attribute with more groups than this (default {MAX_GROUPS})")
    audit.add_argument("--max-pair-groups", type=int, default=MAX_PAIR_GROUPS,
                       help="pair comparisons cover the pairs among this many largest groups "
                            f"(default {MAX_PAIR_GROUPS}); every group keeps its own numbers")
    audit.add_argument("--explain", action="store_true",
                       help="add explanation disparity: train a tiny BERT on the text column and compare its "
                            "explanations between the two largest groups (minutes)")
    audit.add_argument("--explain-pairs", type=int, default=20, help="test sentences explained with --explain")
    audit.set_defaults(handler=run)


def run(args) -> int:
    if not 0 <= args.threshold <= 1:
        raise DataError(f"--threshold must be in [0, 1], got {args.threshold}.")
    if args.cps_lambda < 0:
        raise DataError(f"--cps-lambda must be >= 0, got {args.cps_lambda}.")
    if args.max_groups < 2 or args.max_pair_groups < 2:
        raise DataError("--max-groups and --max-pair-groups must be at least 2.")
    limits = GroupLimits(max_groups=args.max_groups, max_pair_groups=args.max_pair_groups)
    frame, digest = read_table(args.path)
    guess = guess_mapping(frame)
    mapping = ColumnMapping(label=args.label or guess.label, score=args.score or guess.score,
                            groups=tuple(args.group) if args.group else guess.groups,
                            positive_label=args.positive_label,
                            text=args.text or (guess.text if guess.text in frame else None),
                            row_id=guess.row_id, intersect=args.intersect)
    pred = build_predictions(frame, mapping, source=Path(args.path).name, file_fingerprint=digest,
                             limits=limits)
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
        explain = ExplainAuditOptions(settings=ExplainSettings(n_pairs=args.explain_pairs, seed=args.seed))
    audit = run_audit(pred, AuditOptions(attribute=attribute, threshold=args.threshold, rdf=params,
                                         calibration=calibration, benefit=args.benefit, match=match,
                                         cps_lambda=args.cps_lambda, explain=explain))
    emit(summary(audit.data), audit.data, args.json)
    if args.html:
        args.html.write_text(audit.to_html(), encoding="utf-8")
    return 0
