"""The registry of tasks: ``register(spec)``, ``spec_of(task)``, ``task_names()``, and recognition — the registry
asks every spec how strongly a file says its task (``guess_task``) and lets the chosen one read its columns
(``guess_mapping``)."""
from __future__ import annotations

from fairviz.data.model import ColumnMapping
from fairviz.data.roles import guess_columns
from fairviz.data.tasks.spec import NO, TaskSpec

_REGISTRY: dict[str, TaskSpec] = {}


def register(spec: TaskSpec) -> TaskSpec:
    """Add ``spec`` to the registry (a spec registered again under its name replaces the earlier one)."""
    _REGISTRY[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Take a task out of the registry (a test's own task, once the test is done)."""
    _REGISTRY.pop(name, None)


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


def guess_task(frame, label) -> str:
    """The task the label column suggests: every spec's ``recognise`` is asked, the strongest claim wins (the task
    registered first on a tie). Always shown in the form and changeable."""
    best, strength = next(iter(_REGISTRY)), NO
    for spec in _REGISTRY.values():
        said = spec.recognise(frame, label) if spec.recognise else NO
        if said > strength:
            best, strength = spec.name, said
    return best


def guess_mapping(frame) -> ColumnMapping:
    """A predictions file: each column's role from its name and content (``fairviz.data.roles.guess_columns``), then
    the task its label suggests and that task's own reading of the columns (the user confirms on the home page)."""
    guess = guess_columns(frame)
    spec = spec_of(guess_task(frame, guess.mapping.label))
    return spec.guess_roles(frame, guess) if spec.guess_roles else guess.mapping
