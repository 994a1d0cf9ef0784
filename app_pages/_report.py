"""The audit behind Home's Summary and the pages' top finding, the full report's downloads (JSON, HTML, PDF) and a
page's own section as JSON: each computed once per server through ``_cache.cached``.
"""
from __future__ import annotations

import json
from dataclasses import replace

import streamlit as st

from fairviz.core.markup import md
from fairviz.core.serialize import clean
from fairviz.data import Predictions
from fairviz.data.tasks import spec_of
from fairviz.findings import FindingsParams
from fairviz.data.tasks import BINARY
from fairviz.findings.display import findings_settings
from fairviz.report import plan
from fairviz.report.attributes import findings_params_for
from fairviz.report.audit import AuditParams
from fairviz.report.pdf import PdfUnavailable, html_to_pdf
from app_pages._cache import cached
from app_pages._frame import Context, address_values, current_sample, reference_choices

PAGE_JSON = "page_json"        # section name → the JSON of what that page shows

# The Summary's audit: only the sections whose closed-form tests it reads (parity: the rate gaps and OFI; significance:
# MATCH for groups under the size floor, run only when there is one: ``summary_sections``), no resampling. F_dist and
# the ECE gap are tested by resampling, which the quick audit skips, so their sections (knee searches, exact
# calibration fits: 3.3 s of 3.5 s CPU at 1M rows) do not run and the Summary names them "not tested here".
SUMMARY_PARAMS = dict(sections=plan.quick_sections(BINARY.name))
FOCUS_PARAMS = dict(sections=("parity",))          # the Summary's top finding without MATCH's small-group verdicts


def audit(ctx: Context, full: bool = False, nbytes: int = 0):
    """The audit for the frame's choices, as ``fairviz audit`` runs it (``full``: with every resampled interval
    and test; else the Summary's quick audit), computed once per server in the analysis pool with a progress bar
    (``nbytes``: its peak memory, taken from the server's byte budget while it runs)."""
    findings, words = findings_settings(current_sample(), ctx.attribute, FindingsParams(reference=ctx.reference))
    data = audited(ctx)
    quick = {} if full or not spec_of(data).thresholded else dict(sections=plan.summary_sections(data, ctx.attribute,
                                                                                             findings))

    def compute(progress):
        options = AuditParams(attribute=ctx.attribute, threshold=ctx.threshold, benefit=ctx.benefit,
                              findings=findings, words=words, progress=progress, **quick)
        # the report covers every attribute, as `fairviz audit`
        return plan.audit(data, options, every_attribute=full, options_of=lambda name: replace(
            options, findings=findings_params_for(data, name, findings, current_sample())))

    return cached("audit_full" if full else "audit_summary", ctx.view, (findings, words), compute,
                  "Running the full audit" if full else "Summarising", data=data, keep=8, nbytes=nbytes)


def audited(ctx: Context) -> Predictions:
    """What the audit (Summary, report) reads: at τ, the page's predictions (the frame's model); for a task without
    τ, the loaded data (every class, not the frame's one class)."""
    return ctx.pred if ctx.spec.thresholded else ctx.data


def _audit_key(ctx: Context) -> tuple:
    return (audited(ctx).fingerprint, ctx.attribute, ctx.threshold, ctx.benefit,
            *findings_settings(current_sample(), ctx.attribute, FindingsParams(reference=ctx.reference)))


def top_finding(ctx: "Context"):
    """The Summary's first finding for the frame's choices, or None. Its candidates come from the parity section
    alone in the quick audit (MATCH only lists the groups under the floor), so the pages read it from a parity-only
    audit: milliseconds at a τ change where the quick audit's MATCH would add 0.15 s at 1M rows."""
    findings, words = findings_settings(current_sample(), ctx.attribute, FindingsParams(reference=ctx.reference))

    def compute(progress):
        return plan.audit(ctx.pred, AuditParams(attribute=ctx.attribute, threshold=ctx.threshold, benefit=ctx.benefit,
                                                findings=findings, words=words, progress=progress, **FOCUS_PARAMS))

    # on the page's own predictions (one class of multiclass)
    summary = cached("audit_focus", ctx.view, (findings, words), compute, "Finding the top group",
                     data=ctx.pred).findings
    return summary.top[0] if summary is not None and summary.top else None


def focus_group(ctx: "Context") -> str | None:
    """The group a page compares with the reference first: the one the address names (a link to a finding), else
    the Summary's top finding's; None lets the page take the largest other group. Never under the size floor: the
    readings check (``fairviz.core.focus``)."""
    asked = address_values(("group",)).get("group")
    if asked is not None and asked in reference_choices(ctx.pred, ctx.attribute):
        return asked
    finding = top_finding(ctx)
    return finding.candidate.group if finding is not None else None


def page_options(ctx: "Context", **settings) -> AuditParams:
    """The audit parameters a page's section display reads: the frame's choices, the Summary's reference and size
    floor, and the group its readings open on."""
    return AuditParams(attribute=ctx.attribute, threshold=ctx.threshold,
                       findings=FindingsParams(reference=ctx.reference), focus=focus_group(ctx), **settings)


def forget_report_of_another_view(ctx: Context) -> bool:
    """Whether a full report prepared for another view (τ, attribute, …) was forgotten: the downloads, drawn outside
    Home's τ fragment, then need the app's rerun to offer "Prepare the full report" again."""
    if st.session_state.get("report_key") in (None, _audit_key(ctx)):
        return False
    st.session_state.pop("report_key")
    return True


def report_downloads(ctx: Context) -> None:
    """The full audit as the CLI writes it — JSON, the self-contained HTML report and, on request, its PDF — run
    when asked, in the analysis pool (a slot, the server's byte budget, a progress bar, shared by every visitor
    asking the same). Stop, any other click or closing the tab interrupts it at its next progress report, and its
    slot and bytes are given back."""
    from app_pages import _budget, _jobs
    key = _audit_key(ctx)
    nbytes = _budget.report_estimate(ctx.pred.n)          # weighted data is expanded to rows (D*, knees)
    if st.session_state.get("report_key") != key:
        b1, b2, _ = st.columns([2, 1, 3])
        prepare = b1.button("Prepare the full report", help="Every analysis with its resampled intervals and tests, "
                                                            "as `fairviz audit` runs it; its Summary covers every "
                                                            "comparison.")
        if b2.button("Stop", key="report_stop", help="Interrupts the report within a second or two."):
            st.info("Stopped: nothing was kept. Press **Prepare the full report** again when you want it.")
        if prepare:
            audit(ctx, full=True, nbytes=nbytes)
            st.session_state["report_key"] = key
            st.rerun()
        return
    result = audit(ctx, full=True, nbytes=nbytes)
    stem = safe_stem(ctx.pred.source)
    c1, c2, c3 = st.columns(3)
    c1.download_button("Download JSON", json.dumps(result.data, indent=2).encode(), f"{stem}_audit.json",
                       "application/json")
    html = _jobs.run("report_html", key, "Writing the report", lambda progress: result.to_html().encode(),
                     pool="analysis", keep=4, nbytes=nbytes)
    c2.download_button("Download HTML report", html, f"{stem}_audit.html", "text/html")
    if st.session_state.get("pdf_key") == key:
        c3.download_button("Download PDF", st.session_state["pdf"], f"{stem}_audit.pdf", "application/pdf")
    elif c3.button("Prepare the PDF", help="Headless Chromium prints the HTML report (Summary first)."):
        try:
            st.session_state["pdf"] = _jobs.run("pdf", key, "Printing the report",
                                                lambda progress: html_to_pdf(html.decode()), pool="heavy", keep=4)
        except PdfUnavailable as err:
            st.warning(md(str(err)))
            return
        st.session_state["pdf_key"] = key
        st.rerun()


def section_json(section: str, pred: Predictions, result, options: AuditParams) -> dict:
    """This page's numbers as JSON, rendered from the result it shows by the same function that writes that section
    of `fairviz audit` (one result, many renderers): kept in session state and offered as a download."""
    renderer = next(s for s in plan.sections_for(pred.task) if s.name == section)
    data = clean(renderer.to_dict(pred, result, options))
    st.session_state.setdefault(PAGE_JSON, {})[section] = data
    stem = safe_stem(pred.source)
    st.download_button("This page's numbers (JSON)", json.dumps(data, indent=2).encode(), f"{stem}_{section}.json",
                       "application/json", key=f"page_json_{section}",
                       help="The same keys and values as this section of `fairviz audit --json` with these settings.")
    return data


def safe_stem(source: str) -> str:
    """A download file name from the data's name: letters, digits, '-' and '_' only."""
    import re
    return re.sub(r"[^A-Za-z0-9_-]+", "_", source.rsplit(".", 1)[0])[:60] or "fairviz"
