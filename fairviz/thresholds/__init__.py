"""Per-group thresholds as post-processing (Hardt, Price and Srebro 2016): the constraint, the policy, its
trade-off curve and the adjusted decisions."""
from fairviz.thresholds.analysis import decide, explore, fit, roc_vertices, single_threshold
from fairviz.thresholds.results import (CONSTRAINT_TITLES, CONSTRAINTS, GroupRule, ThresholdAudit, ThresholdParams,
                                        ThresholdPolicy, TradeOffPoint)

__all__ = ["CONSTRAINTS", "CONSTRAINT_TITLES", "GroupRule", "ThresholdAudit", "ThresholdParams", "ThresholdPolicy",
           "TradeOffPoint", "decide", "explore", "fit", "roc_vertices", "single_threshold"]
