"""The bundled sample datasets in assets/ (listed in assets/samples.json), loadable without network."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from fairviz.core.data import ColumnMapping, Predictions, Sample, build_predictions, read_table

ASSETS = Path(__file__).resolve().parents[2] / "assets"
DEFAULT_SAMPLE = "compas"


@lru_cache(maxsize=1)
def samples() -> dict[str, Sample]:
    entries = json.loads((ASSETS / "samples.json").read_text())
    out = {}
    for entry in entries:
        mapping = dict(entry["mapping"])
        mapping["groups"] = tuple(mapping["groups"])
        mapping["features"] = tuple(mapping.get("features") or ())
        out[entry["key"]] = Sample(key=entry["key"], title=entry["title"], file=entry["file"],
                                   mapping=ColumnMapping(**mapping), threshold=float(entry.get("threshold", 0.5)),
                                   description=entry.get("description", ""), provenance=entry.get("provenance", ""))
    return out


def sample_path(key: str) -> Path:
    return ASSETS / samples()[key].file


def load_sample(key: str = DEFAULT_SAMPLE) -> Predictions:
    sample = samples()[key]
    frame, digest = read_table(sample_path(key))
    return build_predictions(frame, sample.mapping, source=sample.title, file_fingerprint=digest)
