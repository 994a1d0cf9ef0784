"""Shared fixtures: small deterministic data sets and the AppTest entry points."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
TIERS = ("unit", "app", "browser")


def pytest_collection_modifyitems(items):
    """One marker scheme: tests under tests/browser/ drive Chromium ("browser"), tests under tests/pages/ run the
    app in Streamlit's AppTest ("app"), every other test is a "unit" test; "slow" is set by hand on top."""
    for item in items:
        parts = Path(str(item.fspath)).relative_to(ROOT / "tests").parts
        tier = {"browser": "browser", "pages": "app"}.get(parts[0], "unit") if len(parts) > 1 else "unit"
        if not any(item.get_closest_marker(t) for t in TIERS):
            item.add_marker(getattr(pytest.mark, tier))


@pytest.fixture
def two_group_frame() -> pd.DataFrame:
    """Two groups of 2,000 rows; group B's scores are shifted up by 0.1 (over-predicted)."""
    rng = np.random.default_rng(7)
    p = rng.uniform(0.02, 0.88, 4000)
    y = rng.binomial(1, p)
    group = np.repeat(["A", "B"], 2000)
    score = np.where(group == "B", p + 0.1, p)
    return pd.DataFrame({"id": np.arange(4000), "y": y, "score": score, "group": group})
