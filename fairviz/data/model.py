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

INTERSECTION_SEP = " × "


class DataError(ValueError):
    """Input that cannot be analysed. ``problems`` holds one plain sentence per problem."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))


class NotApplicable(DataError):
    """A check these data cannot answer because a role it reads was not mapped (top-label calibration without a
    confidence): the audit skips it with this reason, and the release gate, which fails on a section that failed,
    does not count it as one."""


@dataclass(frozen=True)
class ScoreColumn:
    """One model's score column and what its numbers mean (as ``ColumnMapping.score_scale`` / ``score_direction``)."""

    column: str
    scale: str | None = None
    direction: str | None = None
    name: str | None = None          # the model's name on screen (None: the column's)

    @property
    def title(self) -> str:
        return self.name or self.column

    def to_dict(self) -> dict:
        return {"column": self.column, "name": self.title, "score_scale": self.scale,
                "score_direction": self.direction or "as-is", "direction_confirmed": self.direction is not None}


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
    task: str = "binary"
    class_scores: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()
    predicted: str | None = None
    normalise: bool = False          # multiclass: each row's class probabilities divided by their sum
    quantiles: tuple[str, ...] = ()  # regression: prediction-interval quantile columns (levels from their names)

    def models(self) -> tuple[ScoreColumn, ...]:
        """Every model, the first mapped first."""
        return (ScoreColumn(self.score, self.score_scale, self.score_direction, self.model_name), *self.more_scores)

    def for_model(self, model: ScoreColumn) -> "ColumnMapping":
        """This mapping with ``model`` as its only score (what a one-model audit of it reads)."""
        return replace(self, score=model.column, score_scale=model.scale, score_direction=model.direction,
                       model_name=model.name, more_scores=())

    def to_dict(self) -> dict:
        out = {"label": self.label, "score": self.score, "groups": list(self.groups),
               "positive_label": plain_value(self.positive_label), "text": self.text,
               "features": list(self.features), "row_id": self.row_id, "intersect": self.intersect,
               "score_scale": self.score_scale, "score_direction": self.score_direction or "as-is",
               "direction_confirmed": self.score_direction is not None}
        if self.more_scores or self.model_name:          # one-model mappings keep their JSON (and cache keys)
            out["models"] = [m.to_dict() for m in self.models()]
        if self.task != "binary":                        # … and so do binary ones
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
    none was mapped) and ``class_scores`` the (entries × C) class probabilities when they were mapped."""

    y: np.ndarray                       # int8 (binary), float64 (regression), int32 class codes (multiclass)
    score: np.ndarray                   # float64
    attributes: dict[str, GroupView]    # attribute name → groups
    frame: pd.DataFrame                 # the kept rows, original columns (for hover, text, features, download)
    mapping: ColumnMapping
    source: str
    fingerprint: str                    # hash of the file's bytes + mapping: the cache key of every analysis
    notes: tuple[str, ...] = ()         # what validation changed (dropped rows, small groups), for display
    _intersections: dict = field(default_factory=dict, repr=False, compare=False)   # 'a × b' → GroupView, built once
    # Weighted data (from fairviz.data.engine's sufficient statistics): entry k stands for weight[k] identical rows
    # (same groups, label and score). None: one entry per row.
    weight: np.ndarray | None = field(default=None, repr=False, compare=False)
    resolution: float = 0.0             # weighted data: 0 = exact scores, else the width of the score cells
    limits: GroupLimits = field(default=DEFAULT_LIMITS, compare=False)   # group-count caps (fairviz.data.limits)
    # Several models over the same rows: model title → its probabilities, aligned with the entries (y, weight,
    # groups); ``score`` is the active model's. Empty: one model. Only the joint predictions hold it; a
    # ``with_model`` view points back to them (``joint``).
    scores: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    model: str | None = None            # the active model's title (None: the first model)
    _joint: "Predictions | None" = field(default=None, repr=False, compare=False)
    task: str = "binary"
    classes: tuple[str, ...] = ()       # multiclass: the class names, code k → classes[k]
    predicted: np.ndarray | None = field(default=None, repr=False, compare=False)      # multiclass: int32 codes
    class_scores: np.ndarray | None = field(default=None, repr=False, compare=False)   # multiclass: (entries × C)
    quantiles: np.ndarray | None = field(default=None, repr=False, compare=False)      # regression: (entries × Q)
    quantile_levels: tuple[float, ...] = ()
    # A binned regression table (fairviz.data.engine): model title → (lo, hi, cells), the residual cells the engine
    # grouped by, which the knee search reads (fairviz.residuals.curves.residual_grid). Empty: none.
    residual_grids: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def binary(self) -> bool:
        return self.task == "binary"

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
        if "__rows__" not in self._intersections:
            w = self.weight
            attributes = {k: GroupView(v.attribute, np.repeat(v.codes, w), v.names) for k, v in self.attributes.items()}
            # the table's columns are the label, score and groups already held above: the rows' frame is only an
            # index (hover labels read "row k" of the expanded, cell-sorted order), so expansion costs no copies
            frame = pd.DataFrame(index=pd.RangeIndex(int(w.sum())))
            self._intersections["__rows__"] = Predictions(
                np.repeat(self.y, w), np.repeat(self.score, w), attributes, frame, self.mapping, self.source,
                self.fingerprint, self.notes, limits=self.limits,
                scores={k: np.repeat(v, w) for k, v in self.scores.items()}, model=self.model, task=self.task,
                classes=self.classes, predicted=None if self.predicted is None else np.repeat(self.predicted, w),
                class_scores=None if self.class_scores is None else np.repeat(self.class_scores, w, axis=0),
                quantiles=None if self.quantiles is None else np.repeat(self.quantiles, w, axis=0),
                quantile_levels=self.quantile_levels, residual_grids=self.residual_grids)
        return self._intersections["__rows__"]

    def with_note(self, note: str, resolution: float | None = None) -> "Predictions":
        return replace(self, notes=self.notes + (note,), _intersections={},
                       resolution=self.resolution if resolution is None else resolution)

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

    def with_model(self, title: str) -> "Predictions":
        """The predictions of one model: its scores as ``score``. Weighted data is compressed to the model's own
        table (entries that share groups, label and this model's score merge; binned binary data: its score's cell),
        which is what a one-model reduction gives, so every audit costs what one model's does. Built once, then
        kept."""
        joint = self.joint()
        if not joint.scores:
            if title != self.active_model:
                raise KeyError(f"unknown model {title!r} (models: {', '.join(self.model_names)})")
            return self
        if title not in joint.scores:
            raise KeyError(f"unknown model {title!r} (models: {', '.join(joint.scores)})")
        key = f"__model__{title}"
        if key not in joint._intersections:
            joint._intersections[key] = _model_view(joint, title)
        return joint._intersections[key]

    def with_added_model(self, title: str, scores: np.ndarray, note: str) -> "Predictions":
        """The joint predictions with one more model (a mitigation's output: recalibrated scores, adjusted
        decisions), its ``scores`` aligned with these entries; ``note`` says how it was made."""
        joint = self.joint()
        scores = np.asarray(scores, dtype=float)
        if scores.shape != joint.y.shape:
            raise ValueError(f"the new model's scores have {scores.size} entries, the data {joint.y.size}")
        if not np.all(np.isfinite(scores)):
            raise DataError(f"The model '{title}' has missing or infinite scores; it was not added.")
        if joint.binary and (scores.min() < 0 or scores.max() > 1):
            raise DataError(f"The model '{title}' has scores outside [0, 1]; it was not added.")
        existing = joint.scores or {joint.active_model: joint.score}
        if title in existing:
            raise DataError(f"A model named '{title}' is already loaded; choose another name.")
        digest = hashlib.blake2b(scores.tobytes(), digest_size=8).hexdigest()
        return replace(joint, scores={**existing, title: scores}, notes=joint.notes + (note,), _intersections={},
                       fingerprint=hashlib.blake2b(f"{joint.fingerprint}|{title}|{digest}".encode(),
                                                   digest_size=16).hexdigest())

    # ------------------------------------------------------------------------------------------ multiclass

    def one_vs_rest(self, name: str) -> "Predictions":
        """Multiclass predictions read as binary ones for class ``name``: its rows are the positives and its
        probability the score (with only a predicted class: 1 where it was predicted, else 0), so every binary audit
        answers for that class. Built once, then kept."""
        if self.task != "multiclass":
            raise ValueError("one_vs_rest needs multiclass predictions")
        if name not in self.classes:
            raise DataError(f"There is no class '{name}' (classes: {', '.join(self.classes)}).")
        key = f"__class__{name}"
        if key not in self._intersections:
            k = self.classes.index(name)
            by_probability = self.class_scores is not None
            score = self.class_scores[:, k] if by_probability else (self.predicted == k).astype(float)
            column = self.mapping.class_scores[k] if by_probability else self.mapping.predicted
            mapping = replace(self.mapping, task="binary", score=column, positive_label=name, class_scores=(),
                              classes=(), predicted=None, score_scale="probability", score_direction="as-is")
            fingerprint = hashlib.blake2b(f"{self.fingerprint}|class={name}".encode(), digest_size=16).hexdigest()
            note = (f"One vs rest: class '{name}' is the positive label and every other class the negative; the score "
                    + (f"is the probability of '{name}'." if by_probability else
                       f"is 1 where '{name}' was predicted, else 0 (no class probabilities were mapped)."))
            self._intersections[key] = replace(
                self, y=(self.y == k).astype(np.int8), score=np.asarray(score, dtype=float), task="binary",
                classes=(), predicted=None, class_scores=None, mapping=mapping, fingerprint=fingerprint,
                notes=self.notes + (note,), scores={}, model=None, _joint=None, _intersections={})
        return self._intersections[key]

    @property
    def attribute_names(self) -> list[str]:
        return list(self.attributes)

    def groups(self, attribute: str | None = None) -> GroupView:
        """An attribute's groups, or those of the intersection 'a × b' of two attributes (built once, then kept):
        every page and concept can audit intersections the same way."""
        name = attribute or self.attribute_names[0]
        if name in self.attributes:
            return self.attributes[name]
        if name not in self._intersections:
            parts = name.split(INTERSECTION_SEP)
            if len(parts) != 2 or not all(p in self.attributes for p in parts):
                raise KeyError(f"unknown group attribute {name!r}")
            view = intersection_view(self.attributes[parts[0]], self.attributes[parts[1]], self.weight)
            problem = self.limits.too_many_groups(name, len(view.names))
            if problem:
                raise DataError(problem)
            self._intersections[name] = view
        return self._intersections[name]

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
                       _intersections={}, _joint=None, scores={})


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
    """``joint`` with its entries merged to ``cells`` equal cells of [0, 1] per model (groups and label kept; each
    cell split at ``threshold`` when given), each model's score in a merged entry the mean of its rows' scores: sums
    of scores, and the counts on either side of ``threshold`` and of any threshold on a 1/``cells`` grid, are
    unchanged. What a comparison resamples when the entries are many."""
    joint = joint.joint()
    scores = joint.scores or {joint.active_model: joint.score}
    weight = np.ones(joint.y.size, np.int64) if joint.weight is None else joint.weight.astype(np.int64)
    keys = {f"a{k}": v.codes for k, v in enumerate(joint.attributes.values())}
    table = pd.DataFrame({**keys, "y": joint.y, "w": weight})
    for m, score in enumerate(scores.values()):
        cell = np.minimum(np.floor(score * cells), cells - 1)
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
                   fingerprint=fingerprint, _intersections={}, _joint=None)


def _model_view(joint: Predictions, title: str) -> Predictions:
    """``joint`` with ``title``'s scores as the score; weighted entries merged per (groups, label, score)."""
    score = joint.scores[title]
    fingerprint = hashlib.blake2b(f"{joint.fingerprint}|model={title}".encode(), digest_size=16).hexdigest()
    view = dict(score=score, model=title, fingerprint=fingerprint, scores={}, _joint=joint, _intersections={})
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
    """Whether a model's view merges the joint entries by its score's cell of [0, 1]: binned binary data only. A
    binned regression's cells are fractions of each column's own range, not of [0, 1] (cells of [0, 1] would put a
    rate below 1e-3 in 100 cells at most): its view merges only entries with equal (groups, y, ŷ), so it loses
    nothing the joint table kept."""
    return bool(joint.resolution) and joint.binary


def model_entry_index(joint: Predictions, title: str) -> np.ndarray:
    """For each of ``joint``'s entries, the index of the entry of ``joint.with_model(title)`` it is merged into."""
    joint = joint.joint()
    if joint.weight is None or not joint.scores:
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
