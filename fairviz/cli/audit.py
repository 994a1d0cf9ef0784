"""``fairviz audit PATH|--table NAME|--query SQL ...``: every section of the audit as JSON, HTML and a terminal
summary, the rows reduced where they live (DuckDB, Spark, Spark Connect, PostgreSQL). ``--task`` (guessed from the
columns when omitted) chooses the task (``fairviz.data.tasks``); the plan (``fairviz.report.plan``) chooses what runs."""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd

from fairviz.calibration import CalibrationParams
from fairviz.cli.common import emit
from fairviz.cli.mapping import check_task_options, mapping_of, task_of
from fairviz.cli.outputs import OutputError, check_input, check_outputs, write_atomically
from fairviz.findings import KINDS, FindingsParams
from fairviz.data.limits import MAX_GROUPS, MAX_PAIR_GROUPS, GroupLimits
from fairviz.data import ColumnMapping, DataError, build_predictions, guess_mapping, read_table
from fairviz.data.model import INTERSECTION_SEP
from fairviz.data.engine import DEFAULT_SPARK_MASTER, ENGINES, Engine
from fairviz.data.sources import Files, Query, Table, dsn_has_password, locate, read_only_query, table_name
from fairviz.core.markup import csv_bytes
from fairviz.data.samples import match_sample
from fairviz.explain import ExplainParams
from fairviz.data.checks import ScoreDirectionError
from fairviz.data.scales import DIRECTIONS, SCALES, with_guessed_scale
from fairviz.data.tasks import TaskSpec, spec_of, task_names
from fairviz.report.api import add_engine, reduce_scaled, sample_settings, summary_params
from fairviz.report.attributes import SLICE_DEPTH, SliceOptions, failed_attributes, findings_params_for, \
    match_reference_for
from fairviz.report import plan
from fairviz.report.options import AuditParams
from fairviz.slices.metrics import ALL_METRICS, check_metric
from fairviz.explain.display import ExplainAuditParams
from fairviz.report.gate import FAIL_ON, PolicyError, exit_code, failure_text, gate_record, junit_xml, load_policy
from fairviz.report.pdf import PdfUnavailable, html_to_pdf
from fairviz.residuals import RDFParams, dstar_rows
from fairviz.sample_size import MatchParams
from fairviz.calibration.recalibration import METHODS as RECAL_METHODS, RecalParams, recalibrated_model
from fairviz.thresholds import CONSTRAINTS, adjusted_model, decision_rows

THRESHOLD_CHOICES = tuple(c.replace("_", "-") for c in CONSTRAINTS)    # equal-selection, equal-tpr, equalized-odds


def add_parser(commands) -> None:
    audit = commands.add_parser("audit", help="audit predictions (a CSV/Parquet file, a folder/glob of Parquet, a URL, "
                                              "a table or a query) and write JSON/HTML")
    audit.add_argument("path", nargs="?",
                       help="CSV or Parquet file, or a folder or glob of Parquet files, one row per prediction; a URL "
                            "with a scheme (s3a://, hdfs://, gs://, abfss://, file://) is passed to the engine as is")
    audit.add_argument("--table", help="audit a table instead of a path: of the Spark catalog, of --database FILE.duckdb, "
                                       "or of the PostgreSQL database")
    audit.add_argument("--query", help="audit the rows of a read-only query (SELECT or WITH) on the engine")
    audit.add_argument("--database", help="a DuckDB database file (opened read-only) for --table and --query")
    audit.add_argument("--engine", choices=ENGINES, default="duckdb",
                       help="what reduces the rows to counts per (group, label, score): 'duckdb' (embedded, reads "
                            "files larger than memory), 'spark' (a cluster; Java needed) or 'postgres' (inside the "
                            "database)")
    audit.add_argument("--spark-master", help=f"Spark master URL for --engine spark (default {DEFAULT_SPARK_MASTER}); "
                                              "sc://host:port uses Spark Connect")
    audit.add_argument("--spark-remote", help="a Spark Connect endpoint, sc://host:port (the same as --spark-master "
                                              "sc://…)")
    audit.add_argument("--dsn", help="PostgreSQL connection string or URL without a password (libpq reads PGPASSWORD "
                                     "or ~/.pgpass); omitted: the PG* environment variables")
    audit.add_argument("--memory-limit", help="DuckDB memory limit, e.g. '2GB' (larger inputs spill to disk)")
    audit.add_argument("--task", choices=task_names(), default=None,
                       help="what the predictions are: 'binary' (a two-valued label and a probability), 'regression' "
                            "(a numeric target and a numeric prediction) or 'multiclass' (a label with 3+ classes and "
                            "class probabilities or a predicted class). Default: guessed from the columns, and stated "
                            "in the output")
    audit.add_argument("--label", help="label column (binary, multiclass) or target column (regression); guessed "
                                       "from the names when omitted")
    audit.add_argument("--score", action="append",
                       help="score column: predicted probability of the positive class, in [0, 1] (binary); the "
                            "prediction (regression); the predicted class's confidence (multiclass, the --predicted "
                            "in the same position). Repeat it to compare models on the same rows: the first is "
                            "audited as with one, each other one is compared with it (paired differences, "
                            "'comparison' in the JSON, right after the Summary in the report)")
    audit.add_argument("--class-scores", metavar="GLOB|COLS", action="append",
                       help="multiclass: the class probability columns, a glob over the column names ('p_*') or a "
                            "comma list; each column's class is its name without the prefix or suffix (p_cat → cat). "
                            "Repeat it for another model on the same rows ('a_*' then 'b_*': each model named by its "
                            "pattern unless --model-name names it; another model's columns are matched to the "
                            "classes by name)")
    audit.add_argument("--quantiles", metavar="GLOB|COLS",
                       help="regression: prediction-interval columns named by their level (q0.05, q0.95), a glob or a "
                            "comma list; calibration then gives each group's coverage of the central intervals")
    audit.add_argument("--normalise", action="store_true",
                       help="multiclass: divide each row's class probabilities by their sum (rows that miss 1 by "
                            "more than 0.01 are otherwise read as given, with a note)")
    audit.add_argument("--predicted", metavar="COL", action="append",
                       help="multiclass: the predicted-class column (when there are no class probabilities); "
                            "--score names its confidence. Repeat it for another model, each with the --score in "
                            "the same position (or none at all): --predicted a --score conf_a --predicted b "
                            "--score conf_b")
    audit.add_argument("--units", help="regression: the target's units (e.g. 'USD'), stated in the sentences and "
                                       "the JSON")
    audit.add_argument("--model-name", action="append", default=[],
                       help="a name for the model of the --score (multiclass: --class-scores or --predicted) in the "
                            "same position (repeatable; default: the column's name)")
    audit.add_argument("--group", action="append",
                       help="group column; repeat for more attributes: every one is audited (the first one's keys "
                            "at the JSON's top level as before, each one's under 'attributes'), and the Summary "
                            "covers them all")
    audit.add_argument("--intersect", action="store_true",
                       help="audit the intersection of the first two --group columns as well (it takes the first "
                            "attribute's place at the JSON's top level)")
    audit.add_argument("--slices", action="store_true",
                       help="search the slices of the group columns (values of up to --slice-depth attributes "
                            "combined, each against the rest — Fisher's exact test, or Welch's t-test for a "
                            "regression's residuals —, Benjamini–Yekutieli): the top significant slices join the "
                            "Summary's findings, every slice is in the JSON's 'slices' and the report")
    audit.add_argument("--slice-depth", type=int, default=SLICE_DEPTH,
                       help=f"attributes per slice with --slices, 1…3 (default {SLICE_DEPTH})")
    audit.add_argument("--slice-min-support", type=float, default=None,
                       help="rows a slice needs to be tested with --slices (default: the policy's min_group_size)")
    audit.add_argument("--slice-metric", choices=list(ALL_METRICS), default=None,
                       help="the metric each slice is compared on with --slices (default: fpr for binary, "
                            "mean_residual for regression, error_rate for multiclass)")
    audit.add_argument("--positive-label", help="the label value that means positive (when labels are not 0/1)")
    audit.add_argument("--score-scale", choices=SCALES, default=None,
                       help="what the score's numbers are: 'probability' in [0, 1], 'percent' in [0, 100] (÷ 100) or "
                            "'logit' (the logistic function). Default: guessed; a score outside [0, 1] is converted "
                            "only when it unambiguously reads as percentages (values up to 100, some above 10) or "
                            "logits (values on both sides of 0), and the output says so")
    audit.add_argument("--score-direction", choices=DIRECTIONS, default=None,
                       help="which way the score runs. Default: checked — a score that runs the other way (AUROC "
                            "below 0.5 or a negative calibration slope, beyond their 95%% intervals) stops the audit "
                            "(exit 2). 'reversed': use 1 − score as the probability of the positive label; 'as-is': "
                            "audit the score as it is anyway (the output says the check disagreed)")
    audit.add_argument("--thresholds", choices=THRESHOLD_CHOICES, default=None,
                       help="add per-group thresholds (Hardt, Price and Srebro 2016) on the first model as another "
                            "model: 'equal-selection' rates, 'equal-tpr' (equal opportunity) or 'equalized-odds' "
                            "(randomised where needed, seeded by --seed); it is compared with the first model")
    audit.add_argument("--recalibrate", choices=tuple(RECAL_METHODS), default=None,
                       help="add the first model recalibrated (fitted on a seeded half of the rows, as the "
                            "Calibration page does; --seed) as another model: 'platt', 'temperature', 'isotonic' or "
                            "'spline'; it is compared with the first model")
    audit.add_argument("--threshold", type=float, default=None,
                       help="decision threshold: positive when score ≥ it (default 0.5, or a bundled sample's own)")
    audit.add_argument("--json", type=Path, help="write the audit JSON here ('-' for stdout)")
    audit.add_argument("--html", type=Path, help="write a self-contained HTML report here")
    audit.add_argument("--dstar", type=Path,
                       help="write the diagnostic set D* (rows near their group's knees) here as CSV, with every column "
                            "of the input: one filtered query on the engine, never a read of the whole file")
    audit.add_argument("--resamples", type=int, default=1000, help="bootstrap and permutation resamples")
    audit.add_argument("--knee-resamples", type=int, default=200,
                       help="resamples for the F_h/F_v intervals (knees re-detected in each; 0 to skip)")
    audit.add_argument("--bins", type=int, default=10, help="reliability-diagram bins (2–100)")
    audit.add_argument("--bin-strategy", choices=["uniform", "quantile"], default="uniform",
                       help="equal-width or equal-count reliability bins")
    audit.add_argument("--seed", type=int, default=0)
    audit.add_argument("--benefit", choices=["positive", "negative"], default=None,
                       help="which prediction is the benefit for OFI/DI/MATCH: 'positive' (score >= threshold) or "
                            "'negative' (e.g. COMPAS, where a low risk score is the benefit). Default 'positive', or "
                            "a bundled sample's own ('negative' for assets/compas.csv, as the thesis orients it)")
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
    gate = audit.add_argument_group("the Summary and the release gate")
    gate.add_argument("--reference", help="the group every other group is compared with in the Summary (default: "
                                          "a bundled sample's own, else the largest group)")
    gate.add_argument("--policy", type=Path, help="a TOML or JSON file: alpha, min_group_size, max_findings, "
                                                  "reference, and [materiality] thresholds per finding kind")
    gate.add_argument("--materiality", action="append", default=[], metavar="KIND=VALUE",
                      help=f"a materiality threshold (repeatable; kinds: {', '.join(KINDS)}); overrides --policy")
    gate.add_argument("--fail-on", choices=FAIL_ON, default="never",
                      help="'material': exit 1 when the Summary holds a material, significant finding, or when a "
                           "section of the audit could not be computed (the gate fails closed; the terminal and the "
                           "JSON's 'gate' name the section and why) — a CI gate")
    gate.add_argument("--junit", type=Path, help="write the findings as JUnit XML here (a headline finding fails)")
    gate.add_argument("--pdf", type=Path, help="write the HTML report as PDF here (headless Chromium prints it)")
    audit.set_defaults(handler=run)


def run(args) -> int:
    """One pipeline for every task: the options checked, the task (given or guessed) and its mapping, the predictions
    (the engine's table or the rows), the models added, then the plan's audit (``fairviz.report.plan.audit``) of
    every attribute, and the outputs."""
    check_numbers(args)
    limits = GroupLimits(max_groups=args.max_groups, max_pair_groups=args.max_pair_groups)
    policy = findings_policy(args)                      # a bad policy is named before any work
    check_paths(args)
    engine, source = open_source(args)
    frame = engine.preview(source)
    sample = match_sample(args.path) if isinstance(source, Files) else None
    args, note = apply_sample_settings(args, sample)
    guess = sample.mapping if sample is not None else guess_mapping(frame)
    spec = spec_of(task_of(args, frame, guess))
    check_task_options(args, spec)
    mapping = mapping_of(args, spec, frame, guess)
    try:
        pred, stats, scale_note, failed = predictions_of(args, spec, engine, source, mapping, limits)
    except ScoreDirectionError as err:
        raise DataError(f"{err} Give --score-direction reversed to use 1 − {mapping.score}, or --score-direction "
                        "as-is to audit the score as it is.") from err
    attribute = first_attribute(pred, args.intersect)
    pred = with_added_models(args, pred, attribute)
    options = audit_options(args, pred, attribute, policy, sample)
    audit = plan.audit(pred, options, every_attribute=True, failed=failed, slices=slice_options(args, pred),
                       options_of=options_of(pred, options, policy, sample))
    say_models_left_out(mapping, pred)
    if stats is not None:
        add_engine(audit, stats, replace(stats.mapping, score_scale=pred.mapping.score_scale,   # as validated
                                         more_scores=pred.mapping.more_scores, classes=pred.mapping.classes), note)
    elif note:
        audit.data["notes"].append(note)
    if scale_note:
        audit.data["notes"].append(scale_note)
    if args.dstar:
        rows = dstar_rows(engine, source, stats, pred, audit.results["residuals"])
        write_atomically(args.dstar, csv_bytes(rows))
        audit.data["notes"].append(f"D*: {len(rows):,} rows with every column of the input written to {args.dstar}.")
    return write_outputs(args, audit)


def check_numbers(args) -> None:
    """The numeric options, before any work."""
    if args.threshold is not None and not 0 <= args.threshold <= 1:
        raise DataError(f"--threshold must be in [0, 1], got {args.threshold}.")
    if args.cps_lambda < 0:
        raise DataError(f"--cps-lambda must be >= 0, got {args.cps_lambda}.")
    for flag, value in (("--resamples", args.resamples), ("--knee-resamples", args.knee_resamples)):
        if value < 0:
            raise DataError(f"{flag} must be 0 or more (0 skips resampling), got {value}.")
    if args.max_groups < 2 or args.max_pair_groups < 2:
        raise DataError("--max-groups and --max-pair-groups must be at least 2.")


def with_added_models(args, pred, attribute: str):
    """The predictions with the first model recalibrated (--recalibrate) and its per-group thresholds
    (--thresholds) added as models, each compared with it."""
    if args.recalibrate:
        scores, title, note = recalibrated_model(pred, args.recalibrate, params=RecalParams(
            methods=(args.recalibrate,), seed=args.seed))
        pred = pred.with_added_model(title, scores, note)
    if args.thresholds:
        pred = with_thresholds(pred, attribute, args.thresholds, args.seed)
    return pred


def audit_options(args, pred, attribute: str, policy: FindingsParams, sample) -> AuditParams:
    """The first attribute's audit settings from the options (a --match-reference group must be one of its)."""
    if args.match_reference not in ("complement", "population") and \
            args.match_reference not in pred.groups(attribute).names:
        raise DataError(f"--match-reference '{args.match_reference}' is neither 'complement', 'population' nor a "
                        f"group of '{attribute}' ({', '.join(pred.groups(attribute).names)}).")
    if not 2 <= args.bins <= 100:
        raise DataError(f"--bins must be between 2 and 100, got {args.bins}.")
    explain = None
    if args.explain:
        explain = ExplainAuditParams(settings=ExplainParams(n_pairs=args.explain_pairs, seed=args.seed))
    return AuditParams(attribute=attribute, threshold=args.threshold,
                       rdf=RDFParams(resamples=args.resamples, knee_resamples=args.knee_resamples, seed=args.seed,
                                     threshold=args.threshold),
                       calibration=CalibrationParams(n_bins=args.bins, strategy=args.bin_strategy,
                                                     resamples=args.resamples, seed=args.seed),
                       benefit=args.benefit, match=MatchParams(reference=args.match_reference, seed=args.seed),
                       cps_lambda=args.cps_lambda, explain=explain, compare=True, units=args.units,
                       **summary_params(sample, attribute, policy))


def mapped_rows(source: Files, mapping: ColumnMapping, limits: GroupLimits):
    """The predictions from one file's mapped columns, row by row (exact); (them, None: no engine table, the
    attributes that failed)."""
    columns = [c for c in dict.fromkeys((mapping.label, mapping.score, *(m.column for m in mapping.more_scores),
                                         *mapping.class_scores, *mapping.quantiles, mapping.predicted,
                                         *(c for m in mapping.more_scores for c in (*m.class_scores, m.predicted)),
                                         *mapping.groups, mapping.row_id))
               if c]
    rows, digest = read_table(source.files[0], columns=columns)
    pred, failed = failed_attributes(lambda groups, intersect: build_predictions(
        rows, replace(mapping, groups=groups, intersect=intersect), source=source.name, file_fingerprint=digest,
        limits=limits), mapping.groups, mapping.intersect)
    return pred, None, failed


def with_thresholds(pred, attribute: str, choice: str, seed: int):
    """The predictions with the first model's per-group threshold decisions added as a model. The engine's table holds
    identical rows as one entry; when the decisions split one, they are made on the rows themselves."""
    constraint = choice.replace("-", "_")
    try:
        scores, title, note = adjusted_model(pred, attribute, constraint, seed=seed)
    except DataError:
        if not pred.weighted:
            raise
        pred = decision_rows(pred)
        scores, title, note = adjusted_model(pred, attribute, constraint, seed=seed)
    return pred.with_added_model(title, scores, note)


def say_models_left_out(mapping: ColumnMapping, pred) -> None:
    """A model that validation left out (the same column twice, scores outside [0, 1], constant, reversed) is named
    on stderr; its note is in the JSON's notes too, and the first model's audit goes on."""
    titles = {f"Model '{model.title}' left out: " for model in mapping.more_scores}
    for note in pred.notes:
        if any(note.startswith(title) for title in titles):
            print(f"fairviz: {note}", file=sys.stderr)


def predictions_of(args, spec: TaskSpec, engine, source, mapping: ColumnMapping, limits: GroupLimits):
    """The predictions (checked: a score that runs the other way raises ``ScoreDirectionError``), the engine's table
    (None on the row path), the note on a guessed score scale and the attributes that failed. Probability scores
    are reduced by the engine, their scale settled in its SQL (one reduction for every attribute); other scores
    of one file are read row by row (the mapped columns only: exact), of a table, a query or a folder of files
    reduced by the engine, so their rows never reach Python."""
    if args.explain:
        return explained_rows(args, source, mapping, limits)
    if not spec.probability_scores and isinstance(source, Files) and (source.format == "csv" or len(source.files) == 1):
        return *mapped_rows(source, mapping, limits), ""
    if mapping.quantiles:
        raise DataError("Prediction-interval columns (--quantiles) are read row by row: point the audit at one "
                        "CSV or Parquet file.")
    stats, scale_note = reduce_scaled(engine, source, mapping) if spec.probability_scores else \
        (engine.reduce(source, mapping), "")
    pred, failed = failed_attributes(lambda groups, intersect: replace(
        stats, mapping=replace(stats.mapping, groups=groups, intersect=intersect)).predictions(limits),
        stats.mapping.groups, stats.mapping.intersect)
    return pred, stats, scale_note, failed


def explained_rows(args, source, mapping: ColumnMapping, limits: GroupLimits):
    """Explanations need the texts: the rows of one file (only the mapped columns read), its score's scale
    guessed from them."""
    if args.dstar:
        raise DataError("--dstar reads D* through the engine; run it without --explain.")
    if not isinstance(source, Files) or (source.format != "csv" and len(source.files) > 1):
        raise DataError("--explain reads the texts row by row: point it at one CSV or Parquet file.")
    columns = [c for c in dict.fromkeys((mapping.label, mapping.score, *(m.column for m in mapping.more_scores),
                                         *mapping.groups, mapping.text, mapping.row_id)) if c]
    frame, digest = read_table(source.files[0], columns=columns)
    numeric = mapping.score in frame and pd.api.types.is_numeric_dtype(frame[mapping.score])
    mapping, scale_note = with_guessed_scale(mapping, frame[mapping.score]) if numeric else (mapping, "")
    pred, failed = failed_attributes(lambda groups, intersect: build_predictions(
        frame, replace(mapping, groups=groups, intersect=intersect), source=source.name,
        file_fingerprint=digest, limits=limits), mapping.groups, mapping.intersect)
    return pred, None, scale_note, failed


def first_attribute(pred, intersect: bool) -> str:
    """The attribute at the JSON's top level: the intersection with --intersect (when it could be built: over the
    group cap it is recorded as failed), else the first group column."""
    last = pred.attribute_names[-1]
    return last if intersect and INTERSECTION_SEP in last else pred.attribute_names[0]


def slice_options(args, pred) -> SliceOptions | None:
    """The slice search --slices asks for (None without it), its options checked."""
    if not args.slices:
        return None
    if not 1 <= args.slice_depth <= 3:
        raise DataError(f"--slice-depth must be 1…3, got {args.slice_depth}.")
    if args.slice_metric:
        check_metric(args.slice_metric, pred.task)
    return SliceOptions(args.slice_depth, args.slice_min_support, args.slice_metric)


def options_of(pred, options: AuditParams, policy: FindingsParams, sample):
    """Every other attribute is audited as the first one is, with its own reference group (the policy's when it
    is one of its groups, else a bundled sample's for it) and MATCH reference."""
    def of(attribute: str) -> AuditParams:
        return replace(options, findings=findings_params_for(pred, attribute, policy, sample),
                       match=replace(options.match, reference=match_reference_for(pred, attribute,
                                                                                  options.match.reference)))
    return of


def write_outputs(args, audit) -> int:
    """The terminal text (the Summary first, then each section), the JSON, and the files asked for; returns the
    exit code. The gate fails closed: a section that failed (of any attribute) fails it as a finding does, and the
    terminal and the JSON's ``gate`` name the section and the reason."""
    text = audit.to_terminal()
    gated, failures = audit.gate_findings, audit.failures()
    code = exit_code(gated, args.fail_on, failures)
    if args.fail_on != "never":
        count = gated.material_count if gated is not None else 0
        text += "".join(f"\ngate: {failure_text(f)}; the audit is incomplete, so the gate fails" for f in failures)
        text += (f"\ngate (--fail-on {args.fail_on}): {count} material, significant finding"
                 f"{'s' if count != 1 else ''}, {len(failures)} failed section{'s' if len(failures) != 1 else ''} "
                 f"-> exit {code}")
        audit.data["gate"] = gate_record(gated, args.fail_on, failures)
    emit(text, audit.data, args.json, write=write_atomically)
    html = audit.to_html() if (args.html or args.pdf) else None
    if args.html:
        write_atomically(args.html, html)
    if args.junit:
        write_atomically(args.junit, junit_xml(gated, failures))
    if args.pdf:
        try:
            write_atomically(args.pdf, html_to_pdf(html))
        except PdfUnavailable as err:
            raise DataError(f"--pdf: {err}.") from err
    return code


def findings_policy(args) -> FindingsParams:
    """The Summary's policy: a policy file, then --materiality and --reference on top; stated in the output."""
    try:
        params = load_policy(args.policy) if args.policy else FindingsParams()
        thresholds = {}
        for item in args.materiality:
            kind, _, value = item.partition("=")
            thresholds[kind.strip()] = float(value)
        params = params.with_materiality(**thresholds)
    except PolicyError as err:
        raise DataError(str(err)) from err
    except ValueError as err:
        raise DataError(f"--materiality takes KIND=VALUE with a number ({err}).") from err
    if args.reference:
        from dataclasses import replace
        params = replace(params, reference=args.reference)
    return params


def check_paths(args) -> None:
    """Before any work: a local input that is not a regular file or folder is refused, and no output may replace
    an input or a folder, or share a path with another output."""
    local = Path(args.path) if args.path is not None and "://" not in str(args.path) else None
    try:
        if local is not None:
            check_input(local)
        check_outputs([p for p in (local, Path(args.database) if args.database else None) if p is not None],
                      {"--json": args.json, "--html": args.html, "--dstar": args.dstar, "--junit": args.junit,
                       "--pdf": args.pdf, "--policy": None})
    except OutputError as err:
        raise DataError(str(err)) from err


def open_source(args):
    """The engine and the source that the arguments name; every mismatch is one plain sentence."""
    given = [flag for flag, value in (("a path", args.path), ("--table", args.table), ("--query", args.query))
             if value is not None]
    if len(given) != 1:
        raise DataError("Give what to audit: a path, --table NAME or --query 'SELECT …'." if not given else
                        f"Give one source to audit, not {' and '.join(given)}.")
    if args.spark_remote and args.spark_master:
        raise DataError("Give --spark-master or --spark-remote, not both.")
    master = args.spark_remote or args.spark_master
    if args.spark_remote and not args.spark_remote.startswith("sc://"):
        raise DataError(f"--spark-remote takes a Spark Connect URL (sc://host:port), got '{args.spark_remote}'.")
    if master and args.engine != "spark":
        raise DataError(f"{'--spark-remote' if args.spark_remote else '--spark-master'} needs --engine spark.")
    if args.database and args.engine != "duckdb":
        raise DataError("--database names a DuckDB file: it needs --engine duckdb (the default).")
    if args.database and args.path is not None:
        raise DataError("--database goes with --table or --query, not with a path.")
    if args.dsn is not None and args.engine != "postgres":
        raise DataError("--dsn needs --engine postgres.")
    if args.dsn and dsn_has_password(args.dsn):
        raise DataError("--dsn carries a password, which any user can read in the process list: put it in "
                        "PGPASSWORD or ~/.pgpass and give the DSN without it.")
    if args.engine == "postgres" and args.memory_limit:
        raise DataError("--memory-limit is DuckDB's: the database sets its own memory.")
    engine = Engine(args.engine, master=master, memory_limit=args.memory_limit, dsn=args.dsn, database=args.database)
    if args.table is not None:
        return engine, Table(table_name(args.table), args.database)
    if args.query is not None:
        return engine, Query(read_only_query(args.query), args.database)
    return engine, locate(args.path, args.engine, engine.local)


def apply_sample_settings(args, sample):
    """Fill the threshold and benefit the user did not set: a bundled sample's own, else 0.5 and 'positive'.
    Returns (args, note), the note saying which settings came from the sample (empty when none did)."""
    args.threshold, args.benefit, note = sample_settings(args.threshold, args.benefit, sample)
    return args, note
