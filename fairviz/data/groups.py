"""Each group's confusion counts at a threshold, in the orientation of the benefit."""
from __future__ import annotations

from fairviz.core.confusion_metrics import flip
from fairviz.core.counts import ConfusionCounts, confusion_by_group, decisions
from fairviz.data.model import GroupView, Predictions


def group_counts(pred: Predictions, view: GroupView, threshold: float,
                 benefit: str = "positive") -> list[ConfusionCounts]:
    """Each group's confusion counts at τ, in the benefit orientation (one bincount pass over the rows)."""
    if benefit not in ("positive", "negative"):
        raise ValueError(f"benefit must be 'positive' or 'negative', got {benefit!r}")
    counts = confusion_by_group(pred.y, decisions(pred.score, threshold), view.codes, len(view.names), pred.weight)
    return [flip(c) for c in counts] if benefit == "negative" else counts
