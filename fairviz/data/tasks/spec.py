"""What a task is (``TaskSpec``): the one place that knows how binary, regression and multiclass predictions differ.

A concept never compares task names: it asks the spec (``spec_of(pred.task)``) what the task has (a decision at τ,
classes, a numeric target, its metrics and words), and a check serves a task by registering a method for it
(``fairviz.core.checks.Check.serve``). A new task is one module here plus a method in each check it changes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(frozen=True)
class MetricSpec:
    """One of a task's metrics: its key (as in the JSON), its label on screen, its unit ("rate": a share of rows,
    "target": the target's units, "probability") and which way is better ("lower", "higher", "zero")."""

    key: str
    label: str
    unit: str = "rate"
    better: str = "lower"


@dataclass(frozen=True)
class TaskSpec:
    """A task: its name (the registry key, the JSON's ``task``), what it reads and how it is checked."""

    name: str
    title: str                          # in sentences: "binary classification"
    roles: tuple[str, ...]              # the ColumnMapping fields it reads
    thresholded: bool = False           # a decision at τ (and a beneficial outcome) exists: τ, benefit, MATCH
    per_class: bool = False             # the label holds C ≥ 3 classes: one-vs-rest views per class
    numeric_target: bool = False        # errors are in the target's units (residual D = ŷ − y)
    probability_scores: bool = False    # every model's score is a probability in [0, 1]
    metrics: tuple[MetricSpec, ...] = ()
    error_metric: str = ""              # the metric a slice search ranks by when none is asked for
    overview: tuple[str, str] = ("", "")            # what the data overview's two numbers per group are
    overview_labels: tuple[str, str] = ("", "")     # … and their labels on screen
    words: dict[str, str] = field(default_factory=dict)
    # how the task is recognised, validated and reduced (fairviz.data.tasks.<task>); None: not by this route
    recognise: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    validate: Callable[..., Any] | None = field(default=None, compare=False, repr=False)

    def metric(self, key: str) -> MetricSpec:
        for m in self.metrics:
            if m.key == key:
                return m
        raise KeyError(f"{self.title} has no metric {key!r} (metrics: {', '.join(m.key for m in self.metrics)})")
