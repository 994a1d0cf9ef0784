"""The bundled sample datasets in assets/ (listed in assets/samples.json), loadable without network, from a checkout
or an installed package.

A sample's settings (decision threshold, which prediction is the benefit) belong to its definition and apply
wherever that file is audited: the app when the sample is picked, and ``fairviz audit`` when the path is a
bundled file (or a byte-identical copy of one), unless the user sets them.
"""
from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

from fairviz.data.model import ColumnMapping, Predictions, Sample, ScoreColumn
from fairviz.data.reading import read_table
from fairviz.data.validation import build_predictions


def _assets() -> Path:
    """The bundled files: ``assets/`` at the root of a checkout, ``fairviz/assets`` inside an installed package
    (setup.py puts the samples there)."""
    package = Path(__file__).resolve().parents[1]
    installed = package / "assets"
    return installed if installed.is_dir() else package.parent / "assets"


ASSETS = _assets()
DEFAULT_SAMPLE = "compas"
BENEFITS = ("positive", "negative")


@lru_cache(maxsize=1)
def samples() -> dict[str, Sample]:
    entries = json.loads((ASSETS / "samples.json").read_text())
    out = {}
    for entry in entries:
        mapping = dict(entry["mapping"])
        mapping["groups"] = tuple(mapping["groups"])
        mapping["features"] = tuple(mapping.get("features") or ())
        # a multiclass sample's probability columns and the classes they stand for (regression and multiclass
        # samples name their "task"; a sample without one is binary)
        mapping["class_scores"] = tuple(mapping.get("class_scores") or ())
        mapping["classes"] = tuple(mapping.get("classes") or ())
        # the other models: [{"column": ..., "name": ...}, ...] (the first model is "score", named "model_name")
        mapping["more_scores"] = tuple(ScoreColumn(**model) for model in mapping.get("more_scores") or ())
        benefit = entry.get("benefit", "positive")
        if benefit not in BENEFITS:
            raise ValueError(f"samples.json: '{entry['key']}' has benefit {benefit!r}, not one of {BENEFITS}")
        out[entry["key"]] = Sample(key=entry["key"], title=entry["title"], file=entry["file"],
                                   mapping=ColumnMapping(**mapping), threshold=float(entry.get("threshold", 0.5)),
                                   description=entry.get("description", ""), provenance=entry.get("provenance", ""),
                                   benefit=benefit, words=dict(entry.get("words") or {}),
                                   reference_groups=dict(entry.get("reference_groups") or {}))
    return out


def sample_path(key: str) -> Path:
    return ASSETS / samples()[key].file


def load_sample(key: str = DEFAULT_SAMPLE) -> Predictions:
    sample = samples()[key]
    frame, digest = read_table(sample_path(key))
    return build_predictions(frame, sample.mapping, source=sample.title, file_fingerprint=digest)


def negative_benefit_samples() -> frozenset[str]:
    """Keys of the samples whose positive prediction is a harm (the benefit is the negative prediction)."""
    return frozenset(k for k, s in samples().items() if s.benefit == "negative")


def _digest(path: Path) -> str:
    h = hashlib.blake2b(digest_size=16)
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=8)
def _sample_digest(key: str) -> str:
    return _digest(sample_path(key))


def match_sample(path: str | Path) -> Sample | None:
    """The bundled sample that ``path`` is: the asset itself, or a file with the same bytes (size checked first,
    so other files are never hashed); None otherwise."""
    path = Path(path)
    try:
        resolved, size = path.resolve(), path.stat().st_size
    except OSError:
        return None
    for key, sample in samples().items():
        asset = sample_path(key)
        if not asset.exists():
            continue
        if resolved == asset.resolve():
            return sample
        if size == asset.stat().st_size and _digest(path) == _sample_digest(key):
            return sample
    return None
