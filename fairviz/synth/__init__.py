"""Conditional HydraGAN ([3] §3.5; HydraGAN: DeSmet and Cook, ACM TIST 2024): synthetic training data with
diversity quotas, judged as the thesis judges it (Tables 3.4–3.5, Fig. 3.4).

``data`` (a table with a binary label and one or two group columns, presets), ``encoding`` (mixed columns to the
generator's space and back), ``model`` (the generator, its realism critic and diversity head; the only module
that imports torch, and only when called), ``quotas`` (group shares as a hard quota, label shares as a soft one),
``evaluate`` (Table 3.5's distances, Table 3.4's fairness metrics, realism and privacy), ``run`` (one run, the
entry point), ``results``, ``readings``, ``figures``, ``thesis`` (the thesis's printed tables).
"""
from fairviz.synth import figures, quotas, readings, thesis
from fairviz.synth.data import PRESETS, SynthTable, load, prepare
from fairviz.synth.results import REALISM_FAIR, SynthAudit
from fairviz.synth.run import SynthParams, run

__all__ = ["PRESETS", "REALISM_FAIR", "SynthParams", "SynthAudit", "SynthTable", "figures", "load", "prepare",
           "quotas", "readings", "run", "thesis"]
