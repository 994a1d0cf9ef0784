"""Data conditions and debiasing under them ([5] Han, Shen, Cohn, Baldwin and Frermann, *Systematic Evaluation of
Predictive Fairness*, AACL 2022).

Technique modules: ``distributions`` (CB / JB interpolation with clipping, the (p_y, s) grid, proxy classes for
regression), ``resample`` (drawing m training rows that follow a condition), ``metrics`` (accuracy, macro-F1,
TPR/FPR/PPR GAP, Fairness, DTO, Pearson gaps, leakage, bootstrap CIs), ``selection`` (mean ± std over seeds, Pareto
filter on dev, min dev DTO or a fairness constraint), ``methods`` (the nine debiasing methods in torch over a
two-tanh-layer MLP; torch is imported when a method trains), ``data`` (Moji-like / Bios-like generators, Adult
features, text embeddings, uploads), ``reference`` (the paper's Tables 1–4). Entry points: ``simulate`` (the
retraining sweep: conditions × methods × seeds) and ``evaluation`` (evaluation reweighting of fixed predictions,
no retraining). ``results``, ``readings``, ``figures``.
"""
from fairviz.conditions import data, distributions, evaluation, figures, metrics, readings, reference, simulate
from fairviz.conditions.distributions import DEFAULT_ALPHAS, DEFAULT_GRID
from fairviz.conditions.evaluation import reweight
from fairviz.conditions.methods import (DEFAULT_METHODS, GRIDS, METHOD_NAMES, METHODS, PAPER_RANGES, DebiasTrainParams,
                                        config_label)
from fairviz.conditions.results import Failure, ReweightRow, ReweightingAudit, RetrainingAudit, RetrainingParams

__all__ = ["DEFAULT_ALPHAS", "DEFAULT_GRID", "DEFAULT_METHODS", "GRIDS", "METHODS", "METHOD_NAMES", "PAPER_RANGES",
           "DebiasTrainParams", "Failure", "ReweightRow", "ReweightingAudit", "RetrainingAudit", "RetrainingParams",
           "config_label", "data", "distributions", "evaluation", "figures", "metrics", "readings", "reference",
           "reweight", "simulate"]
