"""The task registry: every task fairviz audits, one module each (``binary``, ``regression``, ``multiclass``).

``spec_of(name)`` is how code outside this package learns what a task is; ``register(spec)`` adds one (a fourth
task needs no edit elsewhere: its module registers itself, and each check it changes serves it with a method).
"""
from __future__ import annotations

from fairviz.data.tasks.spec import MetricSpec, TaskSpec

_REGISTRY: dict[str, TaskSpec] = {}


def register(spec: TaskSpec) -> TaskSpec:
    """Add ``spec`` to the registry (a spec registered again under its name replaces the earlier one)."""
    _REGISTRY[spec.name] = spec
    return spec


def spec_of(task) -> TaskSpec:
    """The spec of ``task``: a name, a spec, or anything with a ``task`` name (``Predictions``, ``ColumnMapping``)."""
    if isinstance(task, TaskSpec):
        return task
    name = task if isinstance(task, str) else getattr(task, "task")
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown task {name!r} (tasks: {', '.join(_REGISTRY)})") from None


def task_names() -> tuple[str, ...]:
    """Every registered task's name, in the order registered (binary first)."""
    return tuple(_REGISTRY)


from fairviz.data.tasks.binary import BINARY  # noqa: E402  (each module registers its spec)
from fairviz.data.tasks.regression import REGRESSION  # noqa: E402
from fairviz.data.tasks.multiclass import MULTICLASS  # noqa: E402

__all__ = ["BINARY", "MULTICLASS", "REGRESSION", "MetricSpec", "TaskSpec", "register", "spec_of", "task_names"]
