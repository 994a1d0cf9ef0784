"""Shared fixtures: small deterministic data sets and the AppTest entry points."""
from __future__ import annotations

import inspect
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
TIERS = ("unit", "app", "browser")


def pytest_collection_modifyitems(items):
    """One marker scheme, by what a test does, whatever folder it is in: a test that drives Chromium (it uses the
    ``browser`` fixture) is "browser", a test that runs the app in Streamlit's AppTest (its code, a fixture it uses,
    or a helper it calls builds an ``AppTest``) is "app", every other test "unit"; "slow" is set by hand on top. A
    tier set by hand wins; a parametrised test whose author tiered some cases by hand has its other cases "unit"
    (tests/hostile: only the cases that upload through the app are "app")."""
    tiered = {(item.nodeid.split("[")[0]) for item in items
              if "[" in item.nodeid and any(item.get_closest_marker(t) for t in TIERS)}
    for item in items:
        if any(item.get_closest_marker(t) for t in TIERS):
            continue
        if item.nodeid.split("[")[0] in tiered:
            tier = "unit"
        elif "browser" in getattr(item, "fixturenames", ()):
            tier = "browser"
        else:
            tier = "app" if _runs_app(item) else "unit"
        item.add_marker(getattr(pytest.mark, tier))


def _runs_app(item) -> bool:
    function = getattr(item, "function", None)
    module = getattr(item, "module", None)
    if function is None or module is None:
        return False
    app_names = _app_helpers(module)
    names = set(_NAME.findall(_source(function))) | set(getattr(item, "fixturenames", ()))
    return "AppTest" in names or bool(names & app_names)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_APP_HELPERS: dict[str, frozenset[str]] = {}


def _app_helpers(module) -> frozenset[str]:
    """The names of the functions and fixtures a test module can reach (its own and those it imported) that build an
    AppTest, directly or through another of them: found once per module, by reading their source."""
    if module.__name__ not in _APP_HELPERS:
        words = {}
        for name, value in vars(module).items():
            target = getattr(value, "__wrapped__", None) or getattr(value, "__pytest_wrapped__", None)
            target = getattr(target, "obj", target) or value
            if inspect.isfunction(target):
                words[name] = set(_NAME.findall(_source(target)))
        found = {name for name, used in words.items() if "AppTest" in used}
        grew = True
        while grew:
            more = {name for name, used in words.items() if name not in found and used & found}
            found |= more
            grew = bool(more)
        _APP_HELPERS[module.__name__] = frozenset(found)
    return _APP_HELPERS[module.__name__]


def _source(function) -> str:
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return ""


@pytest.fixture
def two_group_frame() -> pd.DataFrame:
    """Two groups of 2,000 rows; group B's scores are shifted up by 0.1 (over-predicted)."""
    rng = np.random.default_rng(7)
    p = rng.uniform(0.02, 0.88, 4000)
    y = rng.binomial(1, p)
    group = np.repeat(["A", "B"], 2000)
    score = np.where(group == "B", p + 0.1, p)
    return pd.DataFrame({"id": np.arange(4000), "y": y, "score": score, "group": group})
