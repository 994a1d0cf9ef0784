"""What an audit runs: a ``Check`` (one concept's question, e.g. group parity) serves each task it answers with a
``Section`` (that task's method: run → typed result; to_dict → its JSON keys; display → its display list).

The concept owns both (``<concept>/display.py``); ``fairviz.report.plan`` decides which checks run for a task and a
view. The audit settings a section reads (``fairviz.report.options.AuditParams``) are passed in, never imported here,
so that the concepts stay below the report.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(frozen=True)
class Section:
    """One analysis in the audit: ``run`` computes its result; ``to_dict`` gives its JSON keys and ``display`` its
    display list (``fairviz.core.display``), which the page, the HTML report and the terminal all render.
    ``to_html`` is the older renderer of a section not yet moved to ``display`` (None once it has)."""
    name: str
    run: Callable[[Any, Any], Any]
    to_dict: Callable[[Any, Any, Any], dict]
    to_html: Callable[[Any, Any, dict], list[tuple[str, str]]] | None = None
    title: str = ""
    # True: reads weighted data (the engine's table) as is; "binned": only when the table is binned (in exact mode
    # the section gets rows, so that its numbers equal the row-level ones bit for bit); False: always rows
    weighted: bool | str = False
    display: Callable[[Any, Any, Any], list] | None = None

    def given(self, pred):
        """What this section reads: the weighted table, or one entry per row."""
        if self.weighted is True or (self.weighted == "binned" and pred.resolution > 0):
            return pred
        return pred.rows()


@dataclass(frozen=True)
class Check:
    """One concept's check across tasks: the section it runs for each task it serves (its own method, or a shared
    one), keyed by the task's name. A new task is served with ``serve``; no other module changes."""
    name: str
    methods: dict[str, Section] = field(default_factory=dict)

    def serves(self, task) -> bool:
        return _name(task) in self.methods

    def section(self, task) -> Section | None:
        return self.methods.get(_name(task))

    def serve(self, task, section: Section) -> "Check":
        self.methods[_name(task)] = section
        return self


def _name(task) -> str:
    return task if isinstance(task, str) else getattr(task, "name", None) or getattr(task, "task")
