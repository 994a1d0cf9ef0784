"""Every mapped attribute in one audit (issue 26): the plan (``fairviz.report.plan.audit``) runs each attribute's
sections on the same predictions; this module adds what is across them: the JSON's ``attributes``, the Summary across
attributes (one Benjamini–Hochberg family), and optionally the slice search's top slices.

What does not depend on the attribute is done once: the engine's reduction and the validation (the caller's one
``Predictions`` for every attribute), the expansion of weighted entries to rows (kept on that object, so every
section of every attribute reads the same rows), the model comparison and the explanations (the first attribute's
only: they train or resample per model, not per group). Each attribute's sections run on its own groups.

JSON: the first attribute's keys stay at the top level, as a one-attribute audit writes them; ``attributes`` holds
one record per attribute (the first included: its groups, pairs, calibration, match, findings, errors …) or
``{"attribute": name, "error": message}`` for one that could not be audited; ``summary`` is the Summary across
attributes; ``slices`` the slice search's ``SliceResult.to_dict()``.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Callable

from fairviz.core.display import Bullets, Group, Item, join, text
from fairviz.core.serialize import clean
from fairviz.data import DataError, Predictions
from fairviz.data.model import INTERSECTION_SEP
from fairviz.data.tasks import spec_of
from fairviz.findings import (AttributesSummary, FindingsParams, SliceFinding, across_headline_text, nothing_found_text,
                              across_policy_text, across_unremarkable_text, attributed_text, failed_attribute_text,
                              slice_finding_text, small_group_text, summarise_attributes, untested_text)
from fairviz.findings.display import finding_row
from fairviz.report.options import AuditParams
from fairviz.slices import SliceParams, find_slices, slice_counts
from fairviz.slices.metrics import check_metric, default_metric
from fairviz.slices.readings import CORRECTION_NAMES, metric_title

log = logging.getLogger("fairviz.audit")

# the keys every attribute shares (the data, the settings, the models): written once, at the top level
SHARED_KEYS = frozenset({"fairviz_version", "source", "task", "n_rows", "threshold", "mapping", "notes", "engine",
                         "units", "comparison"})
SLICE_DEPTH = 2


@dataclass(frozen=True)
class SliceOptions:
    """The slice search the audit adds (``fairviz audit --slices``): depth, support floor (None: the policy's
    min_group_size), metric and how many significant slices the Summary lists (None: the policy's max_findings)."""
    depth: int = SLICE_DEPTH
    min_support: float | None = None
    # None: the task's own (its spec's error_metric: binary FPR, regression the mean residual, multiclass the error rate)
    metric: str | None = None
    top: int | None = None


def attribute_record(data: dict) -> dict:
    """One attribute's part of an audit's JSON: everything but the keys every attribute shares."""
    return {k: list(v) if k == "errors" else v for k, v in data.items() if k not in SHARED_KEYS}   # errors: its own


def audited_attributes(pred: Predictions) -> list[str]:
    """Every attribute the data maps (the intersection too, when it was asked for), in the mapping's order."""
    return list(pred.attribute_names)


def failed_attributes(build: Callable[[tuple[str, ...], bool], Predictions], groups: tuple[str, ...],
                      intersect: bool = False) -> tuple[Predictions, dict[str, str]]:
    """The predictions of every group column that validates (and of the intersection of the first two, when asked
    for and within the group cap), and the plain message of each attribute that does not (a single value, too many
    groups). ``build(groups, intersect)`` validates the mapping with those group columns; it is called once when all
    pass, else once per column and once for what passed. A failure that is not about one column (the score, the
    label) fails every column alone too and is raised as it is."""
    try:
        return build(groups, intersect), {}
    except DataError as err:
        if len(groups) < 2:
            raise
        whole = err
    failed = {}
    for column in groups:
        try:
            build((column,), False)
        except DataError as err:
            failed[column] = "; ".join(err.problems)
    kept = tuple(c for c in groups if c not in failed)
    if not kept or (not failed and not intersect):
        raise whole
    if intersect:
        name = f"{groups[0]}{INTERSECTION_SEP}{groups[1]}"
        lost = [c for c in groups[:2] if c in failed]
        if lost:
            failed[name] = f"it needs '{lost[0]}', which could not be audited."
        else:
            try:
                return build(kept, True), failed
            except DataError as err:
                failed[name] = "; ".join(err.problems)
    return build(kept, False), failed


def same_options(pred: Predictions, options: AuditParams) -> Callable[[str], AuditParams]:
    """Another attribute's parameters when the caller gives none: these, the Summary's reference kept only when it
    is one of that attribute's groups and MATCH's reference only when it is 'complement', 'population' or one of
    them (a group of the first attribute: this one compares with the rest)."""
    def options_of(attribute: str) -> AuditParams:
        return replace(options, findings=findings_params_for(pred, attribute, options.findings),
                       match=replace(options.match, reference=match_reference_for(pred, attribute,
                                                                                  options.match.reference)))
    return options_of


def match_reference_for(pred: Predictions, attribute: str, reference: str) -> str:
    """MATCH's reference for ``attribute``: 'complement' when ``reference`` is a group it does not have."""
    if reference in ("complement", "population") or reference in pred.groups(attribute).names:
        return reference
    return "complement"


def every_attribute_data(first: dict, records: dict[str, dict], failed: dict[str, str]) -> dict:
    """The JSON of an audit of every attribute: the first attribute's (a copy: its own audit keeps its JSON) with
    ``attributes``, one record per attribute (``records``: each one's JSON, the first's included) or its failure."""
    data = {**first, "notes": list(first.get("notes", []))}
    if "errors" in first:
        data["errors"] = list(first["errors"])
    data["attributes"] = {name: attribute_record(record) for name, record in records.items()}
    for name, message in failed.items():
        data["attributes"][name] = {"attribute": name, "error": message}
    if len(records) > 1 and "comparison" in data:
        data["notes"].append(f"Models are compared on the groups of '{first['attribute']}' (the first attribute).")
    return data


def add_slices(data: dict, pred: Predictions, params: AuditParams, options: SliceOptions):
    """The slice search over the group columns (not an intersection: slices are every intersection), at the
    audit's τ, into ``data`` (``slices``, or its error): (its result or None, its significant slices, best first,
    which become the Summary's slice findings)."""
    support = options.min_support if options.min_support is not None else params.findings.min_group_size
    try:
        result = slice_search(pred, options.depth, support, params.threshold, options.metric, params.findings.alpha,
                              params.cps_lambda)
    except (DataError, ValueError, ArithmeticError, LookupError, TypeError, MemoryError) as err:
        message = "; ".join(err.problems) if isinstance(err, DataError) else f"{type(err).__name__}: {err}"
        log.warning("slices: %s", message)
        data.setdefault("errors", []).append({"section": "slices", "error": message})
        return None, ()
    data["slices"] = clean(result.to_dict())
    return result, top_slices(result, options.top if options.top is not None else params.findings.max_findings)


def slice_search(pred: Predictions, depth: int, min_support: float, threshold: float, metric: str | None = None,
                 alpha: float = 0.05, cps_lambda: float = 5.0):
    """The slice search over the data's group columns (not an intersection: the slices are every intersection), on
    ``metric`` (None: the task's default)."""
    columns = [a for a in pred.attribute_names if INTERSECTION_SEP not in a]
    metric = metric or default_metric(pred.task)
    check_metric(metric, pred.task)
    counts = slice_counts(pred, columns, depth, min_support, threshold)
    return find_slices(counts, SliceParams(metric=metric, alpha=alpha, cps_lambda=cps_lambda))


def top_slices(result, count: int) -> tuple[SliceFinding, ...]:
    """The ``count`` significant slices the search ranks first (largest difference from the rest)."""
    return tuple(slice_finding(row, result) for _, row in result.significant.head(count).iterrows())


def slice_finding(row, result) -> SliceFinding:
    ci = (float(row["ci_low"]), float(row["ci_high"])) if row["ci_low"] == row["ci_low"] else None
    return SliceFinding(str(row["slice"]), float(row["n"]), metric_title(result.params.metric, result.counts.task),
                        float(row["metric"]),
                        float(row["rest"]), float(row["difference"]), ci, float(row["p_adjusted"]),
                        CORRECTION_NAMES[result.params.correction].split(" (")[0])


def add_summary(data: dict, audits: dict, failed: dict[str, str], slices: tuple[SliceFinding, ...],
                words) -> AttributesSummary | None:
    """The Summary across attributes (``summary`` in ``data``, or its error) from each attribute's audit."""
    records = {name: a.checked for name, a in audits.items() if not _summary_failed(a)}
    unsummarised = {name: _summary_error(a) for name, a in audits.items() if _summary_failed(a)}
    params = {name: a.params.findings if a.findings is None else a.findings.params for name, a in audits.items()}
    try:
        summary = summarise_attributes(records, params, words, {**failed, **unsummarised}, slices)
    except (ValueError, ArithmeticError, LookupError, TypeError) as err:
        log.exception("the Summary across attributes failed")
        data.setdefault("errors", []).append({"section": "summary", "error": f"{type(err).__name__}: {err}"})
        return None
    data["summary"] = clean(summary_to_dict(summary))
    return summary


def _summary_failed(audit) -> bool:
    return audit.findings is None


def _summary_error(audit) -> str:
    errors = audit.data.get("errors", [])
    return "; ".join(f"{e['section']}: {e['error']}" for e in errors) or "no comparison could be made"


def summary_to_dict(summary: AttributesSummary) -> dict:
    return {
        "attributes": list(summary.attributes),
        "references": dict(summary.references),
        "threshold": summary.threshold,
        "benefit": summary.benefit,
        "policy": {"alpha": summary.params.alpha, "correction": "benjamini-hochberg",
                   "family": "every comparison of every attribute",
                   "min_group_size": summary.params.min_group_size, "max_findings": summary.params.max_findings},
        "top": [finding_row(f, summary, attributed_text(f, summary).plain()) for f in summary.top],
        "material_count": summary.material_count,
        "slices": [{"slice": s.slice, "n": s.n, "metric": s.metric, "value": s.value, "rest": s.rest,
                    "difference": s.difference, "ci": list(s.ci) if s.ci else None, "p_adjusted": s.p_adjusted,
                    "correction": s.correction, "sentence": slice_finding_text(s).plain()} for s in summary.slices],
        "failed": dict(summary.failed),
        "too_small": [{"attribute": s.attribute, "group": s.group, "n": s.n,
                       "sentence": small_group_text(s, summary.params.min_group_size).plain()}
                      for s in summary.small_groups],
        "candidates": [finding_row(f, summary, attributed_text(f, summary).plain()) for f in summary.findings],
    }


def summary_display(summary: AttributesSummary) -> list[Item]:
    """The Summary across attributes: the headline, the top findings (each naming its attribute), the top slices,
    the attributes that could not be audited, what was unremarkable, the groups too small to tell, the policy, and
    every other comparison as detail."""
    items: list[Item] = [across_headline_text(summary)]
    if summary.top:
        items.append(Bullets(tuple(attributed_text(f, summary, "plain") for f in summary.top), "finding"))
    if summary.slices:
        items.append(Bullets(tuple(slice_finding_text(s, "plain") for s in summary.slices), "finding"))
    items += [failed_attribute_text(a, m) for a, m in summary.failed]
    for note in (across_unremarkable_text(summary), untested_text(summary)):
        if note is not None:
            items.append(note)
    if summary.small_groups:
        items.append(Bullets(tuple(join(text("{a}: ", "note", a=s.attribute),
                                        small_group_text(s, summary.params.min_group_size), level="note")
                                   for s in summary.small_groups), "note"))
    items.append(across_policy_text(summary))
    others = [f for f in summary.findings if f not in summary.top]
    if others:
        items.append(Group("Every comparison tested", tuple(attributed_text(f, summary, "note") for f in others),
                           key="summary.all", collapsed=True))
    return items


def findings_params_for(pred: Predictions, attribute: str, base: FindingsParams, sample=None) -> FindingsParams:
    """An attribute's policy: the base's, with its reference kept only when it is one of this attribute's groups
    (a --reference names a group of the first attribute), else the bundled sample's reference for it, else none
    (the largest group)."""
    reference = base.reference
    try:
        names = pred.groups(attribute).names
    except DataError:
        names = ()
    if reference not in names:
        reference = (sample.reference_groups.get(attribute) if sample is not None else None)
    return replace(base, reference=reference)


def other_attributes_display(found: list[tuple[str, object, str | None]], slices: tuple[SliceFinding, ...] = (),
                             slice_note: Item | None = None) -> list[Item]:
    """Home's compact "Other attributes": each other attribute's top finding (its own Summary's first), or that
    nothing was found, or why it could not be audited; then the top slices (or why there are none) when a slice
    search ran. Always a title and one list, so a τ step updates the part in place."""
    lines = []
    for attribute, summary, error in found:
        if error is not None or summary is None:
            lines.append(failed_attribute_text(attribute, error or "no comparison could be made"))
        elif summary.top:
            lines.append(attributed_text(summary.top[0], summary, "plain"))
        else:
            lines.append(nothing_found_text(summary))
    lines += [slice_finding_text(s, "plain") for s in slices]
    if slice_note is not None:
        lines.append(slice_note)
    return [text("Other attributes", "subheading"), Bullets(tuple(lines), "plain")]
