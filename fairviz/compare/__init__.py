"""Comparing models on the same rows: paired differences of every metric (issue: several models on one screen)."""
from fairviz.compare.paired import (LOWER_IS_BETTER, METRIC_TITLES, METRICS, PairedDifference, paired_differences,
                                    unpaired_interval)

__all__ = ["LOWER_IS_BETTER", "METRICS", "METRIC_TITLES", "PairedDifference", "paired_differences",
           "unpaired_interval"]
