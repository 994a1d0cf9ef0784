"""Residual Distribution Fairness (sorted residual curves, knees, RDF metrics, knee error concentration, D*)."""
from fairviz.residuals.analysis import RDFParams, ResidualAudit, analyse, threshold_check
from fairviz.residuals.knees import KneeParams

__all__ = ["KneeParams", "RDFParams", "ResidualAudit", "analyse", "threshold_check"]
