"""The one JSON shape of a calibration section, whatever the task: the check's key holds ``method`` (what computed
it), ``attribute``, ``groups`` ({group: its record}), ``pairs`` where the method compares groups in pairs, the
method's own keys, then ``settings`` and ``notes``."""
from __future__ import annotations


def envelope(method: str, attribute: str, groups: dict, settings: dict, notes, pairs: list | None = None,
             **extras) -> dict:
    return {"method": method, "attribute": attribute, "groups": groups,
            **({"pairs": pairs} if pairs is not None else {}), **extras, "settings": settings, "notes": list(notes)}


def by_group(rows: list[dict]) -> dict:
    """Records that name their group (``group``) keyed by it instead, in order."""
    return {row["group"]: {k: v for k, v in row.items() if k != "group"} for row in rows}
