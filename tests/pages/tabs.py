"""The audit pages run only their open tab (``_ui.lazy_tabs``): a test opens the tab it reads, as a click does, by
setting the tabs' key in session state and rerunning."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

TAB_KEYS = {"app_pages/residuals.py": "rdf_tab", "app_pages/calibration.py": "cal_tab", "app_pages/parity.py": "parity_tab",
            "app_pages/significance.py": "match_tab"}


def open_tab(at: AppTest, key: str, label: str) -> AppTest:
    assert label in [t.label for t in at.tabs], (label, [t.label for t in at.tabs])
    at.session_state[key] = label
    at.run()
    assert not at.exception, at.exception
    return at


def labels(at: AppTest) -> list[str]:
    return [t.label for t in at.tabs]
