"""Group views for every page: an attribute or the intersection of two, and each group's confusion counts.

Intersections live here, in the core, so every concept (residuals, calibration, parity, sample size) can audit
'race × sex' the same way."""
from __future__ import annotations

import numpy as np

from fairviz.core.confusion_metrics import flip
from fairviz.core.counts import ConfusionCounts, confusion_by_group, decisions
from fairviz.core.data import INTERSECTION_SEP, GroupView, Predictions


def resolve_view(pred: Predictions, attribute: str | None) -> GroupView:
    """An attribute of ``pred``, or the intersection 'a × b' of two of its attributes, built on the fly."""
    if attribute is None or attribute in pred.attributes:
        return pred.groups(attribute)
    parts = attribute.split(INTERSECTION_SEP)
    if len(parts) == 2 and all(p in pred.attributes for p in parts):
        return intersection_view(pred.groups(parts[0]), pred.groups(parts[1]))
    raise KeyError(f"unknown group attribute {attribute!r}")


def intersection_view(a: GroupView, b: GroupView) -> GroupView:
    """Groups of rows sharing a value of ``a`` and of ``b`` (empty combinations left out), largest first."""
    combined = a.codes.astype(np.int64) * len(b.names) + b.codes
    present, codes = np.unique(combined, return_inverse=True)
    names = np.array([f"{a.names[c // len(b.names)]}{INTERSECTION_SEP}{b.names[c % len(b.names)]}" for c in present])
    sizes = np.bincount(codes, minlength=present.size)
    order = np.lexsort((names, -sizes))
    remap = np.empty_like(order)
    remap[order] = np.arange(order.size)
    return GroupView(f"{a.attribute}{INTERSECTION_SEP}{b.attribute}", remap[codes].astype(np.int32),
                     tuple(str(n) for n in names[order]))


def group_counts(pred: Predictions, view: GroupView, threshold: float,
                 benefit: str = "positive") -> list[ConfusionCounts]:
    """Each group's confusion counts at τ, in the benefit orientation (one bincount pass over the rows)."""
    if benefit not in ("positive", "negative"):
        raise ValueError(f"benefit must be 'positive' or 'negative', got {benefit!r}")
    counts = confusion_by_group(pred.y, decisions(pred.score, threshold), view.codes, len(view.names))
    return [flip(c) for c in counts] if benefit == "negative" else counts
