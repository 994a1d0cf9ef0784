"""The audit plan: which checks run, in which order, for a task, and the ONE path that runs them.

``CHECKS`` lists every check once, in the order the report shows them, whatever the task; a check serves the tasks
it registers a method for (``fairviz.core.checks.Check``), so a task's sections are the sections of the checks that
serve it (``sections_for``) and a fourth task is served by registering methods, not by editing this module.
``audit`` is what the CLI, the Python API, the app and the Summary call: one attribute's sections, and with
``every_attribute`` every other mapped attribute's, the Summary across them and the slice search.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from fairviz.core.checks import Check, Section
from fairviz.data import DataError, Predictions
from fairviz.calibration import display as calibration
from fairviz.explain import display as explain
from fairviz.findings import FindingsParams
from fairviz.parity import display as parity
from fairviz.report import attributes
from fairviz.residuals import display as residuals
from fairviz.sample_size import display as sample_size
from fairviz.report.audit import Audit, run_sections
from fairviz.report.options import AuditParams

# every check once, in the order the report shows them: each concept declares which tasks it serves and how
CHECKS: tuple[Check, ...] = (residuals.CHECK, residuals.THRESHOLD_CHECK, calibration.CHECK, parity.CHECK,
                             sample_size.CHECK, calibration.PER_CLASS_CHECK, explain.CHECK)

# The Summary's quick audit: the checks whose closed-form tests it reads — parity (every candidate it can rank
# without resampling) and the sample size (MATCH's verdict on the groups under the size floor, run only when one is)
QUICK_CHECKS = ("parity", "sample_size")

# what the Summary's closed-form tests are, by the parity method that computes them (said when resamples are few)
CLOSED_FORM = {parity.SECTION.name: "FPR, FNR and selection-rate gaps, OFI",
               parity.MULTICLASS_PARITY.name: "per-class TPR gaps, OFI",
               parity.REGRESSION_PARITY.name: "the bias and MAE gaps, by Welch's t-test"}


def check(name: str) -> Check:
    return next(c for c in CHECKS if c.name == name)


def checks_for(task) -> list[Check]:
    """The checks an audit of ``task`` (a name, a spec or predictions) runs: each that serves it, in ``CHECKS``
    order."""
    return [c for c in CHECKS if c.serves(task)]


def sections_for(task) -> list[Section]:
    """The sections an audit of ``task`` runs: each serving check's method for it."""
    return [c.section(task) for c in checks_for(task)]


def quick_sections(task) -> tuple[str, ...]:
    """The section names of the Summary's quick audit for ``task``: the parity method first, then the sample size's
    (when the task has one)."""
    return tuple(check(name).section(task).name for name in QUICK_CHECKS if check(name).serves(task))


def summary_sections(pred: Predictions, attribute: str, params: FindingsParams | None = None) -> tuple[str, ...]:
    """The sections the Summary's quick audit runs: parity, whose closed-form tests (rate gaps, OFI) are every candidate
    it can rank without resampling, and the sample size only when a group is under the size floor (MATCH's verdict is
    all the Summary reads of it: 0.15 s at 1M rows). F_dist and the ECE gap are tested by resampling, which the
    quick audit skips, so their sections do not run and the Summary names them "not tested here"."""
    quick = quick_sections(pred.task)
    floor = (params or FindingsParams()).min_group_size
    try:
        sizes = pred.groups(attribute).sizes
    except DataError:
        return quick                                  # the sections say what is wrong with the attribute
    return quick if min(sizes) < floor else quick[:1]


def closed_form_tests(task) -> str:
    """The Summary's tests that need no resamples, in words (empty when the task's parity method has none named)."""
    parity_check = check("parity")
    return CLOSED_FORM.get(parity_check.section(task).name, "") if parity_check.serves(task) else ""


def audit(pred: Predictions, options: AuditParams = AuditParams(), *, every_attribute: bool = False,
          failed: dict[str, str] | None = None, slices: attributes.SliceOptions | None = None,
          options_of: Callable[[str], AuditParams] | None = None) -> Audit:
    """The audit of ``pred``: the sections of every check that serves its task, on ``options.attribute`` (None: the
    first mapped attribute). ``every_attribute``: every other mapped attribute as well (``options_of(attribute)``
    gives its parameters; default: these, its reference kept only when it is one of its groups), the attributes that
    could not be built (``failed``: attribute → message) recorded, the Summary across them, and with ``slices`` the
    slice search; with one attribute, nothing failed and no slices, it is the one-attribute audit."""
    checks = checks_for(pred.task)
    closed_form = closed_form_tests(pred.task)
    first = run_sections(pred, options, checks, closed_form)
    if not every_attribute or (len(pred.attribute_names) < 2 and not failed and slices is None):
        return first
    options_of = options_of or attributes.same_options(pred, first.params)
    audits, failed = {}, dict(failed or {})           # in the mapping's order, the first attribute's in its place
    for attribute in attributes.audited_attributes(pred):
        if attribute == first.params.attribute:
            audits[attribute] = first
            continue
        try:
            pred.groups(attribute)                    # an intersection over the group cap is refused here
        except DataError as err:
            failed[attribute] = "; ".join(err.problems)
            continue
        one = replace(options_of(attribute), attribute=attribute, compare=False, explain=None, focus=None)
        audits[attribute] = run_sections(pred, one, checks, closed_form)
    return _across(first, audits, failed, pred, slices)


def _across(first: Audit, audits: dict[str, Audit], failed: dict[str, str], pred: Predictions,
            slices: attributes.SliceOptions | None) -> Audit:
    """The audit of every attribute: a new ``Audit`` whose JSON is the first attribute's with ``attributes``,
    ``slices`` and ``summary`` added (the first attribute's own audit is left as it was)."""
    data = attributes.every_attribute_data(first.data, {name: a.data for name, a in audits.items()}, failed)
    whole = replace(first, data=data, attribute_audits=audits, failed_attributes=failed)
    found = ()
    if slices is not None:
        whole.slices, found = attributes.add_slices(data, pred, whole.params, slices)
    records = {name: whole if name == first.params.attribute else a for name, a in audits.items()}
    whole.across = attributes.add_summary(data, records, failed, found, whole.params.words)
    return whole
