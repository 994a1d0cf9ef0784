"""Golden display lists of every page of the app on the bundled default sample (COMPAS), and of Home and the audit
pages on the bundled regression and multiclass samples, read through Streamlit's AppTest, every tab of the audit
pages opened in turn; compared with tests/goldens/data/pages/ number for number (tests/goldens/README.md).

Normalised away before comparing (tests/goldens/normalise.py, VOLATILE):
- widget ids ('$$ID-<hash>-key' and the 'id' fields), page-script hashes, media URLs and deferred file ids (download
  buttons) → dropped
- a dataframe's Arrow bytes → its column names and values; a chart's spec → parsed JSON, plotly's base64 typed arrays
  (bdata) → plain lists of numbers

Compared as the audit goldens are (tests/goldens/compare.py): numbers to 1e-9 relative with a 1e-12 absolute floor,
strings by their text with numbers taken out, exactly, the numbers in them at their printed precision; an element or
a key added or removed fails.
"""
from __future__ import annotations

import pytest

from tests.goldens import capture, pages
from tests.goldens.compare import differences, report

pytestmark = [pytest.mark.app, pytest.mark.slow]
GOLDEN = capture.read_pages()


@pytest.fixture(scope="module")
def shown() -> dict[str, dict]:
    return pages.views()


def test_the_same_views_are_shown(shown):
    assert list(shown) == list(GOLDEN), ("pages or tabs added or removed: update the golden "
                                         "(PYTHONPATH=. python -m tests.goldens.capture pages) with the reason")


@pytest.mark.parametrize("view", list(GOLDEN))
def test_page_equals_its_golden(view, shown):
    assert view in shown, f"{view} is no longer shown"
    found = list(differences(GOLDEN[view], shown[view]))
    assert not found, report(view, found)
