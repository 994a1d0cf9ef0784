"""The data model every page and the CLI share: ``Predictions`` (validated labels, scores and group views),
``ColumnMapping`` (which column plays which role), ``GroupView``, ``Sample`` and ``DataError``.

The flow is: bytes or a path → ``fairviz.data.reading`` (a DataFrame, or a ``DataError`` naming why it could not be
read) → ``fairviz.data.roles`` (which column plays which role, for the user to confirm) →
``fairviz.data.validation`` (one message per problem; rows with missing values are dropped and counted, never lost
silently) → ``Predictions``.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from fairviz.data.limits import DEFAULT_LIMITS, GroupLimits
from fairviz.data.task_spec import DEFAULT_TASK, spec_of

INTERSECTION_SEP = " × "
# A slice as an attribute: "slice: sex=F ∧ age=18-25" (the slice search names it "sex=F ∧ age=18-25"), two groups:
# the slice's rows and the rest (fairviz.slices finds them; every page and the CLI audit one by its name).
SLICE_PREFIX = "slice: "
SLICE_AND = " ∧ "
IN_SLICE, REST = "in the slice", "the rest"


class DataError(ValueError):
    """Input that cannot be analysed. ``problems`` holds one plain sentence per problem."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))


class UnknownName(DataError, KeyError):
    """A model, class or group attribute the data do not have: bad input (a ``DataError`` naming it) and a failed
    look-up (a ``KeyError``) at once, so callers of either kind catch it."""

    __str__ = ValueError.__str__


class NotApplicable(DataError):
    """A check these data cannot answer because a role it reads was not mapped (top-label calibration without a
    confidence): the audit skips it with this reason, and the release gate, which fails on a section that failed,
    does not count it as one."""


@dataclass(frozen=True)
class ScoreColumn:
    """One model's score column and what its numbers mean (as ``ColumnMapping.score_scale`` / ``score_direction``).
    A model of classes (a ``per_class`` task) has, as ``ColumnMapping`` has, either ``class_scores`` (one probability
    column per class) or ``predicted`` (a predicted-class column, ``column`` its confidence, "" when it has none)."""

    column: str
    scale: str | None = None
    direction: str | None = None
    name: str | None = None          # the model's name on screen (None: the column's)
    class_scores: tuple[str, ...] = ()
    predicted: str | None = None

    @property
    def title(self) -> str:
        return self.name or self.column or self.predicted or "-".join(self.class_scores)

    def columns(self) -> tuple[str, ...]:
        """Every column the model reads: its class probabilities, or its predicted class and its confidence."""
        return tuple(c for c in (*self.class_scores, self.predicted, self.column) if c)

    def to_dict(self) -> dict:
        out = {"column": self.column, "name": self.title, "score_scale": self.scale,
               "score_direction": self.direction or "as-is", "direction_confirmed": self.direction is not None}
        if self.class_scores or self.predicted:          # a model of classes: its own columns
            out.update(class_scores=list(self.class_scores), predicted=self.predicted)
        return out


@dataclass(frozen=True)
class ColumnMapping:
    """Which column of the file plays which role."""

    label: str
    score: str
    groups: tuple[str, ...]
    positive_label: Any = None       # the label value that means Y = 1; None → guessed
    text: str | None = None
    features: tuple[str, ...] = ()
    row_id: str | None = None
    intersect: bool = False          # add the intersection of the first two group columns as an attribute
    # What the score's numbers mean (fairviz.data.scales): "probability", "percent" (÷ 100) or "logit" (logistic
    # function); None → guessed from the values, converted only when the guess is unambiguous.
    score_scale: str | None = None
    # Which way the score runs: None → the score is taken as the probability of the positive label and checked
    # (fairviz.data.checks: a score that runs the other way stops the audit); "as-is" → the user confirmed it as it
    # is (audited even when the check disagrees, which the notes say); "reversed" → 1 − p is that probability.
    score_direction: str | None = None
    # A guess's other columns that could be the score (several probability columns: several models); not part of
    # the mapping itself, so neither its JSON nor its repr (a cache key) carries it.
    candidate_scores: tuple[str, ...] = field(default=(), compare=False, repr=False)
    # Several models over the same rows (issue: several models on one screen): the other models' score columns.
    # The first model is (score, score_scale, score_direction), named ``model_name`` (None: the column's name).
    more_scores: tuple[ScoreColumn, ...] = ()
    model_name: str | None = None
    # The task (fairviz.data.tasks): "binary" (a two-valued label, ``score`` the probability of the positive one),
    # "regression" (``label`` a numeric target, ``score`` a numeric prediction, each of ``more_scores`` another
    # model's) or "multiclass" (``label`` with C classes and either ``class_scores``, one probability column per class
    # in the order of ``classes``, the label values they stand for, or ``predicted``, a predicted-class column, with
    # ``score`` its confidence, "" when there is none).
    task: str = DEFAULT_TASK
    class_scores: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()
    predicted: str | None = None
    normalise: bool = False          # multiclass: each row's class probabilities divided by their sum
    quantiles: tuple[str, ...] = ()  # regression: prediction-interval quantile columns (levels from their names)

    def models(self) -> tuple[ScoreColumn, ...]:
        """Every model, the first mapped first."""
        return (ScoreColumn(self.score, self.score_scale, self.score_direction, self.model_name, self.class_scores,
                            self.predicted), *self.more_scores)

    def for_model(self, model: ScoreColumn) -> "ColumnMapping":
        """This mapping with ``model`` as its only score (what a one-model audit of it reads)."""
        return replace(self, score=model.column, score_scale=model.scale, score_direction=model.direction,
                       model_name=model.name, more_scores=(), class_scores=model.class_scores,
                       predicted=model.predicted)

    def to_dict(self) -> dict:
        out = {"label": self.label, "score": self.score, "groups": list(self.groups),
               "positive_label": plain_value(self.positive_label), "text": self.text,
               "features": list(self.features), "row_id": self.row_id, "intersect": self.intersect,
               "score_scale": self.score_scale, "score_direction": self.score_direction or "as-is",
               "direction_confirmed": self.score_direction is not None}
        if self.more_scores or self.model_name:          # one-model mappings keep their JSON (and cache keys)
            out["models"] = [m.to_dict() for m in self.models()]
        if self.task != DEFAULT_TASK:                     # … and so do binary ones
            out.update(task=self.task, class_scores=list(self.class_scores), classes=list(self.classes),
                       predicted=self.predicted, normalise=self.normalise, quantiles=list(self.quantiles))
        return out


@dataclass(frozen=True)
class GroupView:
    """One sensitive attribute: a group code per row and the group names, ordered by size (largest first)."""

    attribute: str
    codes: np.ndarray           # int32, one per row, index into ``names``
    names: tuple[str, ...]
    weights: np.ndarray | None = field(default=None, repr=False, compare=False)   # rows per entry (weighted data)

    @property
    def sizes(self) -> np.ndarray:
        return weighted_bincount(self.codes, self.weights, len(self.names))

    def mask(self, name: str) -> np.ndarray:
        return self.codes == self.names.index(name)


@dataclass(frozen=True)
class Predictions:
    """Validated predictions and one or more group attributes. Binary (``task``): label y ∈ {0, 1}, score ∈ [0, 1]
    the probability of 1. Regression: y the numeric target, score the prediction ŷ. Multiclass: y the class codes
    0…C−1 (``classes`` names them), ``predicted`` the predicted class codes, score the top-label confidence (NaN when
    none was mapped) and ``class_scores`` the (entries × C) class probabilities when they were mapped.

    ``at(view)`` is the one way to a derived table (a model, a class one vs rest, both); ``groups(name)`` the one
    way to an attribute's groups (a column, an intersection 'a × b' or a slice). Both are built once, then kept."""

    y: np.ndarray                       # int8 (binary), float64 (regression), int32 class codes (multiclass)
    score: np.ndarray                   # float64
    attributes: dict[str, GroupView]    # attribute name → groups
    frame: pd.DataFrame                 # the kept rows, original columns (for hover, text, features, download)
    mapping: ColumnMapping
    source: str
    fingerprint: str                    # hash of the file's bytes + mapping: the cache key of every analysis
    notes: tuple[str, ...] = ()         # what validation changed (dropped rows, small groups), for display
    # what was derived from these predictions, built once: ("groups", name) → GroupView, ("model", title) and
    # ("class", name) → Predictions, ("rows",) → Predictions
    _derived: dict = field(default_factory=dict, repr=False, compare=False)
    # Weighted data (from fairviz.data.engine's sufficient statistics): entry k stands for weight[k] identical rows
    # (same groups, label and score). None: one entry per row.
    weight: np.ndarray | None = field(default=None, repr=False, compare=False)
    resolution: float = 0.0             # weighted data: 0 = exact scores, else the width of the score cells
    limits: GroupLimits = field(default=DEFAULT_LIMITS, compare=False)   # group-count caps (fairviz.data.limits)
    # Several models over the same rows: model title → its scores (multiclass: its confidence), aligned with the
    # entries (y, weight, groups); ``score`` is the active model's. Empty: one model. Only the joint predictions
    # hold it; a model's table (``at``) points back to them (``joint``).
    scores: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    model: str | None = None            # the active model's title (None: the first model)
    _joint: "Predictions | None" = field(default=None, repr=False, compare=False)
    task: str = DEFAULT_TASK
    classes: tuple[str, ...] = ()       # multiclass: the class names, code k → classes[k]
    predicted: np.ndarray | None = field(default=None, repr=False, compare=False)      # multiclass: int32 codes
    class_scores: np.ndarray | None = field(default=None, repr=False, compare=False)   # multiclass: (entries × C)
    quantiles: np.ndarray | None = field(default=None, repr=False, compare=False)      # regression: (entries × Q)
    quantile_levels: tuple[float, ...] = ()
    # A binned regression table (fairviz.data.engine): model title → (lo, hi, cells), the residual cells the engine
    # grouped by, which the knee search reads (fairviz.residuals.curves.residual_grid). Empty: none.
    residual_grids: dict = field(default_factory=dict, repr=False, compare=False)
    # Several models on classes (the task's spec is ``per_class``): model title → (its predicted class codes, its
    # (entries × C) class probabilities or None), aligned with the entries as ``scores`` is. Empty: one model.
    class_outputs: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n(self) -> int:
        """Rows represented (the sum of the weights for weighted data)."""
        return int(self.y.size) if self.weight is None else int(self.weight.sum())

    @property
    def weighted(self) -> bool:
        return self.weight is not None

    def rows(self) -> "Predictions":
        """One entry per row: weighted data expanded (``np.repeat``) for the analyses that need rows (knees on all
        points, D*, hover examples, Mann–Whitney). Built once, then kept; unweighted data is returned as is."""
        if self.weight is None:
            return self
        return self._kept(("rows",), self._expanded)

    def _expanded(self) -> "Predictions":
        w = self.weight
        repeat = lambda a: None if a is None else np.repeat(a, w, axis=0)   # noqa: E731
        attributes = {k: GroupView(v.attribute, np.repeat(v.codes, w), v.names) for k, v in self.attributes.items()}
        # the table's columns are the label, score and groups already held above: the rows' frame is only an
        # index (hover labels read "row k" of the expanded, cell-sorted order), so expansion costs no copies
        frame = pd.DataFrame(index=pd.RangeIndex(int(w.sum())))
        return Predictions(
            np.repeat(self.y, w), np.repeat(self.score, w), attributes, frame, self.mapping, self.source,
            self.fingerprint, self.notes, limits=self.limits,
            scores={k: np.repeat(v, w) for k, v in self.scores.items()}, model=self.model, task=self.task,
            classes=self.classes, predicted=repeat(self.predicted), class_scores=repeat(self.class_scores),
            quantiles=repeat(self.quantiles), quantile_levels=self.quantile_levels,
            residual_grids=self.residual_grids,
            class_outputs={k: (repeat(p), repeat(c)) for k, (p, c) in self.class_outputs.items()})

    def _kept(self, key: tuple, build):
        """What ``build()`` derives from these predictions, built once under ``key``, then kept."""
        if key not in self._derived:
            self._derived[key] = build()
        return self._derived[key]

    def with_note(self, note: str, resolution: float | None = None) -> "Predictions":
        return replace(self, notes=self.notes + (note,), _derived={},
                       resolution=self.resolution if resolution is None else resolution)

    # ------------------------------------------------------------------------------------------ views

    def at(self, view) -> "Predictions":
        """The table a ``fairviz.data.view.View`` audits: its class one vs rest (every model kept), then its model
        (None: the first). Read from the joint predictions (``joint``), so a model's or a class's table gives the
        same table for the same View; built once, then kept. A model, or class, the data lack is a ``DataError``
        naming it."""
        joint = self.joint()
        model = joint._model_title(getattr(view, "model", None))
        class_name = getattr(view, "class_name", None)
        table = joint if class_name is None else joint._kept(("class", class_name),
                                                             lambda: joint._one_vs_rest(class_name))
        return table._with_model(model)

    def _model_title(self, title: str | None) -> str:
        """``title`` checked against these data's models (None: the first)."""
        if title is None:
            return self.model_names[0]
        if title not in self.model_names:
            raise UnknownName(f"There is no model named '{title}' (models: {', '.join(self.model_names)}).")
        return title

    def _with_model(self, title: str) -> "Predictions":
        """The predictions of one model: its scores as ``score``. Weighted data is compressed to the model's own
        table (entries that share groups, label and this model's score merge; binned binary data: its score's cell),
        which is what a one-model reduction gives, so every audit costs what one model's does. A table of one model
        is that model's table (a class's, one vs rest, keeps the title of the model it was cut from)."""
        if not self.scores:
            return self
        return self._kept(("model", title), lambda: _model_view(self, title))

    def _one_vs_rest(self, name: str) -> "Predictions":
        """Predictions with classes read as binary ones for class ``name``: its rows are the positives and each
        model's probability of it its score (with only a predicted class: 1 where it was predicted, else 0), so
        every binary audit answers for that class; every model is kept."""
        spec = spec_of(self)
        if not spec.per_class:
            raise UnknownName(f"There is no class '{name}': {spec.title} predictions have no classes.")
        if name not in self.classes:
            raise UnknownName(f"There is no class '{name}' (classes: {', '.join(self.classes)}).")
        k = self.classes.index(name)
        outputs = self.class_outputs or {self.active_model: (self.predicted, self.class_scores)}
        scores = {title: (np.asarray(probabilities[:, k], dtype=float) if probabilities is not None else
                          (predicted == k).astype(float)) for title, (predicted, probabilities) in outputs.items()}
        by_probability = self.class_scores is not None
        column = self.mapping.class_scores[k] if by_probability else self.mapping.predicted
        mapping = replace(self.mapping, task=DEFAULT_TASK, score=column, positive_label=name, class_scores=(),
                          classes=(), predicted=None, score_scale="probability", score_direction="as-is")
        fingerprint = hashlib.blake2b(f"{self.fingerprint}|class={name}".encode(), digest_size=16).hexdigest()
        note = (f"One vs rest: class '{name}' is the positive label and every other class the negative; the score "
                + (f"is the probability of '{name}'." if by_probability else
                   f"is 1 where '{name}' was predicted, else 0 (no class probabilities were mapped)."))
        return replace(
            self, y=(self.y == k).astype(np.int8), score=next(iter(scores.values())), task=DEFAULT_TASK,
            classes=(), predicted=None, class_scores=None, mapping=mapping, fingerprint=fingerprint,
            notes=self.notes + (note,), scores=scores if self.class_outputs else {}, model=None, _joint=None,
            _derived={}, class_outputs={})

    # ------------------------------------------------------------------------------------------ several models

    def joint(self) -> "Predictions":
        """The predictions every model shares (the entries ``scores`` is aligned with): itself unless a view."""
        return self._joint if self._joint is not None else self

    @property
    def model_names(self) -> list[str]:
        """Every model's title, the first mapped first."""
        joint = self.joint()
        return list(joint.scores) if joint.scores else [self.mapping.models()[0].title]

    @property
    def active_model(self) -> str:
        return self.model or self.model_names[0]

    @property
    def several_models(self) -> bool:
        return len(self.model_names) > 1

    def with_added_model(self, title: str, scores: np.ndarray, note: str, predicted: np.ndarray | None = None,
                         class_scores: np.ndarray | None = None) -> "Predictions":
        """The joint predictions with one more model (a mitigation's output: recalibrated scores, adjusted
        decisions; another model's predictions), its ``scores`` aligned with these entries; ``note`` says how it
        was made. Predictions with classes take the model's ``predicted`` class codes and, when it has them, its
        ``class_scores`` (``scores`` is then its confidence)."""
        joint = self.joint()
        scores = np.asarray(scores, dtype=float)
        if scores.shape != joint.y.shape:
            raise ValueError(f"the new model's scores have {scores.size} entries, the data {joint.y.size}")
        spec = spec_of(joint)
        if not spec.per_class and not np.all(np.isfinite(scores)):
            raise DataError(f"The model '{title}' has missing or infinite scores; it was not added.")
        if spec.probability_scores and (scores.min() < 0 or scores.max() > 1):
            raise DataError(f"The model '{title}' has scores outside [0, 1]; it was not added.")
        existing = joint.scores or {joint.active_model: joint.score}
        if title in existing:
            raise DataError(f"A model named '{title}' is already loaded; choose another name.")
        outputs = {}
        if spec.per_class:
            if predicted is None:
                raise DataError(f"The model '{title}' has no predicted classes; it was not added.")
            outputs = {**(joint.class_outputs or {joint.active_model: (joint.predicted, joint.class_scores)}),
                       title: (np.asarray(predicted, dtype=np.int32),
                               None if class_scores is None else np.asarray(class_scores, dtype=float))}
        digest = hashlib.blake2b(scores.tobytes(), digest_size=8).hexdigest()
        return replace(joint, scores={**existing, title: scores}, notes=joint.notes + (note,), _derived={},
                       class_outputs=outputs,
                       fingerprint=hashlib.blake2b(f"{joint.fingerprint}|{title}|{digest}".encode(),
                                                   digest_size=16).hexdigest())

    # ------------------------------------------------------------------------------------------ groups

    @property
    def attribute_names(self) -> list[str]:
        return list(self.attributes)

    def groups(self, attribute: str | None = None) -> GroupView:
        """An attribute's groups: a column's, those of the intersection 'a × b' of two attributes, or a slice's
        ('slice: sex=F ∧ age=18-25', or as the slice search names it, 'sex=F ∧ age=18-25': the slice and the rest).
        Built once, then kept: every page and concept audits each kind the same way. A name that is none of them is
        a ``DataError`` naming it."""
        name = attribute or self.attribute_names[0]
        if name in self.attributes:
            return self.attributes[name]
        return self._kept(("groups", name), lambda: self._derived_groups(name))

    def _derived_groups(self, name: str) -> GroupView:
        parts = name.split(INTERSECTION_SEP)
        if len(parts) == 2 and all(p in self.attributes for p in parts):
            view = intersection_view(self.attributes[parts[0]], self.attributes[parts[1]], self.weight)
        else:
            values = slice_values(name, self.attributes)
            if values is None:
                raise UnknownName(f"There is no group attribute named '{name}' (attributes: "
                                  f"{', '.join(self.attribute_names)}).")
            view = slice_view(self.attributes, values, self.weight)
        problem = self.limits.too_many_groups(name, len(view.names))
        if problem:
            raise DataError(problem)
        return view

    def choices(self) -> list[str]:
        """Every grouping a page can audit: the attributes, then the intersection of each pair of them."""
        plain = [a for a in self.attribute_names if INTERSECTION_SEP not in a]
        pairs = [f"{a}{INTERSECTION_SEP}{b}" for i, a in enumerate(plain) for b in plain[i + 1:]]
        return self.attribute_names + [p for p in pairs if p not in self.attributes]

    def row_labels(self) -> np.ndarray:
        """A short label per row for hover text: the id column if mapped, else the row number in the file."""
        if self.mapping.row_id:
            return self.frame[self.mapping.row_id].astype(str).to_numpy()
        return np.array([f"row {i}" for i in self.frame.index])

    def texts(self) -> np.ndarray | None:
        return None if not self.mapping.text else self.frame[self.mapping.text].astype(str).to_numpy()

    def with_shuffled_groups(self, seed: int) -> "Predictions":
        """The same rows with every attribute's group labels permuted (sizes kept): the paper's null control."""
        if self.weight is not None:
            return self.rows().with_shuffled_groups(seed)
        rng = np.random.default_rng(seed)
        shuffled = {name: GroupView(view.attribute, rng.permutation(view.codes), view.names)
                    for name, view in self.attributes.items()}
        return replace(self, attributes=shuffled, fingerprint=f"{self.fingerprint}:shuffled{seed}",
                       notes=self.notes + (f"Group labels randomly permuted (seed {seed}): a null control.",),
                       _derived={}, _joint=None, scores={}, class_outputs={})

@dataclass(frozen=True)
class Sample:
    """A bundled dataset: a file in assets/ with its column mapping and a sensible default threshold."""

    key: str
    title: str
    file: str
    mapping: ColumnMapping
    threshold: float = 0.5
    description: str = ""
    provenance: str = ""
    extra: dict = field(default_factory=dict)
    benefit: str = "positive"           # which prediction helps a person: "negative" for COMPAS (low risk)
    words: dict = field(default_factory=dict)            # how the label and the decision read for people
    reference_groups: dict = field(default_factory=dict)  # attribute → the group others are compared with


def merged_cells(joint: Predictions, cells: int, threshold: float | None = None) -> Predictions:
    """``joint`` with its entries merged to ``cells`` equal cells of [0, 1] per model (scores that are not
    probabilities: of each model's own [min, max]; groups and label kept, whatever the label's values; each cell
    split at ``threshold`` when given), each model's score in a merged entry the mean of its rows' scores: sums of
    scores, and the counts on either side of ``threshold`` and of any threshold on a 1/``cells`` grid, are
    unchanged. What a comparison resamples when the entries are many."""
    joint = joint.joint()
    spec = spec_of(joint)
    if spec.per_class:
        raise ValueError("merged cells carry one score per model; merge a class's table (Predictions.at)")
    scores = joint.scores or {joint.active_model: joint.score}
    weight = np.ones(joint.y.size, np.int64) if joint.weight is None else joint.weight.astype(np.int64)
    keys = {f"a{k}": v.codes for k, v in enumerate(joint.attributes.values())}
    table = pd.DataFrame({**keys, "y": joint.y, "w": weight})
    for m, score in enumerate(scores.values()):
        lo, width = (0.0, 1.0) if spec.probability_scores else _score_range(score)
        cell = np.minimum(np.floor((score - lo) / width * cells), cells - 1)
        table[f"c{m}"] = cell if threshold is None else 2 * cell + (score >= threshold)
        table[f"s{m}"] = score * weight
    merged = table.groupby([*keys, "y", *(f"c{m}" for m in range(len(scores)))], sort=True, observed=True)[
        ["w", *(f"s{m}" for m in range(len(scores)))]].sum().reset_index()
    w = merged["w"].to_numpy(np.int64)
    merged_scores = {title: merged[f"s{m}"].to_numpy(float) / w for m, title in enumerate(scores)}
    attributes = {name: GroupView(v.attribute, merged[f"a{k}"].to_numpy(np.int32), v.names, w)
                  for k, (name, v) in enumerate(joint.attributes.items())}
    fingerprint = hashlib.blake2b(f"{joint.fingerprint}|cells={cells}|{threshold}".encode(),
                                  digest_size=16).hexdigest()
    return replace(joint, y=merged["y"].to_numpy(joint.y.dtype), score=next(iter(merged_scores.values())),
                   attributes=attributes, weight=w, frame=pd.DataFrame(index=pd.RangeIndex(w.size)),
                   scores=merged_scores if joint.scores else {}, resolution=max(joint.resolution, 1.0 / cells),
                   fingerprint=fingerprint, _derived={}, _joint=None)


def _score_range(score: np.ndarray) -> tuple[float, float]:
    """The lower end and width of ``score``'s range (width 1 when every score is the same)."""
    lo, hi = float(np.min(score)), float(np.max(score))
    return lo, (hi - lo) or 1.0


def _model_view(joint: Predictions, title: str) -> Predictions:
    """``joint`` with ``title``'s scores as the score; weighted entries merged per (groups, label, score). With
    classes, the model's predicted classes and class probabilities too, every entry kept (two entries with the
    same confidence may differ in every other class's probability)."""
    score = joint.scores[title]
    fingerprint = hashlib.blake2b(f"{joint.fingerprint}|model={title}".encode(), digest_size=16).hexdigest()
    view = dict(score=score, model=title, fingerprint=fingerprint, scores={}, _joint=joint, _derived={})
    if spec_of(joint).per_class:
        predicted, probabilities = joint.class_outputs[title]
        return replace(joint, **view, predicted=predicted, class_scores=probabilities, class_outputs={})
    if joint.weight is None:
        return replace(joint, **view)
    table, by = _model_table(joint, title)
    if _score_cells(joint):  # binned: this model's cells (its score's cell), each at the mean of its rows' scores
        merged = table.groupby(by, sort=True, observed=True)[["w", "sw"]].sum().reset_index()
        merged["s"] = merged["sw"] / merged["w"]
    else:       # sorted by groups, label and score (fairviz.calibration.recalibration._view_entries relies on it)
        merged = table.groupby(by, sort=True, observed=True)["w"].sum().reset_index()
    attributes = {name: GroupView(v.attribute, merged[f"a{k}"].to_numpy(np.int32), v.names,
                                  merged["w"].to_numpy(np.int64))
                  for k, (name, v) in enumerate(joint.attributes.items())}
    frame = pd.DataFrame({name: np.asarray(v.names, dtype=object)[attributes[name].codes]
                          for name, v in joint.attributes.items() if name in joint.frame.columns})
    view["score"] = merged["s"].to_numpy(float)
    # the label keeps the joint's type: a regression's target is a float, a multiclass's class codes int32
    return replace(joint, **view, y=merged["y"].to_numpy(joint.y.dtype), attributes=attributes,
                   weight=merged["w"].to_numpy(np.int64), frame=frame)


def _model_table(joint: Predictions, title: str) -> tuple[pd.DataFrame, list[str]]:
    """The joint entries as a table and the columns a model's view merges them by (groups, label, and the model's
    score, or its score's cell for binned binary data)."""
    score = joint.scores[title]
    keys = {f"a{k}": v.codes for k, v in enumerate(joint.attributes.values())}
    table = pd.DataFrame({**keys, "y": joint.y, "s": score, "w": joint.weight})
    if _score_cells(joint):
        table["cell"] = np.floor(score * round(1 / joint.resolution))
        table["sw"] = score * joint.weight
        return table, [*keys, "y", "cell"]
    return table, [*keys, "y", "s"]


def _score_cells(joint: Predictions) -> bool:
    """Whether a model's view merges the joint entries by its score's cell of [0, 1]: binned probabilities only. A
    binned regression's cells are fractions of each column's own range, not of [0, 1] (cells of [0, 1] would put a
    rate below 1e-3 in 100 cells at most): its view merges only entries with equal (groups, y, ŷ), so it loses
    nothing the joint table kept."""
    return bool(joint.resolution) and spec_of(joint).probability_scores


def model_entry_index(joint: Predictions, title: str) -> np.ndarray:
    """For each of ``joint``'s entries, the index of the entry of its model's table (``joint.at(View(model=
    title))``) it is merged into."""
    joint = joint.joint()
    if joint.weight is None or not joint.scores or spec_of(joint).per_class:
        return np.arange(joint.y.size)
    table, by = _model_table(joint, title)
    return table.groupby(by, sort=True, observed=True).ngroup().to_numpy()


def intersection_view(a: GroupView, b: GroupView, weights: np.ndarray | None = None) -> GroupView:
    """Groups of rows sharing a value of ``a`` and of ``b`` (empty combinations left out), largest first."""
    combined = a.codes.astype(np.int64) * len(b.names) + b.codes
    present, codes = np.unique(combined, return_inverse=True)
    names = np.array([f"{a.names[c // len(b.names)]}{INTERSECTION_SEP}{b.names[c % len(b.names)]}" for c in present])
    sizes = weighted_bincount(codes, weights, present.size)
    order = np.lexsort((names, -sizes))
    remap = np.empty_like(order)
    remap[order] = np.arange(order.size)
    return GroupView(f"{a.attribute}{INTERSECTION_SEP}{b.attribute}", remap[codes].astype(np.int32),
                     tuple(str(n) for n in names[order]), weights)


def slice_name(values: dict) -> str:
    """The attribute name of the slice ``values`` (attribute → value): 'slice: sex=F ∧ age=18-25'."""
    return SLICE_PREFIX + SLICE_AND.join(f"{a}={v}" for a, v in values.items())


def slice_values(name: str, attributes: dict) -> dict[str, str] | None:
    """The slice ``name`` names (attribute → value), written as an attribute ('slice: sex=F ∧ age=18-25') or as
    the slice search names it ('sex=F ∧ age=18-25'); None when ``name`` is not a slice of ``attributes`` (a value
    may hold '=': each part is split after the longest attribute name it starts with)."""
    body = name[len(SLICE_PREFIX):] if name.startswith(SLICE_PREFIX) else name
    values = {}
    for part in body.split(SLICE_AND):
        known = [a for a in attributes if part.startswith(f"{a}=") and INTERSECTION_SEP not in a]
        if not known:
            return None
        attribute = max(known, key=len)
        values[attribute] = part[len(attribute) + 1:]
    return values


def slice_view(attributes: dict, values: dict, weights: np.ndarray | None = None) -> GroupView:
    """The attribute "this slice vs the rest": two groups, the rows with every value of ``values`` (attribute →
    value) and the rest, the larger first (as every attribute orders its groups)."""
    inside = np.ones(len(next(iter(attributes.values())).codes), bool)
    for attribute, value in values.items():
        view = attributes[attribute]
        if value not in view.names:
            raise UnknownName(f"'{value}' is not a group of '{attribute}'.")
        inside &= view.mask(value)
    weight = np.ones(len(inside)) if weights is None else np.asarray(weights, float)
    names = (IN_SLICE, REST) if weight[inside].sum() >= weight[~inside].sum() else (REST, IN_SLICE)
    codes = np.where(inside, names.index(IN_SLICE), names.index(REST)).astype(np.int32)
    name = slice_name(values)
    return GroupView(name, codes, names, weights)


def slice_attribute(pred: Predictions, values: dict) -> tuple[str, GroupView]:
    """The slice ``values`` (attribute → value) of ``pred``'s entries as an attribute: its name and groups."""
    name = slice_name(values)
    return name, pred.groups(name)


def weighted_bincount(codes: np.ndarray, weights: np.ndarray | None, length: int) -> np.ndarray:
    """Rows per code (weighted data: the sum of the weights per code)."""
    if weights is None:
        return np.bincount(codes, minlength=length)
    return np.bincount(codes, weights=weights, minlength=length).astype(np.int64)


def plain_value(value: Any) -> Any:
    """numpy scalars → Python scalars, so values print and serialise plainly."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
