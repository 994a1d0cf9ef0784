"""What a task is (``TaskSpec``) and the registry of tasks (``register``, ``spec_of``, ``task_names``); the tasks
themselves are the modules of ``fairviz.data.tasks`` (binary, regression, multiclass), each registering its spec.

This module imports nothing from ``fairviz.data``, so the data model can ask a spec (``spec_of``) without a circle
(the task modules build ``Predictions``, so they sit above the model).

A concept never compares task names: it asks the spec (``spec_of(pred.task)``) what the task has (a decision at τ,
classes, a numeric target, its metrics and words), and a check serves a task by registering a method for it
(``fairviz.core.checks.Check.serve``). A new task is one module here plus a method in each check it changes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

# How strongly a label column says "this task" (``TaskSpec.recognise``): the registry takes the strongest claim, the
# task registered first on a tie, so a task's rule is read beside the others' without an order to edit.
SURE = 1.0          # two label values: binary
STRONG = 0.9        # numbers that are not all whole, or too many to be classes: regression
LIKELY = 0.8        # classes with a probability column each, or a predicted-class column: multiclass
WEAK = 0.5          # many whole numbers and nothing that names classes: regression
FALLBACK = 0.1      # anything else: binary, so that validation names the label's values
NO = 0.0


@dataclass(frozen=True)
class MetricSpec:
    """One of a task's metrics: its key (as in the JSON), its label on screen, its unit ("rate": a share of rows,
    "target": the target's units, "probability") and which way is better ("lower", "higher", "zero")."""

    key: str
    label: str
    unit: str = "rate"
    better: str = "lower"


@dataclass(frozen=True)
class Reduced:
    """A task's reduction, read back from the engine: one row per entry of the table (the mapped columns the table
    carries) and its count ``n``; ``fairviz.data.reduction.stats_of`` makes it ``SufficientStats``."""

    table: Any                          # pandas DataFrame: groups, label and prediction columns, one row per entry
    n: Any                              # numpy int64 array: rows per entry
    resolution: float                   # 0: exact; else the cells' width as a fraction of their range
    salt: str                           # what, besides the source, makes the table differ (its fingerprint)
    cell_key: Any = None                # per entry: its cell in the query (binary: rows behind an entry on demand)
    key_cells: int = 0                  # the cells of that query (0: a cell per distinct value)
    moments: Any = None                 # per entry: exact sums the cells would lose (regression)
    residual_grids: dict | None = None  # model title → (lo, hi, cells) the table was grouped by (regression)


@dataclass(frozen=True)
class Reduction:
    """How a task's predictions are reduced where the data live (``fairviz.data.engine``). ``reduce(runner, at,
    mapping)`` runs the task's SQL through ``runner`` (``sql(text)``, ``dialect``, ``relation``,
    ``is_numeric(column)``, ``cells`` / ``task_cells(name)``, ``exact_rows``) on ``at`` (the mapping in the engine's
    positional column names) and returns ``Reduced``; ``columns(mapping)`` the mapped columns its table carries, in
    order; ``note(mapping, resolution, entries, rows)`` what binned cells do to the reported numbers."""

    cells: int                                          # default cells per column (Engine(task_cells=…) overrides)
    reduce: Callable[..., Reduced]
    columns: Callable[..., list]
    note: Callable[..., str]


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
    # the task's words: "label" and "score" (what its label and prediction columns are called in messages);
    # the mapping form's "choice" (the task as a choice), "guessed" (what in a label column suggests it) and
    # "pages" (what the audit pages do with it)
    words: dict[str, str] = field(default_factory=dict)
    # recognise(frame, label) → how strongly the label column says this task (SURE … NO); None: never guessed
    recognise: Callable[..., float] | None = field(default=None, compare=False, repr=False)
    # guess_roles(frame, guess: fairviz.data.roles.ColumnGuess) → the task's ColumnMapping; None: the guess as is
    guess_roles: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    # validate(frame, mapping, source, file_fingerprint, weights, limits, converted) → Predictions or DataError
    validate: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    reduction: Reduction | None = field(default=None, compare=False, repr=False)   # None: rows only, no engine

    def metric(self, key: str) -> MetricSpec:
        for m in self.metrics:
            if m.key == key:
                return m
        raise KeyError(f"{self.title} has no metric {key!r} (metrics: {', '.join(m.key for m in self.metrics)})")

    def word(self, key: str, default: str = "") -> str:
        """One of the task's words (``words``), ``default`` when it has none."""
        return self.words.get(key, default)


# the task of a mapping that names none (a two-valued label and a score)
DEFAULT_TASK = "binary"

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
