"""Recognition over the registry of tasks (``fairviz.data.task_spec``): the registry
asks every spec how strongly a file says its task (``guess_task``) and lets the chosen one read its columns
(``guess_mapping``)."""
from __future__ import annotations

from fairviz.data.model import ColumnMapping
from fairviz.data.roles import guess_columns
from fairviz.data.task_spec import NO, _REGISTRY, register, spec_of, task_names, unregister  # noqa: F401


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
