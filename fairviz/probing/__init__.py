"""What the knees are for ([1] Residual Distribution Fairness, §7–8, App. D, E, J, O): counterfactual probing of
knee-region examples and RDF-guided counterfactual augmentation.

This package sits in its own layer between ``fairviz.report`` and the concept folders because it needs two of
them at once: the residual analysis (``fairviz.residuals``: knees, the diagnostic set D*, the RDF metrics) and the
text models and data sets (``fairviz.explain``: the tiny BERT, MiniLM, local model folders, the gendered data
sets and their word lists). Concepts never import each other; this layer composes them.

Modules:

- ``lexicon``    demographic swap and identity-term removal (the word lists of the explanation data)
- ``probe``      matched knee / non-knee probing, selection strategies, error vs sensitivity (no torch)
- ``augment``    Algorithm 1: select → counterfactual copies → fine-tune → ΔF on held-out test (pluggable model)
- ``textmodel``  the bridge to ``fairviz.explain``'s models: a scorer and a fine-tuner (torch imported lazily)
- ``analysis``   split → train → probe / augment, one function per command (CLI, page, demo script)
- ``results``    the typed results and their JSON; ``shipped`` the shipped demo JSON
- ``readings``   the page's display lists, the CLI's terminal lines, App. E's reading
- ``figures``    Plotly figures built from the results' JSON
"""
from __future__ import annotations

from fairviz.probing.results import (AUGMENT_STRATEGIES, DELTA_METRICS, ECE_THRESHOLD, PROBES, SEEDS,
                                     SIGN_CONVENTION, STRATEGY_NAMES, AugmentRecord, AugmentResult, ProbeResult,
                                     ProbeSummary, StrategySummary)
from fairviz.probing.probe import ProbeParams, probe
from fairviz.probing.augment import AugmentParams, Split, augment
from fairviz.probing.analysis import RunProtocol, run_augment, run_probe
from fairviz.probing.readings import (augment_display, augment_summary, examples_table, probe_display,
                                      probe_summary)
from fairviz.probing.shipped import load_shipped
from fairviz.probing.textmodel import DATA_SETS, DEFAULT_DATA, DEFAULT_GENERATE, load_dataset, model_spec

__all__ = [
    "AUGMENT_STRATEGIES", "DELTA_METRICS", "ECE_THRESHOLD", "PROBES", "SEEDS", "SIGN_CONVENTION", "STRATEGY_NAMES",
    "AugmentRecord", "AugmentResult", "ProbeResult", "ProbeSummary", "StrategySummary",
    "ProbeParams", "probe", "AugmentParams", "Split", "augment", "RunProtocol", "run_augment", "run_probe",
    "augment_display", "augment_summary", "examples_table", "probe_display", "probe_summary",
    "load_shipped", "DATA_SETS", "DEFAULT_DATA", "DEFAULT_GENERATE", "load_dataset", "model_spec",
]
