"""What the knees are for (Residual Distribution Fairness, §7–8, App. D, E, J, O): counterfactual probing of
knee-region examples and RDF-guided counterfactual augmentation.

This package sits in its own layer between ``fairviz.report`` and the concept folders because it needs two of
them at once: the residual analysis (``fairviz.residuals``: knees, the diagnostic set D*, the RDF metrics) and the
text models and data sets (``fairviz.explain``: the tiny BERT, MiniLM, local model folders, the gendered data
sets and their word lists). Concepts never import each other; this layer composes them.

Modules:

- ``lexicon``    demographic swap and identity-term removal (word lists of the explanation data, spec lexicons)
- ``probe``      matched knee / non-knee probing, selection strategies, error vs sensitivity (no torch)
- ``augment``    Algorithm 1: select → counterfactual copies → fine-tune → ΔF on held-out test (pluggable model)
- ``textmodel``  the bridge to ``fairviz.explain``'s models: a scorer and a fine-tuner (torch imported lazily)
- ``figures``    Plotly figures built from the results
"""
from __future__ import annotations

PROBES = {"demographic_swap": "Demographic swap", "identity_removal": "Identity-term removal"}
STRATEGY_NAMES = {"knees": "RDF knee regions", "uncertainty": "Highest entropy", "confidence": "Highest confidence",
                  "random": "Random"}
AUGMENT_STRATEGIES = {"random": "Random", "uncertainty": "Uncertainty (entropy)", "rdf": "RDF-guided (D*)"}
