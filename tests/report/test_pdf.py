"""The PDF report: Chromium prints the HTML report, Summary first, charts drawn."""
import io

import pytest

from fairviz.data.samples import load_sample
from fairviz.findings import FindingsParams
from fairviz.report import plan
from fairviz.report.audit import AuditParams
from fairviz.report.pdf import PdfUnavailable, chromium_path, html_to_pdf

pypdf = pytest.importorskip("pypdf")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(chromium_path() is None, reason="Debian's chromium is not installed")]


def test_the_pdf_opens_on_the_summary_with_the_top_finding():
    audit = plan.audit(load_sample("compas"), AuditParams(attribute="race", threshold=0.4, benefit="negative",
                                                         findings=FindingsParams(reference="Caucasian")))
    pdf = pypdf.PdfReader(io.BytesIO(html_to_pdf(audit.to_html())))
    assert len(pdf.pages) > 3
    first = pdf.pages[0].extract_text()
    assert "Summary" in first
    assert "African-American" in first and "Caucasian" in first
    assert first.index("Summary") < first.index("African-American")


def test_no_chromium_is_a_plain_message(monkeypatch):
    monkeypatch.setenv("FAIRVIZ_CHROMIUM", "/nonexistent/chromium")
    with pytest.raises(PdfUnavailable, match="needs Chromium"):
        html_to_pdf("<p>x</p>")
