"""The shipped demo results (``assets/probing/*.json``, written by ``scripts/make_probing_demo.py``): the page's
instant demo and ``fairviz probe|augment --shipped``. Plain JSON, so no model library is imported to show them."""
from __future__ import annotations

import json
from pathlib import Path

from fairviz.data import DataError

ASSETS = Path(__file__).resolve().parents[2] / "assets" / "probing"
KINDS = ("probe", "augment")


def shipped_path(kind: str) -> Path:
    return ASSETS / f"{kind}.json"


def load_shipped(kind: str) -> dict:
    if kind not in KINDS:
        raise DataError(f"No shipped '{kind}' result; choose one of {', '.join(KINDS)}.")
    path = shipped_path(kind)
    if not path.exists():
        raise DataError(f"The shipped {kind} results are missing ({path}); run scripts/make_probing_demo.py.")
    return json.loads(path.read_text())
