"""The headless audit: one JSON-able dict from validated predictions, the same numbers the pages show.

Each concept contributes a ``Section`` (run → result object; to_dict → its JSON keys; display → its display list);
which sections run, in which order, is the plan's choice (``fairviz.report.plan``), and ``run_sections`` runs them on
one attribute. The CLI, the page downloads, the HTML report and the terminal summary all render the same results, so
they never disagree. A section that fails is recorded (``errors`` in the JSON, a message in the report) and the
others carry on.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from fairviz.version import __version__
from fairviz.core.display import Group, text
from fairviz.core.serialize import clean
from fairviz.core.stats import MIN_INTERVAL_RESAMPLES, fewest_permutations
from fairviz.data import DataError, NotApplicable, Predictions
from fairviz.data.model import plain_value
from fairviz.core.checks import Check
from fairviz.findings import AttributesSummary, FindingsAudit, failed_attribute_text, has_candidates, summarise
from fairviz.findings.inputs import AuditResults
from fairviz.data.scales import score_statement
from fairviz.calibration import display as calibration
from fairviz.data.view import View
from fairviz.compare import CompareParams
from fairviz.compare import display as compare
from fairviz.data.tasks import spec_of
from fairviz.findings import display as summary_section
from fairviz.report.attributes import summary_display as across_display
from fairviz.report.html import render_html, task_statement
from fairviz.report.options import AuditParams, Section
from fairviz.report.render import to_html, to_terminal

log = logging.getLogger("fairviz.audit")


@dataclass
class Audit:
    data: dict                                  # the JSON
    results: dict = field(default_factory=dict)  # section name → result object (for figures)
    pred: Predictions | None = None
    params: AuditParams = field(default_factory=AuditParams)
    findings: FindingsAudit | None = None         # the Summary (None when it could not be computed)
    comparisons: dict = field(default_factory=dict)   # '<a>_vs_<b>' → ModelComparison (several models)
    planned: tuple[Section, ...] = ()             # the plan's sections for the task, in order (some may not have run)
    # several attributes (``fairviz.report.plan.audit``): each one's own audit (the first attribute's included), those
    # that failed, the Summary across them and the slice search's result
    attribute_audits: dict = field(default_factory=dict)
    failed_attributes: dict = field(default_factory=dict)
    across: AttributesSummary | None = None
    slices: object = None
    checked: AuditResults | None = None           # what the Summary reads: each check's typed result, by check name

    @property
    def several(self) -> bool:
        """Whether this audit covers more than one attribute or a slice search (the Summary is then across them)."""
        return self.across is not None and (len(self.attribute_audits) + len(self.failed_attributes) > 1
                                             or self.slices is not None)

    @property
    def gate_findings(self):
        """What the release gate reads: the Summary across attributes when there are several, else this one's."""
        return self.across if self.several else self.findings

    def failures(self) -> list[dict]:
        """What the gate cannot have checked ({"attribute", "section", "error"} each): every section that failed,
        of every attribute, each attribute that could not be audited, and a missing Summary. The release gate
        fails closed on any of them."""
        audits = self.attribute_audits or {self.params.attribute: self}
        out = [{"attribute": name, **error} for name, audit in audits.items()
               for error in self._own(name, audit).data.get("errors", [])]
        out += [{"attribute": name, "section": "attribute", "error": message}
                for name, message in self.failed_attributes.items()]
        if self.gate_findings is None and not out:
            out.append({"attribute": self.params.attribute, "section": "findings",
                        "error": "no Summary could be formed from the sections' records"})
        return out

    def summary_display(self) -> list:
        return summary_section.display(self.findings) if self.findings is not None else []

    @property
    def task(self) -> str:
        return self.data["task"]

    def sections(self) -> list[tuple[Section, object]]:
        return [(s, self.results[s.name]) for s in self.planned if s.name in self.results]

    def _own(self, name: str, audit: "Audit") -> "Audit":
        """An attribute's audit as this one holds it: the first attribute's is this one (its JSON carries what is
        across attributes: the slices' and the Summary's errors)."""
        return self if name == self.params.attribute else audit

    def display(self, section: Section) -> list:
        """One section's display list (its error message when it failed)."""
        result = self.results.get(section.name)
        error = next((e for e in self.data.get("errors", []) if e["section"] == section.name), None)
        if error is not None:
            return [text("This section could not be computed: {error}", "error", error=error["error"])]
        skipped = next((s for s in self.data.get("not_applicable", []) if s["section"] == section.name), None)
        if skipped is not None:
            return [text("Not applicable to these data: {reason}", "note", reason=skipped["reason"])]
        return section.display(section.given(self.pred), result, self.focused()) if section.display else []

    def focused(self) -> AuditParams:
        """The parameters with the Summary's reference and top group: each section's reading opens on that pair."""
        if self.findings is None:
            return self.params
        top = self.findings.top
        return replace(self.params, findings=replace(self.params.findings, reference=self.findings.reference),
                       focus=self.params.focus or (top[0].candidate.group if top else None))

    def to_html(self) -> str:
        """The report: the Summary across attributes when there are several, the first attribute's Summary and
        sections as a one-attribute report has them (the header names it), then each other attribute's, its own
        Summary first and every title naming it; the slices last."""
        if not self.several:
            return render_html(self.data, self._html_parts())
        parts = [("Summary across attributes", to_html(across_display(self.across))), *self._html_parts()]
        for name, audit in self.attribute_audits.items():
            if name != self.params.attribute:
                parts += [(f"{name} · {title}", inner) for title, inner in audit._html_parts()]
        parts += [(f"{name} · not audited", to_html([failed_attribute_text(name, message)]))
                  for name, message in self.failed_attributes.items()]
        if self.slices is not None:
            from fairviz.slices.display import slices_display
            parts.append(("Slices", to_html(slices_display(self.slices))))
        return render_html(self.data, parts)

    def _html_parts(self) -> list[tuple[str, str]]:
        parts = [("Summary", to_html(self.summary_display()))] if self.findings is not None else []
        if self.comparisons:
            parts.append(("Comparing models", to_html(compare.report_display(self.comparisons, self.params.words))))
        for section in self.planned:
            failed = self._failed(section)
            if section.display is not None or failed:
                items = self.display(section) if (section.name in self.results or failed) else []
                if items:                       # a section with nothing to show (e.g. no --explain) has no heading
                    parts.append((section.title or section.name, to_html(items)))
            elif section.name in self.results and section.to_html is not None:
                parts += section.to_html(section.given(self.pred), self.results[section.name], self.data)
        return parts

    def to_terminal(self) -> str:
        """What the terminal prints: each section's display list, detail groups (collapsed) left out."""
        d = self.data
        if spec_of(self.task).thresholded:
            blocks = [f"{d['source']}: {d['n_rows']:,} rows, attribute '{d['attribute']}', threshold {d['threshold']}, "
                      f"{score_statement(d.get('mapping', {}))}"]
        else:
            blocks = [f"{d['source']}: {d['n_rows']:,} rows, attribute '{d['attribute']}'"]
        blocks.append(task_statement(d))
        blocks += [f"  note: {note}" for note in d.get("notes", [])]
        if self.several:
            summary = [i for i in across_display(self.across) if not (isinstance(i, Group) and i.collapsed)]
            blocks.append("Summary across attributes\n" + to_terminal(summary, indent="  "))
        if self.findings is not None:
            summary = [i for i in self.summary_display() if not (isinstance(i, Group) and i.collapsed)]
            title = f"Summary of '{self.params.attribute}'" if self.several else "Summary"
            blocks.append(title + "\n" + to_terminal(summary, indent="  "))
        if self.comparisons:
            blocks.append("Comparing models\n" + to_terminal(compare.report_display(self.comparisons, self.params.words),
                                                            indent="  "))
        for section in self.planned:
            if section.display is None or (section.name not in self.results and not self._failed(section)):
                continue
            items = [i for i in self.display(section) if not (isinstance(i, Group) and i.collapsed)]
            if items:
                blocks.append((section.title or section.name) + "\n" + to_terminal(items, indent="  "))
        if self.several:
            blocks += self._other_attributes_terminal()
        return "\n".join(blocks)

    def _other_attributes_terminal(self) -> list[str]:
        """Every other attribute in brief: its own Summary (the JSON and the HTML report have its sections)."""
        blocks = []
        for name, audit in self.attribute_audits.items():
            if name == self.params.attribute:
                continue
            items = [i for i in audit.summary_display() if not (isinstance(i, Group) and i.collapsed)] or \
                [text("No Summary: {errors}", "error", errors="; ".join(e["error"] for e in audit.data.get("errors", [])))]
            blocks.append(f"Attribute '{name}' (its sections: the JSON's attributes.{name} and the HTML report)\n"
                          + to_terminal(items, indent="  "))
        blocks += [f"Attribute '{name}'\n" + to_terminal([failed_attribute_text(name, message)], indent="  ")
                   for name, message in self.failed_attributes.items()]
        return blocks

    def _failed(self, section: Section) -> bool:
        """Whether the section has no result to show but a reason: it failed, or it does not apply to these data."""
        return any(e["section"] == section.name
                   for e in (*self.data.get("errors", []), *self.data.get("not_applicable", [])))


def run_sections(pred: Predictions, options: AuditParams, checks: list[Check], closed_form: str = "") -> Audit:
    """One attribute's audit (``options.attribute``; None: the first mapped one): the section of each of ``checks``
    for the task (the plan's, in its order; ``options.sections`` keeps only those it names), the Summary from their
    typed results and, with several models and ``options.compare``, their comparison. ``closed_form``: the Summary's
    tests that need no resamples, in words."""
    sections = [check.section(pred.task) for check in checks]
    joint = pred.joint()
    pred = pred.at(View(model=pred.active_model))     # several models: the sections audit one, as a one-model audit
    attribute = options.attribute or pred.attribute_names[0]
    options = replace(options, attribute=attribute)
    data = {
        "fairviz_version": __version__,
        "source": pred.source,
        "task": pred.task,
        "n_rows": pred.n,
        "threshold": options.threshold,
        "attribute": attribute,
        "mapping": pred.mapping.to_dict(),
        "notes": list(pred.notes),
    }
    if spec_of(pred.task).numeric_target and options.units:
        data["units"] = options.units
    data["notes"] += resampling_notes(options, closed_form, knees=any(
        s.name == "residuals" and (options.sections is None or s.name in options.sections) for s in sections))
    results = {}
    errors, not_applicable = [], []
    for section in sections:
        if options.sections is not None and section.name not in options.sections:
            continue                            # the quick audit: only what the Summary tests
        given = section.given(pred)
        try:
            result = section.run(given, options)
            part = section.to_dict(given, result, options)
        except NotApplicable as reason:         # a role it reads is not mapped: skipped, said, not a failure
            not_applicable.append({"section": section.name, "reason": _describe(reason)})
            continue
        except (DataError, ValueError, ArithmeticError, LookupError, TypeError, RuntimeError, MemoryError) as err:
            # a failing section must not sink the audit: recorded, and the rest carries on; a DataError is the data's
            # plain answer (no confidence column for top-label calibration), not a fault, so no traceback
            if isinstance(err, DataError):
                log.warning("section %s: %s", section.name, _describe(err))
            else:
                log.exception("section %s failed", section.name)
            errors.append({"section": section.name, "error": _describe(err)})
            continue
        results[section.name] = result
        merge_section(data, part)
    if options.sections is not None:
        data["sections_skipped"] = [s.name for s in sections if s.name not in options.sections]
    checked = checked_results(pred, options, checks, sections, results)
    findings = _findings(checked, data, options, errors)
    comparisons = _comparisons(joint, data, options, errors)
    if errors:
        data["errors"] = errors
    if not_applicable:
        data["not_applicable"] = not_applicable
    return Audit(clean(data), results, pred, options, findings, comparisons, tuple(sections), checked=checked)


def checked_results(pred: Predictions, options: AuditParams, checks: list[Check], sections: list[Section],
                    results: dict) -> AuditResults:
    """What the Summary reads of this audit: each check's typed result by the check's name (whichever task's method
    computed it), the checks the quick audit skipped, and the settings its sentences name."""
    skipped = tuple(c.name for c, s in zip(checks, sections)
                    if options.sections is not None and s.name not in options.sections)
    return AuditResults(options.attribute, options.threshold,
                        {c.name: results[s.name] for c, s in zip(checks, sections) if s.name in results}, skipped,
                        pred.task, pred.mapping.label, plain_value(pred.mapping.positive_label),
                        options.units if spec_of(pred.task).numeric_target else None)


def resampling_notes(options: AuditParams, closed_form: str, knees: bool = True) -> list[str]:
    """What too few resamples leave out, said plainly: intervals and tests that are not computed are null in the
    JSON and "—" or "not tested" on screen, never an interval or a p-value from a handful of draws. ``closed_form``:
    the Summary's tests that need none, in words (``fairviz.report.plan.closed_form_tests``)."""
    rdf, alpha = options.rdf, options.findings.alpha
    need = fewest_permutations(alpha)
    notes = []
    if rdf.resamples < need:
        notes.append(f"{rdf.resamples} resamples (--resamples): bootstrap intervals are not computed below "
                     f"{MIN_INTERVAL_RESAMPLES} resamples (null in the JSON, '—' in the report), and a permutation "
                     f"test of fewer than {need} cannot reach α = {alpha:g}, so it counts as not tested."
                     + (f" The Summary's closed-form tests ({closed_form}) need no resamples." if closed_form else ""))
    knee_draws = min(rdf.knee_resamples, rdf.resamples)
    if knees and 0 < knee_draws < MIN_INTERVAL_RESAMPLES:
        notes.append(f"{knee_draws} knee resamples (--knee-resamples): the F_h/F_v intervals need at least "
                     f"{MIN_INTERVAL_RESAMPLES} resamples; they are not computed (null in the JSON).")
    return notes


def _comparisons(joint: Predictions, data: dict, options: AuditParams, errors: list) -> dict:
    """With several models and ``options.compare``: the first model against each other (``comparison`` in the
    JSON), at the audit's threshold, benefit, reference and resamples (a regression: its errors by paired t-tests)."""
    if not options.compare or not joint.several_models:
        return {}
    params = CompareParams(resamples=options.rdf.resamples, permutations=options.rdf.resamples,
                           seed=options.rdf.seed, alpha=options.findings.alpha,
                           min_group_size=options.findings.min_group_size)
    reference = (data.get("findings") or {}).get("reference") or options.findings.reference
    try:
        found = compare.compare_all(joint, data["attribute"], options.threshold, options.benefit, reference, params,
                                    options.units)
    except (DataError, ValueError, ArithmeticError, LookupError, TypeError, RuntimeError, MemoryError) as err:
        log.exception("comparison failed")
        errors.append({"section": "comparison", "error": _describe(err)})
        return {}
    data["comparison"] = {name: compare.to_dict(r, options.words) for name, r in found.items()}
    return found


def _findings(checked: AuditResults, data: dict, options: AuditParams, errors: list) -> FindingsAudit | None:
    """The Summary across sections, from their typed results (``findings`` in the JSON)."""
    if not has_candidates(checked):
        return None
    try:
        findings = summarise(checked, options.findings, options.words)
        data["findings"] = summary_section.findings_to_dict(findings)      # its sentences can fail too
    except (ValueError, ArithmeticError, LookupError, TypeError) as err:
        log.exception("findings failed")
        errors.append({"section": "findings", "error": _describe(err)})
        return None
    return findings


def _describe(err: BaseException) -> str:
    if isinstance(err, DataError):
        return "; ".join(err.problems)
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__


def merge_section(data: dict, part: dict) -> None:
    """Add one section's keys to the audit: ``pairs`` entries are merged by (group_i, group_j) and ``groups``
    entries by group name, so every section extends the same pair and group records instead of replacing them; a
    check's envelope written by two sections (parity and the sample size's MATCH and CPS) gains the second's keys."""
    for key, value in part.items():
        if key == "pairs" and "pairs" in data:
            index = {(p["group_i"], p["group_j"]): p for p in data["pairs"]}
            for entry in value:
                existing = index.get((entry["group_i"], entry["group_j"]))
                if existing is None:
                    data["pairs"].append(entry)
                else:
                    existing.update(entry)
        elif key == "groups" and isinstance(data.get("groups"), dict):
            for name, fields in value.items():
                data["groups"].setdefault(name, {}).update(fields)
        elif isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key].update(value)
        else:
            data[key] = value
