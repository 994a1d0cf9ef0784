"""The Python API: ``fairviz.audit(data, label=…, score=…, group=…)`` — the CLI's audit, from a notebook.

``data`` is a path or URL (as ``fairviz audit PATH``), a pandas or Polars DataFrame or an Arrow table (handed to DuckDB
as Arrow: no copy of numeric columns), a Spark DataFrame (reduced on its own session, so on its own cluster), or None
with ``table=`` / ``query=`` on a DuckDB file (``database=``), Spark or PostgreSQL (``engine="postgres"``, ``dsn=``).
Only the reduced table (counts per group, label and score cell) comes back to Python; the audit reads it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from fairviz.calibration import CalibrationParams
from fairviz.data import ColumnMapping, DataError, guess_mapping
from fairviz.data.engine import Engine, SufficientStats
from fairviz.data.limits import MAX_GROUPS, MAX_PAIR_GROUPS, GroupLimits
from fairviz.data.samples import match_sample
from fairviz.data.scales import DIRECTIONS, SCALES, with_guessed_scales
from fairviz.findings import FindingsParams, finding_text
from fairviz.findings.display import findings_settings
from fairviz.data.sources import Files, Frame, Query, Table, is_spark_frame, locate, read_only_query, table_name
from fairviz.data.model import INTERSECTION_SEP
from fairviz.report import plan
from fairviz.report.attributes import failed_attributes, findings_params_for, match_reference_for
from fairviz.report.audit import Audit, AuditParams
from fairviz.residuals import RDFParams
from fairviz.sample_size.analysis import MatchParams


@dataclass(frozen=True)
class AuditResult:
    """An audit of reduced data: its JSON (``to_dict``), its HTML report, its terminal text and its findings."""

    audit: Audit
    stats: SufficientStats

    def to_dict(self) -> dict:
        return self.audit.data

    def to_html(self) -> str:
        return self.audit.to_html()

    def to_terminal(self) -> str:
        """What ``fairviz audit`` prints: the Summary, then each section's display list."""
        return self.audit.to_terminal()

    @property
    def results(self) -> dict:
        """Section name → its typed result (``ResidualAudit``, ``CalibrationAudit`` …)."""
        return self.audit.results

    @property
    def findings(self) -> list[str]:
        """The Summary's top findings, as sentences (significant after Benjamini–Hochberg, material, about groups
        large enough); ``audit.findings`` holds every comparison with its numbers."""
        summary = self.audit.findings
        return [] if summary is None else [finding_text(f, summary).plain() for f in summary.top]


def audit(data=None, label: str | None = None, score: str | None = None, group: str | list[str] | None = None, *,
          positive_label=None, intersect: bool = False, threshold: float | None = None, benefit: str | None = None,
          score_scale: str | None = None, score_direction: str | None = None,
          table: str | None = None, query: str | None = None, database: str | None = None, engine: str | None = None,
          dsn: str | None = None, spark_master: str | None = None, resamples: int = 1000, knee_resamples: int = 200,
          bins: int = 10, bin_strategy: str = "uniform", match_reference: str = "complement", cps_lambda: float = 5.0,
          max_groups: int = MAX_GROUPS, max_pair_groups: int = MAX_PAIR_GROUPS, seed: int = 0,
          findings: FindingsParams = FindingsParams()) -> AuditResult:
    """Audit predictions where they live; roles not given are guessed from the names, as the CLI does. Threshold
    and benefit default to 0.5 and 'positive' (a bundled sample's own for its file). ``score_scale``
    ('probability', 'percent', 'logit'; default guessed, see ``reduce_scaled``) and ``score_direction`` ('as-is',
    'reversed'; default checked: a score that runs the other way raises ``ScoreDirectionError``) as the CLI's flags."""
    check_score_options(score_scale, score_direction)
    runner, source = open_data(data, table=table, query=query, database=database, engine=engine, dsn=dsn,
                               spark_master=spark_master)
    try:
        frame = runner.preview(source)
        sample = match_sample(data) if isinstance(source, Files) else None
        threshold, benefit, note = sample_settings(threshold, benefit, sample)
        guess = sample.mapping if sample is not None else guess_mapping(frame)
        groups = (group,) if isinstance(group, str) else tuple(group) if group else guess.groups
        mapping = ColumnMapping(label=label or guess.label, score=score or guess.score, groups=groups,
                                positive_label=positive_label if positive_label is not None else guess.positive_label,
                                text=guess.text if guess.text in frame else None, row_id=guess.row_id,
                                intersect=intersect, score_scale=score_scale, score_direction=score_direction)
        stats, scale_note = reduce_scaled(runner, source, mapping)
        mapping = stats.mapping
    finally:
        runner.close()
    limits = GroupLimits(max_groups=max_groups, max_pair_groups=max_pair_groups)
    pred, failed = failed_attributes(lambda groups, both: replace(
        stats, mapping=replace(stats.mapping, groups=groups, intersect=both)).predictions(limits),
        stats.mapping.groups, stats.mapping.intersect)
    last = pred.attribute_names[-1]
    attribute = last if intersect and INTERSECTION_SEP in last else pred.attribute_names[0]
    params = AuditParams(attribute=attribute, threshold=threshold, benefit=benefit, cps_lambda=cps_lambda,
                         rdf=RDFParams(resamples=resamples, knee_resamples=knee_resamples, seed=seed,
                                       threshold=threshold),
                         calibration=CalibrationParams(n_bins=bins, strategy=bin_strategy, resamples=resamples,
                                                       seed=seed),
                         match=MatchParams(reference=match_reference, seed=seed),
                         **summary_params(sample, attribute, findings))
    result = plan.audit(pred, params, every_attribute=True, failed=failed, options_of=lambda name: replace(
        params, findings=findings_params_for(pred, name, findings, sample),
        match=replace(params.match, reference=match_reference_for(pred, name, match_reference))))
    add_engine(result, stats, replace(mapping, score_scale=pred.mapping.score_scale,   # as validated
                                      more_scores=pred.mapping.more_scores, classes=pred.mapping.classes), note)
    if scale_note:
        result.data["notes"].append(scale_note)
    return AuditResult(result, stats)


def check_score_options(scale: str | None, direction: str | None) -> None:
    if scale is not None and scale not in SCALES:
        raise DataError(f"The score scale must be one of {', '.join(SCALES)}, not '{scale}'.")
    if direction is not None and direction not in DIRECTIONS:
        raise DataError(f"The score direction must be one of {', '.join(DIRECTIONS)}, not '{direction}'.")


def reduce_scaled(runner: Engine, source, mapping: ColumnMapping) -> tuple[SufficientStats, str]:
    """The engine's reduction with the score's scale settled: a given scale is converted in the SQL; without one the
    score is reduced as a probability, and when its values leave [0, 1] and unambiguously read as percentages or
    logits (``fairviz.data.scales.resolved_scale``) the source is reduced again with that conversion, which the note
    states. The range comes from the table itself (it keeps the smallest and largest score), so no sample decides."""
    stats = runner.reduce(source, mapping)
    if all(model.scale is not None for model in mapping.models()):
        return stats, ""

    def values_of(column: str) -> np.ndarray:
        return pd.to_numeric(stats.table[column], errors="coerce").to_numpy(dtype=float)

    scaled, note = with_guessed_scales(mapping, values_of)
    if all(model.scale in (None, "probability") for model in scaled.models()):
        return stats, ""          # validation names the range and what it looks like
    return runner.reduce(source, scaled), note


def open_data(data=None, *, table: str | None = None, query: str | None = None, database: str | None = None,
              engine: str | None = None, dsn: str | None = None, spark_master: str | None = None):
    """The engine and the source for ``data`` (or ``table``/``query``): a Spark DataFrame picks Spark and its own
    session, anything in memory DuckDB through Arrow, a path the engine asked for (DuckDB by default)."""
    if sum(x is not None for x in (data, table, query)) != 1:
        raise DataError("Give one thing to audit: data (a path or a DataFrame), table= or query=.")
    if is_spark_frame(data):
        if engine not in (None, "spark"):
            raise DataError("A Spark DataFrame is reduced on its own Spark session: leave engine unset.")
        return Engine("spark", session=data.sparkSession), Frame(data, "Spark DataFrame")
    kind = engine or ("postgres" if dsn is not None else "duckdb")
    runner = Engine(kind, master=spark_master, dsn=dsn, database=database)
    if table is not None:
        return runner, Table(table_name(table), database)
    if query is not None:
        return runner, Query(read_only_query(query), database)
    if isinstance(data, (str, Path)):
        return runner, locate(data, kind, runner.local)
    if kind != "duckdb":
        raise DataError(f"A DataFrame in memory is reduced by DuckDB, not by {kind}: leave engine unset.")
    return runner, Frame(as_arrow(data), type(data).__name__)


def as_arrow(data):
    """pandas, Polars or Arrow → an Arrow table (Polars and numeric pandas columns without a copy)."""
    import pyarrow as pa
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pd.DataFrame):
        return pa.Table.from_pandas(data, preserve_index=False)
    if type(data).__module__.startswith("polars") and hasattr(data, "to_arrow"):
        return data.to_arrow()
    raise DataError(f"fairviz.audit reads a path, a pandas, Polars or Spark DataFrame or an Arrow table, "
                    f"not {type(data).__name__}.")


def summary_params(sample, attribute: str, base: FindingsParams = FindingsParams()) -> dict:
    """The Summary's settings for ``AuditParams``: the policy, with a bundled sample's reference group and words."""
    findings, words = findings_settings(sample, attribute, base)
    return {"findings": findings, "words": words}


def sample_settings(threshold: float | None, benefit: str | None, sample) -> tuple[float, str, str]:
    """The threshold and benefit not set: a bundled sample's own, else 0.5 and 'positive'; and the note saying which
    settings came from the sample (empty when none did)."""
    from_sample = []
    if threshold is None:
        threshold = sample.threshold if sample is not None else 0.5
        if sample is not None:
            from_sample.append(f"threshold {sample.threshold:g}")
    if benefit is None:
        benefit = sample.benefit if sample is not None else "positive"
        if sample is not None:
            from_sample.append(f"benefit = the {sample.benefit} prediction")
    if sample is None or not from_sample:
        return threshold, benefit, ""
    return threshold, benefit, (f"This file is the bundled sample '{sample.title}': its settings apply "
                                f"({', '.join(from_sample)}), as in the app; pass --threshold/--benefit to change them.")


def add_engine(result: Audit, stats: SufficientStats, mapping: ColumnMapping, note: str = "") -> None:
    """What the JSON says of a reduced audit: the engine and its table, and the roles as chosen."""
    result.data["engine"] = stats.to_dict()
    result.data["mapping"] = mapping.to_dict()      # the roles as chosen (the table itself carries only some)
    if note:
        result.data["notes"].append(note)
