"""Per-group thresholds as post-processing (Hardt, Price and Srebro 2016): the constraint, the policy, its
trade-off curve and the adjusted decisions."""
from fairviz.thresholds.analysis import decide, explore, fit, roc_vertices, single_threshold
from fairviz.thresholds.decisions import (MAX_DECISION_ROWS, adjust, adjusted_model, allocate, decision_rows,
                                          decisions_frame, explore_model)
from fairviz.thresholds.results import (CONSTRAINT_SHORT, CONSTRAINT_TITLES, CONSTRAINTS, AdjustedDecisions,
                                        GroupRule, RealisedRates, ThresholdAudit, ThresholdExplorer, ThresholdParams,
                                        ThresholdPolicy, TradeOffPoint, policy_dict)

__all__ = ["CONSTRAINTS", "CONSTRAINT_SHORT", "CONSTRAINT_TITLES", "MAX_DECISION_ROWS", "AdjustedDecisions",
           "GroupRule", "RealisedRates", "ThresholdAudit", "ThresholdExplorer", "ThresholdParams", "ThresholdPolicy",
           "TradeOffPoint", "adjust", "adjusted_model", "allocate", "decide", "decision_rows", "decisions_frame",
           "explore", "explore_model", "fit", "policy_dict", "roc_vertices", "single_threshold"]
