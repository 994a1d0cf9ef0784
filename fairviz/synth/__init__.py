"""Conditional HydraGAN (J. Briscoe, "The Art of Fairness", §3.5): synthetic training data with diversity quotas.

torch is imported lazily inside :mod:`fairviz.synth.model`; importing this package is free.
"""
