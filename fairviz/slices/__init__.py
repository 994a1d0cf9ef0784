"""Slices: every slice defined by up to k attributes (values combined, ``sex=F ∧ age=18-25``), its counts (binary:
confusion cells at τ and per-bin calibration sums; regression: residual sums; multiclass: errors), its difference
from the rest of the data, a test (Fisher's exact, or Welch's t for a regression) and a false-discovery correction
over every slice tested (issue 26). Counts come from SQL on the engine (``sql``: one query, or one per level of the
pruned search) or from a ``Predictions`` (``counts``); the pruned search's score and bound are in ``metrics``."""
from fairviz.slices.analysis import SLICE_METRICS, SliceParams, SliceResult, find_slices
from fairviz.slices.counts import SliceCounts, slice_counts

__all__ = ["SLICE_METRICS", "SliceCounts", "SliceParams", "SliceResult", "find_slices", "slice_counts"]
