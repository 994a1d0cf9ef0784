"""The task registry: every task fairviz audits, one module each (``binary``, ``regression``, ``multiclass``).

``spec_of(name)`` is how code outside this package learns what a task is; ``register(spec)`` adds one (a fourth
task needs no edit elsewhere: its module registers itself, and each check it changes serves it with a method).
Each spec says how its task is recognised (``recognise``, ``guess_roles``), validated (``validate``) and reduced on
an engine (``reduction``); ``guess_task`` and ``guess_mapping`` ask every registered spec.
"""
from __future__ import annotations

from fairviz.data.tasks.registry import (guess_mapping, guess_task, register, spec_of, task_names,
                                         unregister)
from fairviz.data.task_spec import MetricSpec, Reduced, Reduction, TaskSpec
from fairviz.data.tasks.binary import BINARY  # (each module registers its spec, binary first)
from fairviz.data.tasks.regression import REGRESSION
from fairviz.data.tasks.multiclass import MULTICLASS

__all__ = ["BINARY", "MULTICLASS", "REGRESSION", "MetricSpec", "Reduced", "Reduction", "TaskSpec", "guess_mapping",
           "guess_task", "register", "spec_of", "task_names", "unregister"]
