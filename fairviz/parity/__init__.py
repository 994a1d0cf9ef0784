"""Group parity: the Objective Fairness Index, disparate impact and the thesis's Table 3.2 metrics by group pair."""
from fairviz.parity.analysis import ParityAudit, ParityParams, analyse

__all__ = ["ParityAudit", "ParityParams", "analyse"]
