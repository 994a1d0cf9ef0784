"""Slices: every slice defined by up to k attributes (values combined, ``sex=F ∧ age=18-25``), its confusion counts
at τ, its difference from the rest of the data, an exact test and a false-discovery correction over every slice
tested (issue 26). Counts come from one SQL query on the engine (``sql``) or from a ``Predictions`` (``counts``)."""
from fairviz.slices.analysis import SLICE_METRICS, SliceParams, SliceResult, find_slices
from fairviz.slices.counts import SliceCounts, slice_counts

__all__ = ["SLICE_METRICS", "SliceCounts", "SliceParams", "SliceResult", "find_slices", "slice_counts"]
