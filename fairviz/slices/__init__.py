"""Slices: every slice defined by up to k attributes (values combined, ``sex=F ∧ age=18-25``), its counts (the task's
method, ``methods``: confusion cells at τ and per-bin calibration sums, residual sums, or errors), its difference
from the rest of the data, a test (Fisher's exact for a rate, Welch's t for a mean) and a false-discovery correction
over every slice tested (issue 26). Counts come from SQL on the engine (``sql``: one query, or one per level of the
pruned search) or from a ``Predictions`` (``counts``); the pruned search's score and bound are in ``metrics``."""
from fairviz.slices.analysis import SliceParams, SliceResult, find_slices
from fairviz.slices.counts import SliceCounts, slice_counts
from fairviz.slices.methods import METHODS, method_of

__all__ = ["METHODS", "SliceCounts", "SliceParams", "SliceResult", "find_slices", "method_of", "slice_counts"]
