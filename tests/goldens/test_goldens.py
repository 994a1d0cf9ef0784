"""Golden outputs of `fairviz audit` (tests/goldens/README.md): each case's JSON, HTML report and terminal output,
recomputed and compared with tests/goldens/data/audits/ number for number.

Normalised away before comparing (tests/goldens/normalise.py, VOLATILE):
- the temporary folder of the generated files → <tmp>; the repository's path → <root>
- fairviz's version (JSON 'fairviz_version', the HTML footer) → <version>
- the HTML footer's 'generated YYYY-MM-DD HH:MM UTC' → 'generated <time> UTC'
- the inlined plotly.js bundle (vendor code and its version) → <plotly.js>
- plotly's random div ids (uuid4) → <uuid>
- plotly's base64 typed arrays (bdata) → plain lists of numbers; the HTML's figures compared as parsed JSON

Compared (tests/goldens/compare.py): numbers to 1e-9 relative with a 1e-12 absolute floor; strings by their text with
numbers taken out, exactly, and the numbers in them at their printed precision (±1 in the last printed digit for
decimals, integers exactly); a key added or removed, or a list of another length, fails.
"""
from __future__ import annotations

import pytest

from tests.goldens import capture, cases
from tests.goldens.compare import differences, report

pytestmark = [pytest.mark.unit, pytest.mark.slow]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("goldens")
    cases.write_files(path)
    return path


@pytest.mark.parametrize("case", cases.CASES, ids=[case.name for case in cases.CASES])
def test_audit_equals_its_golden(case, folder):
    golden = capture.read_audit(case.name)
    actual = capture.stored(capture.audit(case, folder))
    found = [(f"{part}: {path}", mine, theirs) for part in golden
             for path, mine, theirs in differences(golden[part], actual[part])]
    assert not found, report(case.name, found)


def test_every_case_has_a_golden_and_every_golden_a_case():
    stored = {path.name for path in capture.AUDITS.iterdir()}
    expected = {path.name for case in cases.CASES for path in capture.files(case.name).values()}
    assert stored == expected, ("goldens without a case (remove them) or cases without a golden (capture them): "
                                f"{sorted(stored ^ expected)}")
